package extract

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

const bboxSample = `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd"><html xmlns="http://www.w3.org/1999/xhtml">
<head>
<title>A &amp; B</title>
<meta name="Title" content="&lt;script&gt;"/>
</head>
<body>
<doc>
  <page width="612.000000" height="792.000000">
    <flow>
      <block xMin="72.0" yMin="78.1" xMax="249.2" yMax="88.2">
        <line xMin="72.0" yMin="78.1" xMax="249.2" yMax="88.2">
          <word xMin="72.0" yMin="78.1" xMax="117.8" yMax="88.2">Smith &amp; Co</word>
          <word xMin="120.8" yMin="78.1" xMax="176.5" yMax="88.2">bad` + "\x01\xff" + `char</word>
        </line>
        <line xMin="72.0" yMin="90" xMax="80" yMax="100">
        </line>
      </block>
    </flow>
  </page>
  <page width="300.000000" height="400.000000">
  </page>
</doc>
</body>
</html>`

func TestParseBBoxLayout(t *testing.T) {
	// One byte at a time, so the sanitiser sees runes split across reads.
	pages, err := parseBBoxLayout(&xmlSafeReader{r: iotest.OneByteReader(strings.NewReader(bboxSample))})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || pages[1].Width != 300 || len(pages[1].Lines) != 0 {
		t.Fatalf("pages %+v", pages)
	}
	p := pages[0]
	if len(p.Lines) != 1 {
		t.Fatalf("lines %+v; the empty line must be dropped", p.Lines)
	}
	l := p.Lines[0]
	if l.Text != "Smith & Co bad \uFFFDchar" {
		t.Errorf("text %q", l.Text)
	}
	if w := l.Words[0]; w.Box != (Box{72, 78.1, 117.8, 88.2}) || w.Conf != -1 {
		t.Errorf("word %+v", w)
	}
	if p.Method != MethodText || p.OCRConfidence != -1 || p.Number != 1 {
		t.Errorf("page %+v", p)
	}
	if textChars(p) != 16 {
		t.Errorf("textChars %d", textChars(p))
	}
}

func TestXMLSafeReaderKeepsValidText(t *testing.T) {
	in := "héllo Σωκράτης 契約 \t\n" + "\U0001F600"
	out, err := io.ReadAll(&xmlSafeReader{r: iotest.OneByteReader(strings.NewReader(in))})
	if err != nil || string(out) != in {
		t.Errorf("got %q, %v", out, err)
	}
}

func TestParseTSV(t *testing.T) {
	tsv := "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n" +
		"1\t1\t0\t0\t0\t0\t0\t0\t600\t300\t-1\t\n" +
		"4\t1\t1\t1\t1\t0\t30\t30\t300\t30\t-1\t\n" +
		"5\t1\t1\t1\t1\t1\t30\t30\t100\t30\t90\tInvoice\n" +
		"5\t1\t1\t1\t1\t2\t150\t30\t180\t30\t70\tINV-2041\n" +
		"5\t1\t1\t1\t1\t3\t340\t30\t10\t30\t95\t \n" +
		"5\t1\t2\t1\t1\t1\t30\t90\t120\t30\t80\tTotal\n"
	p, err := parseTSV([]byte(tsv), 72.0/300)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Lines) != 2 || p.Lines[0].Text != "Invoice INV-2041" || p.Lines[1].Text != "Total" {
		t.Fatalf("lines %+v", p.Lines)
	}
	if p.OCRConfidence != 80 {
		t.Errorf("mean confidence %v, want 80", p.OCRConfidence)
	}
	if b := p.Lines[0].Box; b != (Box{7.2, 7.2, 79.2, 14.4}) {
		t.Errorf("line box %+v (want pixels scaled to points)", b)
	}
	if _, err := parseTSV([]byte("5\t1\t1\t1\t1\t1\tx\t30\t100\t30\t90\tbad\n"), 1); err == nil {
		t.Error("non-numeric TSV accepted")
	}
}

func TestParsePDFInfo(t *testing.T) {
	out := "Title:           Page 1 size: 1 x 1 pts\nPages:           2\nEncrypted:       no\n" +
		"Page    1 size:  612 x 792 pts (letter)\nPage    1 rot:   0\nPage    2 size:  595.276 x 841.89 pts (A4)\n"
	info, err := parsePDFInfo([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if info.pages != 2 || len(info.sizes) != 2 || info.sizes[1] != (pageSize{595.276, 841.89}) {
		t.Errorf("info %+v", info)
	}
	if _, err := parsePDFInfo([]byte("Page    1 size:  0 x 792 pts\n")); code(err) != docs.CodeUnreadable {
		t.Errorf("zero width: %v", err)
	}
}

func TestParsePGM(t *testing.T) {
	img, err := parsePGM([]byte("P5\n3 2\n255\n\x00\x01\x02\x03\x04\x05"))
	if err != nil || img.Bounds().Dx() != 3 || img.GrayAt(2, 1).Y != 5 {
		t.Fatalf("%v %v", img, err)
	}
	for _, bad := range []string{"P6\n1 1\n255\n\x00", "P5\n3 2\n255\n\x00", "P5\n1 1\n65535\n\x00\x00", "P5\nx"} {
		if _, err := parsePGM([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestReadTIFFDirs(t *testing.T) {
	two := invoicePage()
	two.Pages = append(two.Pages, two.Pages[0], two.Pages[0])
	fax := scan(t, two, testdocs.Scan{DPI: 200, Bilevel: true}, testdocs.ScanTIFF)
	tf, err := readTIFFDirs(bytes.NewReader(fax), int64(len(fax)), 10, 1e7)
	if err != nil {
		t.Fatal(err)
	}
	if len(tf.dirs) != 3 || tf.dirs[2].width != 800 || tf.dirs[2].height != 400 || tf.dirs[0].dpi != 200 {
		t.Errorf("dirs %+v", tf.dirs)
	}
	loop := bytes.Clone(fax)
	binary.LittleEndian.PutUint32(loop[tf.dirs[2].nextAt:], uint32(tf.dirs[0].offset))
	tests := []struct {
		name     string
		data     []byte
		maxPages int
		want     string
	}{
		{"page chain loops", loop, 10, docs.CodeUnreadable},
		{"more pages than allowed", fax, 2, docs.CodeTooLarge},
		{"cut inside a directory", fax[:tf.dirs[0].nextAt-5], 10, docs.CodeUnreadable},
		{"header only", fax[:8], 10, docs.CodeUnreadable},
		{"bomb on page 2", testdocs.BombTIFF(9000, 9000), 10, docs.CodeTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readTIFFDirs(bytes.NewReader(tc.data), int64(len(tc.data)), tc.maxPages, 1e7)
			if code(err) != tc.want {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
}

// TestTIFFPageView: each page view decodes as that page alone.
func TestTIFFPageView(t *testing.T) {
	fx := invoicePage()
	blank := testdocs.FixedPage{}
	fx.Pages = append(fx.Pages, blank)
	b := scan(t, fx, testdocs.Scan{DPI: 100}, testdocs.ScanTIFF)
	tf, err := readTIFFDirs(bytes.NewReader(b), int64(len(b)), 10, 1e7)
	if err != nil {
		t.Fatal(err)
	}
	for i, wantInk := range []bool{true, false} {
		view, err := io.ReadAll(io.NewSectionReader(tf.page(i), 0, tf.size))
		if err != nil {
			t.Fatal(err)
		}
		sub, err := readTIFFDirs(bytes.NewReader(view), int64(len(view)), 10, 1e7)
		if err != nil || len(sub.dirs) != 1 {
			t.Fatalf("page %d view: %v dirs, %v", i+1, sub, err)
		}
		img, err := decodeTIFFPage(tf, i)
		if err != nil {
			t.Fatal(err)
		}
		ink := false
		for _, v := range img.Pix {
			ink = ink || v < 100
		}
		if ink != wantInk {
			t.Errorf("page %d: ink %v, want %v", i+1, ink, wantInk)
		}
	}
}
