package extract

import (
	"bytes"
	"fmt"
	"image"
	"math"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// textPage is a page with enough lines of text for the projection profile
// to have something to line up.
func textPage() testdocs.Fixed {
	var p testdocs.FixedPage
	for i := range 12 {
		p.Items = append(p.Items, testdocs.Item{X: 54, Y: 60 + float64(i)*22, Text: strings.Repeat(fmt.Sprintf("Clause %d shall survive termination. ", i), 2), Size: 11})
	}
	return testdocs.Fixed{Width: 500, Height: 330, Pages: []testdocs.FixedPage{p}}
}

func TestEstimateSkew(t *testing.T) {
	tests := []struct {
		skew float64
		scan testdocs.Scan
	}{
		{0, testdocs.Scan{DPI: 150}},
		{0.7, testdocs.Scan{DPI: 200}},
		{-1.5, testdocs.Scan{DPI: 300, Noise: 0.3, Seed: 1}},
		{2.5, testdocs.Scan{DPI: 150, Blur: 1, Darkness: 0.4}},
		{-4, testdocs.Scan{DPI: 200, Bilevel: true, Noise: 0.2, Seed: 2}},
		{4.6, testdocs.Scan{DPI: 150, JPEG: 50}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%+.1f°", tc.skew), func(t *testing.T) {
			s := tc.scan
			s.Skew = tc.skew
			pages, err := testdocs.ScanPages(textPage(), s)
			if err != nil {
				t.Fatal(err)
			}
			got := estimateSkew(pages[0])
			if math.Abs(got-tc.skew) > 0.2 {
				t.Errorf("estimated %.2f°, want %.1f°", got, tc.skew)
			}
			// Deskewing must bring the page back to (nearly) straight.
			if back := estimateSkew(rotate(pages[0], -got)); math.Abs(back) > 0.2 {
				t.Errorf("after correcting, %.2f° left", back)
			}
		})
	}
}

func TestEstimateSkewOfABlankPage(t *testing.T) {
	pages, err := testdocs.ScanPages(testdocs.Fixed{Width: 200, Height: 200, Pages: []testdocs.FixedPage{{}}}, testdocs.Scan{DPI: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := estimateSkew(pages[0]); got != 0 {
		t.Errorf("blank page skew %.2f", got)
	}
}

func TestRotate(t *testing.T) {
	pages, err := testdocs.ScanPages(textPage(), testdocs.Scan{DPI: 150})
	if err != nil {
		t.Fatal(err)
	}
	img := pages[0]
	if got := rotate(img, 0); !bytes.Equal(got.Pix, img.Pix) {
		t.Error("turning by 0° changed the image")
	}
	for _, deg := range []float64{0.8, -2.5, 4.5} {
		turned := rotate(img, deg)
		if got := estimateSkew(turned); math.Abs(got-deg) > 0.2 {
			t.Errorf("turned %v°, estimated %.2f°: the turn went the wrong way or not far enough", deg, got)
		}
		// Turned back, the page is the page again but for interpolation
		// softening and the corners turned out of the frame.
		back := rotate(turned, -deg)
		if d := meanAbsDiff(img, back); d > 6 {
			t.Errorf("%v° there and back: mean difference %.1f levels", deg, d)
		}
	}
	// The frame is kept, origin included: boxes stay page coordinates.
	sub := img.SubImage(image.Rect(10, 10, 110, 60)).(*image.Gray)
	if got := rotate(sub, 1).Bounds(); got != sub.Bounds() {
		t.Errorf("bounds %v, want %v", got, sub.Bounds())
	}
}

func meanAbsDiff(a, b *image.Gray) float64 {
	sum := 0
	for i := range a.Pix {
		d := int(a.Pix[i]) - int(b.Pix[i])
		sum += max(d, -d)
	}
	return float64(sum) / float64(len(a.Pix))
}

// BenchmarkRotate is a Letter page at 200 dpi (the x/image/draw bilinear
// transform it replaced took about 300 ms here).
func BenchmarkRotate(b *testing.B) {
	img := image.NewGray(image.Rect(0, 0, 1700, 2200))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	for b.Loop() {
		rotate(img, 0.8)
	}
}
