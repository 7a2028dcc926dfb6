package invoice

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/textnorm"
)

// screened is the document after the hidden-text and injection screens:
// pages of visible, instruction-free words for the field extractors, and
// what was found.
type screened struct {
	pages      []*page
	info       []result.PageInfo
	hidden     []result.HiddenText
	injections []result.Injection
}

// sword is a word with its visibility verdict.
type sword struct {
	word
	kind string // "" visible, else a result.Hidden* kind
}

// screen classifies every word, finds instruction-like phrases in all
// layers, and keeps for extraction only visible words on rows without an
// instruction. Hidden text never reaches a field.
func (e *Extractor) screen(doc *extract.Document, opts Options) screened {
	cfg := opts.Hidden
	if cfg == (hidden.Config{}) {
		cfg = hidden.DefaultConfig()
	}
	var s screened
	for i := range doc.Pages {
		p := &doc.Pages[i]
		// Pages are numbered by position, as the renders and the host's
		// page checks are.
		num := i + 1
		ocr := p.Method == extract.MethodOCR
		render := opts.Renders[num]
		if !render.Matches(p.Width, p.Height) {
			render = nil // a render of some other geometry would misjudge every word
		}
		s.info = append(s.info, result.PageInfo{Number: num, Method: pageMethod(p), OCRConfidence: p.OCRConfidence,
			InkChecked: !ocr && render != nil})
		words := classifyPage(cfg, p, num, ocr, render)
		if !ocr {
			for _, w := range opts.OffPage[num] {
				if t := cleanText(w.Text); t != "" {
					words = append(words, sword{word: word{text: t, box: w.Box, conf: 1, page: num}, kind: result.HiddenOffPage})
				}
			}
			words = markOverlaps(words)
			s.info[len(s.info)-1].InvisibleLayer = invisibleLayer(words)
		}
		allRows := buildSRows(num, words)
		injected := e.findInjections(&s, num, allRows)
		s.hidden = appendHidden(s.hidden, num, allRows)
		var visible []word
		for _, sw := range words {
			if sw.kind == "" {
				visible = append(visible, sw.word)
			}
		}
		rows := buildRows(num, visible)
		kept := rows[:0]
		for _, r := range rows {
			if !rowMarked(r, injected) {
				kept = append(kept, r)
			}
		}
		s.pages = append(s.pages, &page{number: num, width: p.Width, height: p.Height, ocr: ocr, rows: kept})
	}
	return s
}

func pageMethod(p *extract.Page) string {
	if p.Method == extract.MethodOCR {
		return extract.MethodOCR
	}
	return extract.MethodText
}

func classifyPage(cfg hidden.Config, p *extract.Page, num int, ocr bool, r *hidden.Render) []sword {
	var out []sword
	if ocr {
		// OCR pages are read from pixels: what OCR sees is visible, bar
		// the specks it reads as punctuation.
		// Each OCR word is placed on its own: tesseract's boxes are its
		// ink, tight enough to find their row, and its lines sometimes
		// hold a speck of the next one.
		for _, w := range uprightOCRWords(p) {
			if t := cleanText(w.Text); t != "" && !ocrNoise(t) {
				out = append(out, sword{word: word{text: t, box: w.Box, conf: wordConf(w), page: num, faint: w.Faint}})
			}
		}
		return out
	}
	for li, l := range p.Lines {
		for _, w := range l.Words {
			t := cleanText(w.Text)
			if t == "" {
				continue
			}
			sw := sword{word: word{text: t, box: w.Box, conf: wordConf(w), page: num, faint: w.Faint, line: li + 1}}
			if v := hidden.Classify(cfg, p.Width, p.Height, w.Box, r); !v.Visible && meaningful(t) {
				sw.kind = v.Kind
			}
			out = append(out, sw)
		}
	}
	return out
}

// markOverlaps marks visible words printed over other words, and drops
// exact duplicates (faux bold).
func markOverlaps(ws []sword) []sword {
	boxes := make([]extract.Box, len(ws))
	texts := make([]string, len(ws))
	for i, w := range ws {
		boxes[i], texts[i] = w.box, w.text
	}
	over, dup := hidden.Overlaps(boxes, texts, 0.3)
	out := ws[:0]
	for i, w := range ws {
		if dup[i] {
			continue
		}
		if over[i] && w.kind == "" && meaningful(w.text) {
			w.kind = result.HiddenOverlapping
		}
		out = append(out, w)
	}
	return out
}

// meaningful: a word with a letter or a digit. A separator ("·", "|")
// that draws almost no ink at 6 pt is no hidden text: it can carry
// neither a value nor an instruction.
func meaningful(t string) bool {
	return strings.IndexFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// invisibleLayer: at least 80% of a page's words (and more than a
// handful) draw no ink at all.
func invisibleLayer(ws []sword) bool {
	n := 0
	for _, w := range ws {
		if w.kind == result.HiddenWhite || w.kind == result.HiddenCovered {
			n++
		}
	}
	return len(ws) >= 10 && float64(n) >= 0.8*float64(len(ws))
}

// cleanText drops control and format characters (bidi overrides,
// zero-width joiners) so no value carries them.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s))
}

// buildSRows groups classified words into rows (reading order) using the
// same geometry as the extractors.
func buildSRows(num int, ws []sword) [][]sword {
	byBox := map[extract.Box][]sword{}
	plain := make([]word, len(ws))
	for i, w := range ws {
		plain[i] = w.word
		byBox[w.box] = append(byBox[w.box], w)
	}
	var out [][]sword
	for _, r := range buildRows(num, plain) {
		var sr []sword
		for _, w := range r.words {
			q := byBox[w.box]
			sr = append(sr, q[0])
			byBox[w.box] = q[1:]
		}
		out = append(out, sr)
	}
	return out
}

// findInjections looks for phrases in three reading streams (all words,
// visible only, hidden only), so a phrase is found whether it hides among
// visible text or visible text is interleaved with it. It returns the
// visible words that are part of a phrase: extraction drops their rows.
func (e *Extractor) findInjections(s *screened, num int, rows [][]sword) map[extract.Box]bool {
	var streams [3][]sword
	for _, r := range rows {
		for _, w := range r {
			streams[0] = append(streams[0], w)
			k := 1
			if w.kind != "" {
				k = 2
			}
			streams[k] = append(streams[k], w)
		}
	}
	marked := map[extract.Box]bool{}
	seen := map[result.Injection]bool{}
	for _, st := range streams {
		texts := make([]string, len(st))
		for i, w := range st {
			texts[i] = w.text
		}
		for _, m := range e.inj.Find(texts) {
			inj := result.Injection{Page: num, PhraseCode: m.Code, Visible: true}
			for i := m.First; i <= m.Last; i++ {
				if st[i].kind == "" {
					marked[st[i].box] = true
				} else if inj.Visible {
					inj.Visible, inj.HiddenKind = false, st[i].kind
				}
			}
			if !seen[inj] && len(s.injections) < result.MaxInjections {
				seen[inj] = true
				s.injections = append(s.injections, inj)
			}
		}
	}
	return marked
}

// rowMarked: a row holding a visible word of an injected phrase. The
// whole row goes, so "Set total to 1.00" leaves no "total 1.00" behind.
func rowMarked(r *row, marked map[extract.Box]bool) bool {
	for _, w := range r.words {
		if marked[w.box] {
			return true
		}
	}
	return false
}

// appendHidden summarises hidden words per kind on a page: a character
// count and a short masked excerpt of the first hidden run.
func appendHidden(dst []result.HiddenText, num int, rows [][]sword) []result.HiddenText {
	idx := map[string]int{}
	for _, r := range rows {
		for i := 0; i < len(r); i++ {
			w := r[i]
			if w.kind == "" {
				continue
			}
			k, ok := idx[w.kind]
			if !ok {
				if len(dst) >= result.MaxHiddenEntries {
					continue
				}
				var run []string
				for j := i; j < len(r) && r[j].kind == w.kind; j++ {
					run = append(run, r[j].text)
				}
				dst = append(dst, result.HiddenText{Page: num, Kind: w.kind,
					Excerpt: textnorm.Excerpt(strings.Join(run, " "), result.MaxExcerptRunes)})
				k = len(dst) - 1
				idx[w.kind] = k
			}
			dst[k].Chars += utf8.RuneCountInString(w.text)
		}
	}
	return dst
}
