package extract

import (
	"image"
	"math"
)

// Skew is estimated from the horizontal projection profile: project the
// dark pixels of a downsampled, binarised page onto a line at each
// candidate angle; text lines line up (a spiky profile, high sum of
// squared bin counts) only at the angle the page is actually turned.

const (
	maxSkew       = 5.0  // degrees either way; beyond that it is a rotated page, not skew
	coarseStep    = 0.25 // degrees
	fineStep      = 0.025
	minCorrection = 0.1 // degrees; below this rotating costs more than it helps OCR
	skewSampleDim = 1200
	minInk        = 200 // dark pixels below which there is nothing to measure
)

// estimateSkew returns how far img is turned clockwise, in degrees within
// ±maxSkew (0 when the page has too little ink to tell).
func estimateSkew(img *image.Gray) float64 {
	pts := inkPoints(img)
	if len(pts) < minInk {
		return 0
	}
	best := bestAngle(pts, -maxSkew, maxSkew, coarseStep)
	best = bestAngle(pts, best-coarseStep, best+coarseStep, fineStep)
	return math.Round(best*100) / 100
}

// inkPoints downsamples img by block averaging to about skewSampleDim
// pixels on its long side and returns the dark cells (Otsu threshold).
func inkPoints(img *image.Gray) [][2]float64 {
	b := img.Bounds()
	k := max(1, (max(b.Dx(), b.Dy())+skewSampleDim-1)/skewSampleDim)
	w, h := b.Dx()/k, b.Dy()/k
	small := make([]uint8, w*h)
	for y := range h {
		for x := range w {
			sum := 0
			for dy := range k {
				row := img.Pix[(y*k+dy)*img.Stride+x*k:]
				for dx := range k {
					sum += int(row[dx])
				}
			}
			small[y*w+x] = uint8(sum / (k * k))
		}
	}
	t := otsu(small)
	var pts [][2]float64
	for y := range h {
		for x := range w {
			if small[y*w+x] < t {
				pts = append(pts, [2]float64{float64(x), float64(y)})
			}
		}
	}
	return pts
}

// otsu is the threshold that best separates ink from paper.
func otsu(pix []uint8) uint8 {
	var hist [256]int
	for _, v := range pix {
		hist[v]++
	}
	total := len(pix)
	sumAll := 0.0
	for i, c := range hist {
		sumAll += float64(i * c)
	}
	var best uint8
	bestVar, sumB, wB := -1.0, 0.0, 0
	for t := range 256 {
		wB += hist[t]
		if wB == 0 || wB == total {
			continue
		}
		sumB += float64(t * hist[t])
		mB := sumB / float64(wB)
		mF := (sumAll - sumB) / float64(total-wB)
		v := float64(wB) * float64(total-wB) * (mB - mF) * (mB - mF)
		if v > bestVar {
			bestVar, best = v, uint8(t+1)
		}
	}
	return best
}

func bestAngle(pts [][2]float64, from, to, step float64) float64 {
	var maxX, maxY float64
	for _, p := range pts {
		maxX, maxY = max(maxX, p[0]), max(maxY, p[1])
	}
	// Projected rows stay within [-maxX*sin, maxY+maxX*sin] for |angle|
	// up to maxSkew plus a step; offset keeps bin indexes positive.
	offset := int(maxX*math.Sin((maxSkew+2*coarseStep)*math.Pi/180)) + 2
	bins := make([]int, int(maxY)+2*offset+2)
	best, bestScore := 0.0, -1.0
	for i := 0; ; i++ {
		a := from + float64(i)*step
		if a > to+step/2 {
			break
		}
		if s := profileScore(pts, a, bins, offset); s > bestScore {
			best, bestScore = a, s
		}
	}
	return best
}

// profileScore projects the points along angle deg (clockwise) into bins
// and scores the profile's peakiness.
func profileScore(pts [][2]float64, deg float64, bins []int, offset int) float64 {
	clear(bins)
	th := deg * math.Pi / 180
	s, c := math.Sin(th), math.Cos(th)
	for _, p := range pts {
		bins[int(math.Floor(p[1]*c-p[0]*s))+offset]++
	}
	score := 0.0
	for _, n := range bins {
		score += float64(n) * float64(n)
	}
	return score
}

// rotate turns img by deg clockwise about its centre on a white
// background, keeping its size (so box coordinates stay page coordinates).
// Each output pixel is the bilinear blend of the four source pixels around
// where it came from, stepped along the row in 16.16 fixed point: a
// general image transform costs about a second on a 300 dpi page, this a
// few tens of milliseconds. Bilinear rather than nearest-neighbour: on a
// 150-200 dpi scan the staircase edges of nearest-neighbour cost tesseract
// more words than the slight softening does.
func rotate(img *image.Gray, deg float64) *image.Gray {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	dst := image.NewGray(image.Rect(0, 0, w, h))
	th := deg * math.Pi / 180
	c, s := math.Cos(th), math.Sin(th)
	cx, cy := float64(w)/2, float64(h)/2
	const one = 1 << 16
	stepX, stepY := int64(math.Round(c*one)), int64(math.Round(-s*one))
	for y := range h {
		// The source of pixel centre (x+0.5, y+0.5), turned back by deg,
		// as a position between pixel centres (hence the -0.5).
		dy := float64(y) + 0.5 - cy
		sx := int64(math.Round((c*(0.5-cx) + s*dy + cx - 0.5) * one))
		sy := int64(math.Round((-s*(0.5-cx) + c*dy + cy - 0.5) * one))
		row := dst.Pix[y*dst.Stride : y*dst.Stride+w]
		for x := range row {
			row[x] = bilinear(img, sx, sy)
			sx += stepX
			sy += stepY
		}
	}
	if b.Min != (image.Point{}) {
		dst.Rect = b
	}
	return dst
}

// bilinear samples img at the 16.16 fixed-point position (fx, fy), in
// pixel-centre coordinates relative to the image's origin; outside the
// image is white paper.
func bilinear(img *image.Gray, fx, fy int64) uint8 {
	x0, y0 := int(fx>>16), int(fy>>16)
	wx, wy := int32(fx&0xffff)>>8, int32(fy&0xffff)>>8 // 0..255
	at := func(x, y int) int32 {
		if x < 0 || y < 0 || x >= img.Rect.Dx() || y >= img.Rect.Dy() {
			return 0xff
		}
		return int32(img.Pix[y*img.Stride+x])
	}
	var p00, p10, p01, p11 int32
	if x0 >= 0 && y0 >= 0 && x0+1 < img.Rect.Dx() && y0+1 < img.Rect.Dy() {
		i := y0*img.Stride + x0
		p00, p10 = int32(img.Pix[i]), int32(img.Pix[i+1])
		p01, p11 = int32(img.Pix[i+img.Stride]), int32(img.Pix[i+img.Stride+1])
	} else {
		p00, p10, p01, p11 = at(x0, y0), at(x0+1, y0), at(x0, y0+1), at(x0+1, y0+1)
	}
	top := p00*(256-wx) + p10*wx
	bot := p01*(256-wx) + p11*wx
	return uint8((top*(256-wy) + bot*wy + 1<<15) >> 16)
}
