package hidden

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"io"
	"strconv"
)

// ReadPGM decodes a binary 8-bit PGM (P5), the format gs's pgmraw device
// writes, refusing images over maxPixels before allocating them.
func ReadPGM(r io.Reader, maxPixels int) (*image.Gray, error) {
	br := bufio.NewReader(r)
	magic, err := pgmToken(br)
	if err != nil {
		return nil, fmt.Errorf("pgm header: %w", err)
	}
	if magic != "P5" {
		return nil, fmt.Errorf("pgm: magic %q, want P5", magic)
	}
	var dims [3]int
	for i := range dims {
		tok, err := pgmToken(br)
		if err != nil {
			return nil, fmt.Errorf("pgm header: %w", err)
		}
		n, err := strconv.Atoi(tok)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("pgm header: bad number %q", tok)
		}
		dims[i] = n
	}
	w, h, maxval := dims[0], dims[1], dims[2]
	if maxval != 255 {
		return nil, fmt.Errorf("pgm: maxval %d, want 255", maxval)
	}
	if w > maxPixels || h > maxPixels || w*h > maxPixels {
		return nil, fmt.Errorf("pgm: %dx%d over the %d pixel limit", w, h, maxPixels)
	}
	img := image.NewGray(image.Rect(0, 0, w, h))
	if _, err := io.ReadFull(br, img.Pix); err != nil {
		return nil, fmt.Errorf("pgm pixels: %w", err)
	}
	return img, nil
}

// pgmToken reads one whitespace-separated header token, skipping comments,
// and consumes exactly one whitespace byte after it (the byte before the
// raster).
func pgmToken(br *bufio.Reader) (string, error) {
	var tok []byte
	for {
		c, err := br.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) && len(tok) > 0 {
				return string(tok), nil
			}
			return "", err
		}
		switch {
		case c == '#' && len(tok) == 0:
			if _, err := br.ReadString('\n'); err != nil {
				return "", err
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if len(tok) > 0 {
				return string(tok), nil
			}
		default:
			if len(tok) >= 16 {
				return "", errors.New("header token too long")
			}
			tok = append(tok, c)
		}
	}
}
