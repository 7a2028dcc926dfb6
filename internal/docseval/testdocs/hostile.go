package testdocs

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/imagewrite"
)

// Hostile inputs. Each is small to write and cheap to hold, and each is
// aimed at one limit of the extractor: a truncated or fake PDF must be
// refused as unreadable, page and pixel bombs as too large before any
// tool renders them, and active content must simply never run.

// TruncatedPDF is the first keep (0..1) of pdf, as a cut-off download
// would be: the xref, trailer and %%EOF are gone.
func TruncatedPDF(pdf []byte, keep float64) []byte {
	n := int(float64(len(pdf)) * keep)
	n = max(min(n, len(pdf)-1), 0)
	return append([]byte{}, pdf[:n]...)
}

// NotPDF is HTML, what a misconfigured download link saves under a .pdf
// name.
func NotPDF() []byte {
	return []byte("<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n" +
		"<body><p>Your session has expired. Please sign in again.</p></body></html>\n")
}

// ManyPagesPDF has n pages that all share one small content stream, so
// 2,000 pages take well under a megabyte and milliseconds to write.
func ManyPagesPDF(n int) []byte {
	var p rawPDF
	cat := p.add("")
	pages := p.add("")
	font := p.add(helvetica)
	content := p.add(stream(helveticaText([]string{"A page of a very long document."}, letterHeight)))
	kids := make([]string, 0, n)
	for range n {
		k := p.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>",
			pages, font, content))
		kids = append(kids, fmt.Sprintf("%d 0 R", k))
	}
	p.set(cat, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	p.set(pages, fmt.Sprintf("<< /Type /Pages /Count %d /Kids [%s] >>", n, strings.Join(kids, " ")))
	return p.bytes(cat)
}

// ImageBombPDF is one page with no text whose box is widthPt x heightPt
// points: a text extractor sees nothing, so a naive OCR fallback renders
// it, and at 14400 pt (200 in, the PDF maximum) that is 30,000 px square
// even at 150 dpi.
func ImageBombPDF(widthPt, heightPt float64) []byte {
	var p rawPDF
	cat := p.add("")
	pages := p.add("")
	content := p.add(stream("0.9 g 0 0 10 10 re f"))
	page := p.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %.0f %.0f] /Contents %d 0 R >>",
		pages, widthPt, heightPt, content))
	p.set(cat, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	p.set(pages, fmt.Sprintf("<< /Type /Pages /Count 1 /Kids [%d 0 R] >>", page))
	return p.bytes(cat)
}

// JavaScriptPDF is a one-page text PDF whose catalog runs script on open
// (OpenAction), and also registers it as document-level JavaScript.
// Poppler never executes it; the file must extract like any other.
func JavaScriptPDF(lines []string, script string) []byte {
	var p rawPDF
	cat := p.add("")
	pages := p.add("")
	font := p.add(helvetica)
	content := p.add(stream(helveticaText(lines, letterHeight)))
	js := p.add(fmt.Sprintf("<< /S /JavaScript /JS %s >>", pdfString(script)))
	page := p.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>",
		pages, font, content))
	p.set(cat, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R /OpenAction %d 0 R /Names << /JavaScript << /Names [(open) %d 0 R] >> >> >>",
		pages, js, js))
	p.set(pages, fmt.Sprintf("<< /Type /Pages /Count 1 /Kids [%d 0 R] >>", page))
	return p.bytes(cat)
}

// AttachmentPDF is a one-page text PDF carrying one embedded file (name,
// data) in its EmbeddedFiles name tree, as a mail client attaches one.
func AttachmentPDF(lines []string, name string, data []byte) []byte {
	var p rawPDF
	cat := p.add("")
	pages := p.add("")
	font := p.add(helvetica)
	content := p.add(stream(helveticaText(lines, letterHeight)))
	file := p.add(fmt.Sprintf("<< /Type /EmbeddedFile /Length %d >>\nstream\n%s\nendstream", len(data), data))
	spec := p.add(fmt.Sprintf("<< /Type /Filespec /F %s /UF %s /EF << /F %d 0 R >> >>", pdfString(name), pdfString(name), file))
	page := p.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>",
		pages, font, content))
	p.set(cat, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R /Names << /EmbeddedFiles << /Names [%s %d 0 R] >> >> >>",
		pages, pdfString(name), spec))
	p.set(pages, fmt.Sprintf("<< /Type /Pages /Count 1 /Kids [%d 0 R] >>", page))
	return p.bytes(cat)
}

// Polyglot is pdf with another file's bytes before its header and/or
// after its end: readers that scan for %PDF- and the last xref open it as
// a PDF, while the same file is also, say, a web page or a ZIP.
func Polyglot(before, pdf, after []byte) []byte {
	out := append(append([]byte{}, before...), pdf...)
	return append(out, after...)
}

// BombPNG declares a width x height 8-bit gray image but carries only one
// compressed row: a decoder that trusts IHDR allocates width*height bytes
// before it finds out.
func BombPNG(width, height uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, width)
	ihdr = binary.BigEndian.AppendUint32(ihdr, height)
	ihdr = append(ihdr, 8, 0, 0, 0, 0) // depth 8, gray, deflate, no filter, no interlace
	pngChunk(&b, "IHDR", ihdr)
	pngChunk(&b, "IDAT", zlibOf(make([]byte, 1+int(min(width, 1<<20)))))
	pngChunk(&b, "IEND", nil)
	return b.Bytes()
}

func pngChunk(b *bytes.Buffer, typ string, data []byte) {
	_ = binary.Write(b, binary.BigEndian, uint32(len(data)))
	body := append([]byte(typ), data...)
	b.Write(body)
	_ = binary.Write(b, binary.BigEndian, crc32.ChecksumIEEE(body))
}

func zlibOf(p []byte) []byte {
	var b bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestCompression) // level is valid
	_, _ = zw.Write(p)                                     // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return b.Bytes()
}

// BombTIFF is a two-page TIFF: page 1 a harmless 16x16 gray page, page 2
// declaring width x height pixels over a few bytes of Deflate data. Go's
// image.DecodeConfig reads only the first IFD, so only a reader that walks
// every IFD sees the bomb.
func BombTIFF(width, height uint32) []byte {
	small := imagewrite.DeflateGrayPage(16, 16, zlibOf(bytes.Repeat([]byte{0xFF}, 16*16)), 0, 2)
	bomb := imagewrite.DeflateGrayPage(width, height, zlibOf(make([]byte, 4096)), 1, 2)
	var b bytes.Buffer
	_ = imagewrite.WriteTIFF(&b, []imagewrite.TIFFPage{small, bomb}) // writes to a bytes.Buffer do not fail
	return b.Bytes()
}
