package extract

import (
	"strings"
	"time"
)

// Methods a page's text came from.
const (
	MethodText = "text" // the PDF's text layer (pdftotext)
	MethodOCR  = "ocr"  // rasterised (pdftoppm) or an image, read by tesseract
)

// Box is a rectangle in PDF points (1/72 inch), origin at the page's top
// left, y growing downwards (pdftotext -bbox and tesseract agree on this
// once OCR pixels are scaled by 72/dpi).
type Box struct {
	XMin float64 `json:"x_min"`
	YMin float64 `json:"y_min"`
	XMax float64 `json:"x_max"`
	YMax float64 `json:"y_max"`
}

// Word is one word with its box. Conf is tesseract's confidence (0-100)
// for OCR words and -1 for text-layer words.
type Word struct {
	Text string  `json:"text"`
	Box  Box     `json:"box"`
	Conf float64 `json:"conf"`
	// Faint marks an OCR word whose ink is much lighter than the page's
	// typical word: tesseract may still read it with confidence, but the
	// print itself is doubtful (a light gray total).
	Faint bool `json:"faint,omitempty"`
}

// Line is one line of text in reading order; Text is its words joined by
// single spaces (layout spacing is not kept).
type Line struct {
	Text  string `json:"text"`
	Box   Box    `json:"box"`
	Words []Word `json:"words"`
}

// Page is one page's text.
type Page struct {
	Number int     `json:"number"` // 1-based
	Width  float64 `json:"width"`  // points
	Height float64 `json:"height"` // points
	Method string  `json:"method"` // MethodText or MethodOCR
	// OCRConfidence is the mean word confidence (0-100) on OCR pages, -1 on
	// text pages.
	OCRConfidence float64 `json:"ocr_confidence"`
	// SkewDegrees is the rotation corrected before OCR (0 on text pages),
	// positive clockwise. OCR boxes are mapped back onto the page as it
	// is, so they stay valid on the original image.
	SkewDegrees float64 `json:"skew_degrees"`
	Lines       []Line  `json:"lines"`
}

// Text returns the page's lines joined by newlines.
func (p *Page) Text() string {
	var b strings.Builder
	for i, l := range p.Lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.Text)
	}
	return b.String()
}

// Document is what extraction produced for one input file.
type Document struct {
	Pages []Page `json:"pages"`
	// OCRLang is the tesseract model(s) the OCR pages were read with,
	// "" when no page was OCRed.
	OCRLang string `json:"ocr_lang,omitempty"`
	// Timings is how long extraction took, by phase; not serialised.
	Timings Timings `json:"-"`
	// PageOCR is how long each page's OCR took, indexed by page number
	// - 1 (zero for pages read from their text layer); not serialised.
	PageOCR []time.Duration `json:"-"`
}

// OCRPages counts the pages read by OCR.
func (d *Document) OCRPages() int {
	n := 0
	for _, p := range d.Pages {
		if p.Method == MethodOCR {
			n++
		}
	}
	return n
}
