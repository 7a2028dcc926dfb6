package extract

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/docs"
)

// ocrPDFPages OCRs the PDF pages at indexes ocr, up to OCRWorkers at once,
// each within PageTimeout. The first failure stops the others; its error
// names the page.
func (x *extraction) ocrPDFPages(ctx context.Context, info pdfInfo, ocr, dpis []int) error {
	if len(ocr) == 0 {
		return nil
	}
	start := time.Now()
	defer func() { x.doc.Timings.OCR += time.Since(start) }()
	if err := x.chooseLanguagePDF(ctx, info, ocr[0], dpis[ocr[0]]); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	sem := make(chan struct{}, x.o.OCRWorkers)
	for _, i := range ocr {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := x.ocrPDFPage(ctx, i, info.sizes[i], dpis[i]); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// ocrPDFPage renders and reads page i+1 within PageTimeout.
func (x *extraction) ocrPDFPage(ctx context.Context, i int, s pageSize, dpi int) error {
	return x.withinPageTimeout(ctx, i+1, func(ctx context.Context) error {
		img, err := renderPDFPage(ctx, x.in.path, i+1, s, dpi, x.o)
		if err != nil {
			return err
		}
		p, err := ocrGray(ctx, img, float64(dpi), i+1, x.tmp, x.o)
		if err != nil {
			return err
		}
		x.doc.Pages[i] = p
		return nil
	})
}

// withinPageTimeout runs one page's OCR under PageTimeout and records its
// duration; a page that runs out of time is a timeout naming the page and
// the flag that raises its limit.
func (x *extraction) withinPageTimeout(ctx context.Context, n int, fn func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return interrupted(err, fmt.Sprintf("page %d", n))
	}
	pctx, cancel := context.WithTimeout(ctx, x.o.PageTimeout)
	defer cancel()
	began := time.Now()
	err := fn(pctx)
	x.recordPage(n, time.Since(began))
	if err != nil && ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
		what := "tesseract"
		if x.o.Emulated {
			what = "tesseract under CPU emulation"
		}
		return docs.Errorf(docs.CodeTimeout, "OCR of page %d ran past its limit of %v (%s); raise it with --page-timeout",
			n, x.o.PageTimeout, what)
	}
	return err
}

// recordPage notes how long page n's OCR took (safe from many workers).
func (x *extraction) recordPage(n int, d time.Duration) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for len(x.doc.PageOCR) < n {
		x.doc.PageOCR = append(x.doc.PageOCR, 0)
	}
	x.doc.PageOCR[n-1] = d
}

// chooseLanguagePDF settles OCRLang from OCRLangChoice on the first page
// to OCR (see Options.OCRLangChoice).
func (x *extraction) chooseLanguagePDF(ctx context.Context, info pdfInfo, i, dpi int) error {
	if len(x.o.OCRLangChoice) < 2 {
		return nil
	}
	return x.withinPageTimeout(ctx, i+1, func(ctx context.Context) error {
		img, err := renderPDFPage(ctx, x.in.path, i+1, info.sizes[i], dpi, x.o)
		if err != nil {
			return err
		}
		return x.chooseLanguage(ctx, img, float64(dpi), i+1)
	})
}

// chooseLanguage reads a band across the middle of img (a third of its
// height, where body text usually is) with the first candidate model and
// keeps the candidate whose words it shows, or all of them joined.
func (x *extraction) chooseLanguage(ctx context.Context, img *image.Gray, dpi float64, n int) error {
	if len(x.o.OCRLangChoice) < 2 {
		return nil
	}
	started := time.Now()
	defer func() { x.doc.Timings.LangDetect += time.Since(started) }()
	b := img.Bounds()
	band := img.SubImage(image.Rect(b.Min.X, b.Min.Y+b.Dy()/3, b.Max.X, b.Min.Y+2*b.Dy()/3)).(*image.Gray)
	file := filepath.Join(x.tmp, fmt.Sprintf("page-%d-lang.pgm", n))
	if err := writePGM(file, band); err != nil {
		return err
	}
	defer os.Remove(file)
	o := x.o
	o.OCRLang = x.o.OCRLangChoice[0]
	p, err := tesseract(ctx, file, dpi, n, "3", o)
	if err != nil {
		return err
	}
	x.o.OCRLang = pickLanguage(p.Text(), x.o.OCRLangChoice)
	x.doc.OCRLang = x.o.OCRLang
	return nil
}

// langWords are short, frequent words of each tesseract model's language
// (function words, and terms of invoices and contracts), lower-case and
// without accents, as an English model reads them.
var langWords = map[string][]string{
	"eng": {"the", "and", "of", "to", "for", "with", "this", "that", "invoice", "total", "amount", "date", "due", "payment", "please", "agreement", "shall", "party"},
	"deu": {"der", "die", "das", "und", "mit", "von", "fur", "nicht", "rechnung", "betrag", "datum", "gesamt", "zahlung", "bitte", "vertrag", "wird", "ist", "auf"},
	"fra": {"le", "la", "les", "et", "des", "pour", "avec", "une", "facture", "montant", "paiement", "total", "contrat", "sera", "est", "sur", "par", "du"},
	"nld": {"het", "een", "en", "van", "voor", "met", "niet", "factuur", "bedrag", "datum", "totaal", "betaling", "overeenkomst", "wordt", "is", "op", "aan", "bij"},
	"spa": {"el", "la", "los", "las", "y", "para", "con", "una", "factura", "importe", "pago", "total", "contrato", "sera", "es", "por", "del", "en"},
	"ita": {"il", "la", "le", "e", "per", "con", "una", "fattura", "importo", "pagamento", "totale", "contratto", "sara", "del", "della", "di", "che", "non"},
}

// pickLanguage is the candidate whose words text shows most, ahead of the
// next by a clear margin; otherwise every candidate joined with '+'
// (tesseract then tries each on every line: slower, never worse).
func pickLanguage(text string, candidates []string) string {
	seen := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 0xc0)
	}) {
		seen[foldAccents(w)]++
	}
	best, second, choice := 0, 0, ""
	for _, c := range candidates {
		score := 0
		for _, w := range langWords[c] {
			score += min(seen[w], 3) // one repeated word is not a language
		}
		switch {
		case score > best:
			best, second, choice = score, best, c
		case score > second:
			second = score
		}
	}
	if choice == "" || best < 4 || best < 2*second {
		return strings.Join(candidates, "+")
	}
	return choice
}

// foldAccents maps the accented letters of the candidate languages to
// their base letter (ü -> u, é -> e), as the word lists are written.
func foldAccents(w string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case 'à', 'á', 'â', 'ä':
			return 'a'
		case 'è', 'é', 'ê', 'ë':
			return 'e'
		case 'ì', 'í', 'î', 'ï':
			return 'i'
		case 'ò', 'ó', 'ô', 'ö':
			return 'o'
		case 'ù', 'ú', 'û', 'ü':
			return 'u'
		case 'ç':
			return 'c'
		}
		return r
	}, w)
}
