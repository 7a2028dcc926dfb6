package extract

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// maxTSVOutput caps tesseract's TSV for one page (a dense page is ~200 KB).
const maxTSVOutput = 32 << 20

// pageDPI picks the resolution for rasterising page n of size s: the
// configured DPI, lowered until the page fits MaxPixelsPerPage, refused
// when that would go below MinDPI (the text would be too small to read).
func pageDPI(n int, s pageSize, o Options) (int, error) {
	pixels := func(dpi int) float64 {
		return math.Ceil(s.w*float64(dpi)/72) * math.Ceil(s.h*float64(dpi)/72)
	}
	dpi := o.DPI
	if pixels(dpi) > float64(o.MaxPixelsPerPage) {
		dpi = int(72 * math.Sqrt(float64(o.MaxPixelsPerPage)/(s.w*s.h)))
		for dpi > 0 && pixels(dpi) > float64(o.MaxPixelsPerPage) {
			dpi--
		}
	}
	if dpi < o.MinDPI {
		return 0, tooLarge("page %d (%.0f x %.0f pt) needs %.0f pixels at %d dpi, over the limit of %d",
			n, s.w, s.h, pixels(o.MinDPI), o.MinDPI, o.MaxPixelsPerPage)
	}
	return dpi, nil
}

// renderPDFPage rasterises one page to gray with pdftoppm (PGM on stdout).
func renderPDFPage(ctx context.Context, path string, n int, s pageSize, dpi int, o Options) (*image.Gray, error) {
	// pdftoppm may round each side up, and a /Rotate swaps them.
	limit := int64((math.Ceil(s.w*float64(dpi)/72)+2)*(math.Ceil(s.h*float64(dpi)/72)+2)) + 1024
	out, err := runTool(ctx, toolRun{
		name:      "pdftoppm",
		args:      []string{"-r", strconv.Itoa(dpi), "-gray", "-f", strconv.Itoa(n), "-l", strconv.Itoa(n), path},
		timeout:   o.PageTimeout,
		maxStdout: limit,
		sizeHint:  limit,
		what:      fmt.Sprintf("pdftoppm page %d", n),
	})
	if err != nil {
		return nil, classifyPoppler(err)
	}
	img, err := parsePGM(out)
	if err != nil {
		return nil, unreadable("page %d did not render: %v", n, err)
	}
	return img, nil
}

// parsePGM reads a binary 8-bit PGM (P5), what pdftoppm -gray writes.
func parsePGM(b []byte) (*image.Gray, error) {
	fields := make([]int, 0, 3)
	i := 2
	if !bytes.HasPrefix(b, []byte("P5")) {
		return nil, fmt.Errorf("not a PGM image")
	}
	for len(fields) < 3 {
		for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
			i++
		}
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		v, err := strconv.Atoi(string(b[i:j]))
		if err != nil {
			return nil, fmt.Errorf("bad PGM header")
		}
		fields = append(fields, v)
		i = j
	}
	w, h, maxval := fields[0], fields[1], fields[2]
	i++ // the single whitespace before the raster
	if maxval != 255 || w <= 0 || h <= 0 || len(b)-i < w*h {
		return nil, fmt.Errorf("unexpected PGM %dx%d maxval %d with %d bytes", w, h, maxval, len(b)-i)
	}
	return &image.Gray{Pix: b[i : i+w*h], Stride: w, Rect: image.Rect(0, 0, w, h)}, nil
}

// ocrGray deskews and despeckles img, reads it with tesseract, marks the
// words printed faintly and reads faint print tesseract did not see. dpi converts pixels to points; page number n
// is for messages.
func ocrGray(ctx context.Context, img *image.Gray, dpi float64, n int, tmp string, o Options) (Page, error) {
	skew := estimateSkew(img)
	if math.Abs(skew) >= minCorrection {
		img = rotate(img, -skew)
	} else {
		skew = 0
	}
	img = despeckle(img)
	file := filepath.Join(tmp, fmt.Sprintf("page-%d.pgm", n))
	if err := writePGM(file, img); err != nil {
		return Page{}, err
	}
	defer os.Remove(file)
	began := time.Now()
	p, err := tesseract(ctx, file, dpi, n, "3", o)
	if err != nil {
		return Page{}, err
	}
	// The missed-block pass reads less than the page, so it takes less
	// than the first pass did; it runs only when the page's limit leaves
	// twice that (room for the faint pass too), so it never turns a page
	// that was read into one that timed out.
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > 2*time.Since(began) {
		if err := readMissed(ctx, &p, img, dpi, n, tmp, o); err != nil {
			return Page{}, err
		}
	}
	markFaint(&p, img, dpi/72)
	if err := readFaint(ctx, &p, img, dpi, n, tmp, o); err != nil {
		return Page{}, err
	}
	p.Width = float64(img.Bounds().Dx()) * 72 / dpi
	p.Height = float64(img.Bounds().Dy()) * 72 / dpi
	p.SkewDegrees = skew
	if skew != 0 {
		unskewBoxes(&p, skew)
	}
	return p, nil
}

// unskewBoxes maps boxes found on the deskewed image back onto the page as
// it is (turned by skew): each box becomes the upright box around its
// turned corners, a little larger, never smaller, so a redaction drawn
// from it still covers the word on the original.
func unskewBoxes(p *Page, skew float64) {
	cx, cy := p.Width/2, p.Height/2
	for i := range p.Lines {
		l := &p.Lines[i]
		l.Box = turnBox(l.Box, skew, cx, cy)
		for j := range l.Words {
			l.Words[j].Box = turnBox(l.Words[j].Box, skew, cx, cy)
		}
	}
}

// turnBox turns b's corners by deg clockwise about (cx, cy).
func turnBox(b Box, deg, cx, cy float64) Box {
	th := deg * math.Pi / 180
	c, s := math.Cos(th), math.Sin(th)
	out := Box{XMin: math.Inf(1), YMin: math.Inf(1), XMax: math.Inf(-1), YMax: math.Inf(-1)}
	for _, pt := range [4][2]float64{{b.XMin, b.YMin}, {b.XMax, b.YMin}, {b.XMin, b.YMax}, {b.XMax, b.YMax}} {
		dx, dy := pt[0]-cx, pt[1]-cy
		x, y := cx+c*dx-s*dy, cy+s*dx+c*dy
		out = Box{XMin: math.Min(out.XMin, x), YMin: math.Min(out.YMin, y), XMax: math.Max(out.XMax, x), YMax: math.Max(out.YMax, y)}
	}
	return Box{XMin: round3(out.XMin), YMin: round3(out.YMin), XMax: round3(out.XMax), YMax: round3(out.YMax)}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func writePGM(path string, img *image.Gray) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("page image: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, "P5\n%d %d\n255\n", img.Bounds().Dx(), img.Bounds().Dy())
	for y := range img.Bounds().Dy() {
		row := img.Pix[y*img.Stride : y*img.Stride+img.Bounds().Dx()]
		if _, err := w.Write(row); err != nil {
			f.Close()
			return fmt.Errorf("page image: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("page image: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("page image: %w", err)
	}
	return nil
}

// tesseract OCRs an image file with page segmentation mode psm and
// returns its words as a page (boxes already in points).
func tesseract(ctx context.Context, file string, dpi float64, n int, psm string, o Options) (Page, error) {
	args := []string{file, "stdout", "-l", o.OCRLang, "--dpi", strconv.Itoa(int(math.Round(dpi))), "--psm", psm}
	if o.DotProduct != "" && o.DotProduct != "auto" {
		args = append(args, "-c", "dotproduct="+o.DotProduct)
	}
	out, err := runTool(ctx, toolRun{
		name:      "tesseract",
		args:      append(args, "tsv"),
		timeout:   o.PageTimeout, // the page's own limit bounds it (withinPageTimeout)
		maxStdout: maxTSVOutput,
		what:      fmt.Sprintf("tesseract page %d", n),
	})
	if err != nil {
		if ee, ok := err.(*exitError); ok {
			return Page{}, unreadable("%s could not read the page image (status %d)", ee.what, ee.code)
		}
		return Page{}, err
	}
	p, err := parseTSV(out, 72/dpi)
	if err != nil {
		return Page{}, fmt.Errorf("tesseract page %d: %w", n, err)
	}
	p.Number = n
	return p, nil
}

// parseTSV groups tesseract's level-5 (word) rows into lines by their
// block, paragraph and line numbers, scaling pixel boxes by scale.
func parseTSV(out []byte, scale float64) (Page, error) {
	p := Page{Method: MethodOCR}
	type key struct{ block, par, line int }
	index := map[key]int{}
	sum, count := 0.0, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 12 || f[0] != "5" {
			continue
		}
		nums := make([]float64, 11)
		for i := range nums {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return Page{}, fmt.Errorf("bad TSV row")
			}
			nums[i] = v
		}
		text := strings.TrimSpace(strings.Join(f[11:], " "))
		if text == "" {
			continue
		}
		left, top, w, h := nums[6], nums[7], nums[8], nums[9]
		box := Box{XMin: pt(left, scale), YMin: pt(top, scale), XMax: pt(left+w, scale), YMax: pt(top+h, scale)}
		word := Word{Text: text, Box: box, Conf: nums[10]}
		k := key{int(nums[2]), int(nums[3]), int(nums[4])}
		i, ok := index[k]
		if !ok {
			i = len(p.Lines)
			index[k] = i
			p.Lines = append(p.Lines, Line{Box: word.Box})
		}
		l := &p.Lines[i]
		l.Words = append(l.Words, word)
		l.Box = union(l.Box, word.Box)
		if word.Conf >= 0 {
			sum += word.Conf
			count++
		}
	}
	if err := sc.Err(); err != nil {
		return Page{}, fmt.Errorf("read TSV: %w", err)
	}
	for i := range p.Lines {
		p.Lines[i].Text = joinWords(p.Lines[i].Words)
	}
	if count > 0 {
		p.OCRConfidence = math.Round(sum/float64(count)*100) / 100
	}
	return p, nil
}

// pt converts pixels to points, rounded to a thousandth (finer than any
// scan resolves, and it keeps the JSON short).
func pt(px, scale float64) float64 { return round3(px * scale) }

func union(a, b Box) Box {
	return Box{XMin: math.Min(a.XMin, b.XMin), YMin: math.Min(a.YMin, b.YMin), XMax: math.Max(a.XMax, b.XMax), YMax: math.Max(a.YMax, b.YMax)}
}
