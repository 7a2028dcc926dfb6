package hidden

import (
	"image"
	"sort"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// Render is one page rendered twice at DPI: Normal with everything, NoText
// with text filtered out. Both must have the same bounds.
type Render struct {
	DPI    float64
	Normal *image.Gray
	NoText *image.Gray
}

// Matches reports whether the render is of a page of w x h points: both
// images the size the page has at r.DPI, within two pixels (a rotated or
// cropped render would put every word box over the wrong pixels).
func (r *Render) Matches(w, h float64) bool {
	if r == nil || r.Normal == nil || r.NoText == nil || r.DPI <= 0 || r.Normal.Bounds() != r.NoText.Bounds() {
		return false
	}
	b := r.Normal.Bounds()
	near := func(px int, pt float64) bool { d := float64(px) - pt*r.DPI/72; return d > -2.5 && d < 2.5 }
	return near(b.Dx(), w) && near(b.Dy(), h)
}

// Config holds the visibility thresholds.
type Config struct {
	// TinyPoints: a box shorter than this is unreadable print.
	TinyPoints float64
	// InkDelta: a pixel whose gray level differs by at least this much
	// between the renders carries readable ink (24 of 255 keeps faint but
	// legible gray print visible and drops #FAFAFA on white).
	InkDelta uint8
	// FaintDelta: any smaller but real difference; ink that only reaches
	// this is low contrast.
	FaintDelta uint8
	// MinInkPixels: pixels needed to call a box inked.
	MinInkPixels int
	// LightBackground: mean gray of the text-free render above which
	// non-inking text is "white" rather than "covered".
	LightBackground float64
	// OffPageFraction: a box with less than this fraction of its area on
	// the page is off-page.
	OffPageFraction float64
}

// DefaultConfig returns the thresholds used by the invoice job.
func DefaultConfig() Config {
	return Config{
		TinyPoints:      2,
		InkDelta:        24,
		FaintDelta:      3,
		MinInkPixels:    2,
		LightBackground: 235,
		OffPageFraction: 0.5,
	}
}

// Verdict is whether a word can be seen and, if not, why.
type Verdict struct {
	Visible bool
	Kind    string // a result.Hidden* kind when !Visible
}

// Classify judges one word box (points, top-left origin) on a page of
// pageW x pageH points. r may be nil when no render is available: then only
// the geometric checks run and anything else counts as visible (the caller
// records that the ink check did not run).
func Classify(cfg Config, pageW, pageH float64, b extract.Box, r *Render) Verdict {
	if offPage(cfg, pageW, pageH, b) {
		return Verdict{Kind: result.HiddenOffPage}
	}
	if b.YMax-b.YMin < cfg.TinyPoints {
		return Verdict{Kind: result.HiddenTiny}
	}
	if r == nil || r.Normal == nil || r.NoText == nil {
		return Verdict{Visible: true}
	}
	return classifyInk(cfg, b, r)
}

func offPage(cfg Config, pageW, pageH float64, b extract.Box) bool {
	w, h := b.XMax-b.XMin, b.YMax-b.YMin
	if w <= 0 || h <= 0 {
		// A degenerate box: judge by its corner alone.
		return b.XMin < 0 || b.YMin < 0 || b.XMin > pageW || b.YMin > pageH
	}
	ix := min(b.XMax, pageW) - max(b.XMin, 0)
	iy := min(b.YMax, pageH) - max(b.YMin, 0)
	if ix <= 0 || iy <= 0 {
		return true
	}
	return ix*iy < cfg.OffPageFraction*w*h
}

// inkStats counts differing pixels inside a box.
type inkStats struct {
	pixels, strong, faint int
	bgSum                 float64
}

func classifyInk(cfg Config, b extract.Box, r *Render) Verdict {
	st := measure(cfg, b, r)
	switch {
	case st.pixels == 0:
		// The box maps to no pixel of the render (a render that does not
		// match the page): nothing can be seen there.
		return Verdict{Kind: result.HiddenOffPage}
	case st.strong >= cfg.MinInkPixels:
		return Verdict{Visible: true}
	case st.faint >= cfg.MinInkPixels:
		return Verdict{Kind: result.HiddenLowContrast}
	case st.bgSum/float64(st.pixels) >= cfg.LightBackground:
		return Verdict{Kind: result.HiddenWhite}
	default:
		return Verdict{Kind: result.HiddenCovered}
	}
}

func measure(cfg Config, b extract.Box, r *Render) inkStats {
	s := r.DPI / 72
	rect := image.Rect(int(b.XMin*s), int(b.YMin*s), int(b.XMax*s+0.999), int(b.YMax*s+0.999))
	rect = rect.Intersect(r.Normal.Bounds()).Intersect(r.NoText.Bounds())
	var st inkStats
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			n, f := r.Normal.GrayAt(x, y).Y, r.NoText.GrayAt(x, y).Y
			d := absDiff(n, f)
			st.pixels++
			st.bgSum += float64(f)
			if d >= cfg.InkDelta {
				st.strong++
			}
			if d >= cfg.FaintDelta {
				st.faint++
			}
		}
	}
	return st
}

func absDiff(a, b uint8) uint8 {
	if a > b {
		return a - b
	}
	return b - a
}

// Overlaps marks boxes drawn over one another: for each pair of boxes
// with different text whose intersection covers at least minFrac of the
// smaller one, both are marked. Text printed over text hides what a
// reader sees behind what software reads (white "$1.00" over a black
// "$9,000.00" still shows ink in its box), so neither can be trusted.
// Identical words at nearly the same place (faux bold, a duplicated draw)
// are duplicates, reported in dup, not overlaps.
func Overlaps(boxes []extract.Box, texts []string, minFrac float64) (overlap, dup []bool) {
	overlap, dup = make([]bool, len(boxes)), make([]bool, len(boxes))
	idx := make([]int, len(boxes))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return boxes[idx[a]].YMin < boxes[idx[b]].YMin })
	for a := 0; a < len(idx); a++ {
		i := idx[a]
		for b := a + 1; b < len(idx) && boxes[idx[b]].YMin < boxes[i].YMax; b++ {
			j := idx[b]
			if frac := overlapFrac(boxes[i], boxes[j]); frac >= minFrac {
				if texts[i] == texts[j] && frac > 0.8 {
					dup[max(i, j)] = true
					continue
				}
				overlap[i], overlap[j] = true, true
			}
		}
	}
	return overlap, dup
}

func overlapFrac(a, b extract.Box) float64 {
	a, b = core(a), core(b)
	ix := min(a.XMax, b.XMax) - max(a.XMin, b.XMin)
	iy := min(a.YMax, b.YMax) - max(a.YMin, b.YMin)
	if ix <= 0 || iy <= 0 {
		return 0
	}
	small := min((a.XMax-a.XMin)*(a.YMax-a.YMin), (b.XMax-b.XMin)*(b.YMax-b.YMin))
	if small <= 0 {
		return 0
	}
	return ix * iy / small
}

// core is the middle half of a word's box, where its letters' bodies
// are: a text layer's boxes run from the font's ascent to its descent, so
// the boxes of two lines set tighter than their size overlap (a small
// address just under a large name) although no ink does. Text printed
// over text overlaps in the middle.
func core(b extract.Box) extract.Box {
	q := (b.YMax - b.YMin) / 4
	return extract.Box{XMin: b.XMin, YMin: b.YMin + q, XMax: b.XMax, YMax: b.YMax - q}
}
