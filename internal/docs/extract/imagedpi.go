package extract

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"strconv"
	"strings"
	"time"
)

// A scanned PDF page is one image the size of the page. Rasterising it at
// 300 dpi when it was scanned at 200 only interpolates pixels: tesseract
// then reads a softer, larger image, more slowly and (measured on 150 and
// 200 dpi scans) with more errors than the scan itself. So a page whose
// content is a single page-sized image is rasterised at that image's own
// resolution, from pdfimages -list, within [minImageDPI, Options.DPI].

const (
	// minImageDPI: a fax or a low-resolution scan is still rasterised at
	// 150 dpi; below that tesseract's text gets too small to read at all.
	minImageDPI = 150
	// minImageCover is the share of the page's width and height an image
	// must cover to be "the page": a logo on an otherwise empty page is
	// not, and its resolution says nothing about the page's text.
	minImageCover = 0.8
	// maxImageList bounds pdfimages -list output (one ~100-byte row per
	// image; a page of thousands of tiles is not a scan anyway).
	maxImageList = 4 << 20
	// imageListTimeout: the listing is an optimisation; a PDF that makes
	// it slow falls back to the configured DPI rather than spending the
	// tool timeout.
	imageListTimeout = 30 * time.Second
)

// pageImage is one row of pdfimages -list.
type pageImage struct {
	page          int
	kind          string // image, mask, smask, stencil
	width, height int
	xppi, yppi    float64
}

// scanDPIs returns, for each page (0-based) that is one page-sized image,
// the resolution to rasterise it at; other pages are absent. A failure of
// the listing only costs speed, so it gives an empty map, except when the
// extraction itself was cancelled.
func scanDPIs(ctx context.Context, path string, info pdfInfo, o Options) (map[int]int, error) {
	out, err := runTool(ctx, toolRun{
		name:      "pdfimages",
		args:      []string{"-list", "-f", "1", "-l", strconv.Itoa(info.pages), path},
		timeout:   min(o.ToolTimeout, imageListTimeout),
		maxStdout: maxImageList,
		what:      "pdfimages -list",
	})
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, interrupted(cerr, "pdfimages -list")
		}
		return map[int]int{}, nil
	}
	return chooseScanDPIs(parseImageList(out), info.sizes, o), nil
}

// parseImageList reads pdfimages -list rows ("page num type width height
// color comp bpc enc interp object ID x-ppi y-ppi size ratio"); rows it
// cannot read are skipped.
func parseImageList(out []byte) []pageImage {
	var imgs []pageImage
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 14 {
			continue
		}
		page, err1 := strconv.Atoi(f[0])
		w, err2 := strconv.Atoi(f[3])
		h, err3 := strconv.Atoi(f[4])
		xppi, err4 := strconv.ParseFloat(f[12], 64)
		yppi, err5 := strconv.ParseFloat(f[13], 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
			continue // the header, the rule, or something unexpected
		}
		imgs = append(imgs, pageImage{page: page, kind: f[2], width: w, height: h, xppi: xppi, yppi: yppi})
	}
	return imgs
}

// chooseScanDPIs keeps the pages drawn as exactly one image (masks of that
// image aside) that covers the page, and gives each its image's
// resolution, clamped.
func chooseScanDPIs(imgs []pageImage, sizes []pageSize, o Options) map[int]int {
	byPage := map[int][]pageImage{}
	for _, im := range imgs {
		if im.kind == "image" || im.kind == "stencil" {
			byPage[im.page] = append(byPage[im.page], im)
		}
	}
	out := map[int]int{}
	for page, ims := range byPage {
		if len(ims) != 1 || page < 1 || page > len(sizes) {
			continue
		}
		if dpi, ok := scanDPI(ims[0], sizes[page-1], o); ok {
			out[page-1] = dpi
		}
	}
	return out
}

// scanDPI is the resolution of an image that covers the page s, clamped
// to [max(minImageDPI, MinDPI), DPI].
func scanDPI(im pageImage, s pageSize, o Options) (int, bool) {
	if im.xppi <= 0 || im.yppi <= 0 || im.width <= 0 || im.height <= 0 {
		return 0, false
	}
	coverW := float64(im.width) / im.xppi * 72 / s.w
	coverH := float64(im.height) / im.yppi * 72 / s.h
	// A page turned by /Rotate lists its image turned too.
	turnedW := float64(im.height) / im.yppi * 72 / s.w
	turnedH := float64(im.width) / im.xppi * 72 / s.h
	if min(coverW, coverH) < minImageCover && min(turnedW, turnedH) < minImageCover {
		return 0, false
	}
	dpi := int(math.Round(min(im.xppi, im.yppi)))
	return min(max(dpi, minImageDPI, o.MinDPI), o.DPI), true
}
