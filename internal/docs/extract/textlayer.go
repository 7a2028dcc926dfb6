package extract

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxTextOutput caps pdftotext's XHTML: about 40 KB per dense page, so
// this leaves room for MaxPages of them while refusing a text bomb.
const maxTextOutput = 256 << 20

// readTextLayer runs pdftotext -bbox-layout over pages 1..n and parses
// its XHTML as it streams (the whole output is never held in memory).
func readTextLayer(ctx context.Context, path string, n int, o Options) ([]Page, error) {
	var pages []Page
	_, err := runTool(ctx, toolRun{
		name:      "pdftotext",
		args:      []string{"-bbox-layout", "-enc", "UTF-8", "-f", "1", "-l", strconv.Itoa(n), path, "-"},
		timeout:   o.ToolTimeout,
		maxStdout: maxTextOutput,
		consume: func(r io.Reader) error {
			var err error
			pages, err = parseBBoxLayout(&xmlSafeReader{r: r})
			return err
		},
	})
	if err != nil {
		return nil, classifyPoppler(err)
	}
	return pages, nil
}

// parseBBoxLayout reads pdftotext's <page>/<line>/<word> elements. Flow
// and block structure is dropped; lines come in pdftotext's reading order.
func parseBBoxLayout(r io.Reader) ([]Page, error) {
	d := xml.NewDecoder(r)
	d.Strict = false // tolerate HTML-isms; the content is still escaped
	d.Entity = xml.HTMLEntity
	var pages []Page
	var line *Line
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return pages, nil
		}
		if err != nil {
			return nil, fmt.Errorf("parse pdftotext output: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "page":
				pages = append(pages, Page{Number: len(pages) + 1, Width: attrFloat(t, "width"),
					Height: attrFloat(t, "height"), Method: MethodText, OCRConfidence: -1})
			case "line":
				line = &Line{Box: attrBox(t)}
			case "word":
				w, err := readWord(d, t)
				if err != nil {
					return nil, err
				}
				if line != nil && w.Text != "" {
					line.Words = append(line.Words, w)
				}
			}
		case xml.EndElement:
			if t.Name.Local == "line" && line != nil && len(pages) > 0 {
				if len(line.Words) > 0 {
					line.Text = joinWords(line.Words)
					p := &pages[len(pages)-1]
					p.Lines = append(p.Lines, *line)
				}
				line = nil
			}
		}
	}
}

func readWord(d *xml.Decoder, start xml.StartElement) (Word, error) {
	var text string
	if err := d.DecodeElement(&text, &start); err != nil {
		return Word{}, fmt.Errorf("parse pdftotext word: %w", err)
	}
	return Word{Text: strings.TrimSpace(text), Box: attrBox(start), Conf: -1}, nil
}

func attrFloat(t xml.StartElement, name string) float64 {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			v, err := strconv.ParseFloat(a.Value, 64)
			if err == nil {
				return v
			}
		}
	}
	return 0
}

func attrBox(t xml.StartElement) Box {
	return Box{XMin: attrFloat(t, "xMin"), YMin: attrFloat(t, "yMin"), XMax: attrFloat(t, "xMax"), YMax: attrFloat(t, "yMax")}
}

func joinWords(ws []Word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Text
	}
	return strings.Join(parts, " ")
}

// textChars counts a page's non-space characters, the measure MinTextChars
// is compared with.
func textChars(p Page) int {
	n := 0
	for _, l := range p.Lines {
		for _, w := range l.Words {
			for _, r := range w.Text {
				if !unicode.IsSpace(r) {
					n++
				}
			}
		}
	}
	return n
}

// xmlSafeReader replaces what encoding/xml refuses (invalid UTF-8, control
// characters, U+FFFE/U+FFFF) with U+FFFD or a space. A PDF's ToUnicode map
// can make pdftotext emit any of them, and one bad character must not cost
// the whole text layer.
type xmlSafeReader struct {
	r       io.Reader
	pending []byte // an incomplete rune carried to the next read
	out     []byte // sanitised bytes not yet returned
	buf     []byte
	err     error
}

func (x *xmlSafeReader) Read(p []byte) (int, error) {
	for len(x.out) == 0 {
		if x.err != nil {
			return 0, x.err
		}
		if x.buf == nil {
			x.buf = make([]byte, 32<<10)
		}
		n, err := x.r.Read(x.buf)
		x.err = err
		x.out = x.sanitise(append(x.pending, x.buf[:n]...), err != nil)
	}
	n := copy(p, x.out)
	x.out = x.out[n:]
	return n, nil
}

func (x *xmlSafeReader) sanitise(b []byte, final bool) []byte {
	out := make([]byte, 0, len(b))
	x.pending = nil
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 && !final && !utf8.FullRune(b) {
			x.pending = append([]byte{}, b...)
			break
		}
		switch {
		case r == utf8.RuneError && size <= 1:
			out = utf8.AppendRune(out, unicode.ReplacementChar)
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r':
			out = append(out, ' ')
		case r == 0xFFFE || r == 0xFFFF:
			out = utf8.AppendRune(out, unicode.ReplacementChar)
		default:
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}
