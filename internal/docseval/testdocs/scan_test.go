package testdocs

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/imagewrite"

	"golang.org/x/image/tiff"
)

func readPNGGray(t *testing.T, path string) *image.Gray {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return toGray(img)
}

func toGray(img image.Image) *image.Gray {
	if g, ok := img.(*image.Gray); ok {
		return g
	}
	g := image.NewGray(img.Bounds())
	draw.Draw(g, g.Bounds(), img, img.Bounds().Min, draw.Src)
	return g
}

// smallPage is a short page that renders fast at any DPI.
func smallPage() Fixed {
	return Fixed{Width: 288, Height: 144, Pages: []FixedPage{{Items: []Item{
		{X: 18, Y: 40, Text: "Invoice INV-2041", Size: 14, Bold: true},
		{X: 18, Y: 70, Text: "Total due: 1,234.56 EUR", Size: 12},
	}}}}
}

func TestScanDeterministicBySeed(t *testing.T) {
	s := Scan{DPI: 150, Skew: 2.5, Noise: 0.4, Blur: 1, Darkness: 0.3, JPEG: 60, Seed: 7}
	hash := func(s Scan) [32]byte {
		var b bytes.Buffer
		if err := WriteScan(&b, smallPage(), s, ScanPNG); err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b.Bytes())
	}
	a, b := hash(s), hash(s)
	if a != b {
		t.Error("same seed, different output")
	}
	s2 := s
	s2.Seed = 8
	if hash(s2) == a {
		t.Error("different seed, same output")
	}
}

func TestScanDegradations(t *testing.T) {
	clean, err := ScanPages(smallPage(), Scan{DPI: 100})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		scan  Scan
		check func(img *image.Gray) string
	}{
		{"size follows DPI", Scan{DPI: 300}, func(img *image.Gray) string {
			if img.Bounds().Dx() != 1200 || img.Bounds().Dy() != 600 {
				return "bounds " + img.Bounds().String()
			}
			return ""
		}},
		{"bilevel has only black and white", Scan{DPI: 100, Bilevel: true, Noise: 0.5, Blur: 1}, func(img *image.Gray) string {
			for _, v := range img.Pix {
				if v != 0 && v != 255 {
					return "gray pixel in a bilevel page"
				}
			}
			return ""
		}},
		{"darkness tints the paper", Scan{DPI: 100, Darkness: 0.8}, func(img *image.Gray) string {
			if v := img.GrayAt(2, 2).Y; v > 220 {
				return "corner still white"
			}
			return ""
		}},
		{"skew moves ink", Scan{DPI: 100, Skew: 4}, func(img *image.Gray) string {
			if bytes.Equal(img.Pix, clean[0].Pix) {
				return "no change"
			}
			return ""
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pages, err := ScanPages(smallPage(), tc.scan)
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(pages[0]); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func TestScanFormats(t *testing.T) {
	two := smallPage()
	two.Pages = append(two.Pages, two.Pages[0])
	tests := []struct {
		format ScanFormat
		doc    Fixed
		scan   Scan
		check  func(t *testing.T, b []byte)
	}{
		{ScanPNG, smallPage(), Scan{DPI: 150}, func(t *testing.T, b []byte) {
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Fatal(err)
			}
			i := bytes.Index(b, []byte("pHYs"))
			if i < 0 || binary.BigEndian.Uint32(b[i+4:]) != 5906 { // 150 dpi in px/m
				t.Error("no pHYs with 150 dpi")
			}
		}},
		{ScanJPEG, smallPage(), Scan{DPI: 150, JPEG: 50}, func(t *testing.T, b []byte) {
			if _, err := jpeg.Decode(bytes.NewReader(b)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b[6:11], []byte("JFIF\x00")) || binary.BigEndian.Uint16(b[14:]) != 150 {
				t.Error("no JFIF density of 150 dpi")
			}
		}},
		{ScanTIFF, two, Scan{DPI: 100}, func(t *testing.T, b []byte) {
			img, err := tiff.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if img.Bounds().Dx() != 400 {
				t.Errorf("width %d", img.Bounds().Dx())
			}
		}},
		{ScanTIFF, two, Scan{DPI: 100, Bilevel: true}, func(t *testing.T, b []byte) {
			if _, err := tiff.Decode(bytes.NewReader(b)); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.format.String(), func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteScan(&b, tc.doc, tc.scan, tc.format); err != nil {
				t.Fatal(err)
			}
			tc.check(t, b.Bytes())
		})
	}
	if err := WriteScan(&bytes.Buffer{}, two, Scan{}, ScanPNG); err == nil {
		t.Error("two pages as one PNG: no error")
	}
}

func TestImageOnlyPDF(t *testing.T) {
	needTool(t, "pdftotext")
	needTool(t, "pdfinfo")
	two := smallPage()
	two.Pages = append(two.Pages, two.Pages[0])
	var b bytes.Buffer
	if err := WriteScan(&b, two, Scan{DPI: 144, Skew: 1, JPEG: 70}, ScanPDF); err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "scan.pdf", b.Bytes())
	info := mustRun(t, "pdfinfo", path)
	if !strings.Contains(info, "Pages:           2") || !strings.Contains(info, "Page size:       288 x 144 pts") {
		t.Errorf("pdfinfo:\n%s", info)
	}
	if text := strings.TrimSpace(mustRun(t, "pdftotext", path, "-")); text != "" {
		t.Errorf("image-only PDF has text %q", text)
	}
}

// TestG4RoundTrip decodes the encoder's output with x/image/ccitt, an
// independent implementation, on pages that exercise every mode.
func TestG4RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(w, h int, p float64) *image.Gray {
		img := image.NewGray(image.Rect(0, 0, w, h))
		for i := range img.Pix {
			if rng.Float64() >= p {
				img.Pix[i] = 255
			}
		}
		return img
	}
	solid := func(w, h int, v uint8) *image.Gray {
		img := image.NewGray(image.Rect(0, 0, w, h))
		for i := range img.Pix {
			img.Pix[i] = v
		}
		return img
	}
	text, err := ScanPages(smallPage(), Scan{DPI: 200, Bilevel: true, Skew: 1.3})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		img  *image.Gray
	}{
		{"text", text[0]},
		{"sparse noise", noise(301, 40, 0.05)},
		{"dense noise", noise(97, 40, 0.5)},
		{"all white", solid(1728, 4, 255)},
		{"all black", solid(1728, 4, 0)},
		{"runs past 2560", solid(5200, 2, 0)},
		{"one pixel wide", noise(1, 30, 0.5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.img.Bounds()
			var file bytes.Buffer
			if err := imagewrite.Write(&file, []*image.Gray{tc.img}, imagewrite.TIFF, imagewrite.Options{DPI: 200, Bilevel: true}); err != nil {
				t.Fatal(err)
			}
			decoded, err := tiff.Decode(&file)
			if err != nil {
				t.Fatal(err)
			}
			got := image.NewGray(b)
			draw.Draw(got, b, decoded, image.Point{}, draw.Src)
			for i := range got.Pix {
				want := uint8(255)
				if tc.img.Pix[i] < 128 {
					want = 0
				}
				if got.Pix[i] != want {
					t.Fatalf("pixel (%d,%d) = %d, want %d", i%b.Dx(), i/b.Dx(), got.Pix[i], want)
				}
			}
		})
	}
}

// TestG4ReadByPoppler checks the fax TIFF with a second decoder: img2pdf
// passes CCITT data through untouched and pdfimages decodes it with
// poppler's own CCITT filter.
func TestG4ReadByPoppler(t *testing.T) {
	needTool(t, "img2pdf")
	needTool(t, "pdfimages")
	want, err := ScanPages(smallPage(), Scan{DPI: 200, Bilevel: true, Skew: -2, Noise: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteImages(&b, want, Scan{DPI: 200, Bilevel: true}, ScanTIFF); err != nil {
		t.Fatal(err)
	}
	tif := writeTemp(t, "fax.tiff", b.Bytes())
	pdf := tif + ".pdf"
	mustRun(t, "img2pdf", tif, "-o", pdf)
	if list := mustRun(t, "pdfimages", "-list", pdf); !strings.Contains(list, "ccitt") {
		t.Fatalf("img2pdf did not keep CCITT data:\n%s", list)
	}
	mustRun(t, "pdfimages", "-png", pdf, tif+"-img")
	got := readPNGGray(t, tif+"-img-000.png")
	if got.Bounds() != want[0].Bounds() {
		t.Fatalf("bounds %v, want %v", got.Bounds(), want[0].Bounds())
	}
	diff := 0
	for i := range got.Pix {
		if (got.Pix[i] < 128) != (want[0].Pix[i] < 128) {
			diff++
		}
	}
	if diff > 0 {
		t.Errorf("%d pixels differ", diff)
	}
}

func TestHostile(t *testing.T) {
	t.Run("many pages is small and fast", func(t *testing.T) {
		start := time.Now()
		b := ManyPagesPDF(2000)
		if d := time.Since(start); d > time.Second {
			t.Errorf("took %v", d)
		}
		if len(b) > 1<<20 {
			t.Errorf("%d bytes", len(b))
		}
		needTool(t, "pdfinfo")
		if info := mustRun(t, "pdfinfo", writeTemp(t, "many.pdf", b)); !strings.Contains(info, "Pages:           2000") {
			t.Errorf("pdfinfo:\n%s", info)
		}
	})
	t.Run("image bomb page box", func(t *testing.T) {
		needTool(t, "pdfinfo")
		info := mustRun(t, "pdfinfo", writeTemp(t, "bomb.pdf", ImageBombPDF(14400, 14400)))
		if !strings.Contains(info, "Page size:       14400 x 14400 pts") {
			t.Errorf("pdfinfo:\n%s", info)
		}
	})
	t.Run("javascript", func(t *testing.T) {
		needTool(t, "pdfinfo")
		path := writeTemp(t, "js.pdf", JavaScriptPDF([]string{"Hello (world)"}, "app.alert('x');"))
		if info := mustRun(t, "pdfinfo", path); !strings.Contains(info, "JavaScript:      yes") {
			t.Errorf("pdfinfo:\n%s", info)
		}
		if text := mustRun(t, "pdftotext", path, "-"); !strings.Contains(text, "Hello (world)") {
			t.Errorf("pdftotext: %q", text)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		needTool(t, "pdfinfo")
		path := writeTemp(t, "t.pdf", TruncatedPDF(flowPDF(t, contract(3), PDFOptions{}), 0.5))
		if _, err := run(t, "pdfinfo", path); err == nil {
			t.Error("pdfinfo read a half PDF")
		}
	})
	t.Run("not a pdf", func(t *testing.T) {
		if bytes.Contains(NotPDF(), []byte("%PDF")) {
			t.Error("has a PDF header")
		}
	})
	t.Run("png bomb", func(t *testing.T) {
		b := BombPNG(100000, 100000)
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil || cfg.Width != 100000 || cfg.Height != 100000 || len(b) > 1024 {
			t.Errorf("cfg %+v err %v size %d", cfg, err, len(b))
		}
	})
	t.Run("tiff bomb hides on page 2", func(t *testing.T) {
		b := BombTIFF(100000, 100000)
		cfg, err := tiff.DecodeConfig(bytes.NewReader(b))
		if err != nil || cfg.Width != 16 || len(b) > 1024 {
			t.Errorf("cfg %+v err %v size %d", cfg, err, len(b))
		}
		if !bytes.Contains(b, binary.LittleEndian.AppendUint32(nil, 100000)) {
			t.Error("no page declares the bomb size")
		}
	})
}
