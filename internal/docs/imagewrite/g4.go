package imagewrite

import "image"

// CCITT Group 4 (ITU-T T.6) encoding of bilevel pages, for fax-like TIFFs.
// The code tables are those of T.4 (Tables 1-3), which T.6 reuses. The
// encoder follows the T.6 flow chart (pass, horizontal and vertical
// modes against the previous row) and ends with EOFB.

const (
	g4Pass  = "0001"
	g4Horiz = "001"
	g4EOL   = "000000000001"
)

// g4Vertical is indexed by b1-a1+3: VR3 .. V0 .. VL3.
var g4Vertical = [7]string{"0000011", "000011", "011", "1", "010", "000010", "0000010"}

var g4WhiteTerm = [64]string{
	"00110101", "000111", "0111", "1000", "1011", "1100", "1110", "1111",
	"10011", "10100", "00111", "01000", "001000", "000011", "110100", "110101",
	"101010", "101011", "0100111", "0001100", "0001000", "0010111", "0000011", "0000100",
	"0101000", "0101011", "0010011", "0100100", "0011000", "00000010", "00000011", "00011010",
	"00011011", "00010010", "00010011", "00010100", "00010101", "00010110", "00010111", "00101000",
	"00101001", "00101010", "00101011", "00101100", "00101101", "00000100", "00000101", "00001010",
	"00001011", "01010010", "01010011", "01010100", "01010101", "00100100", "00100101", "01011000",
	"01011001", "01011010", "01011011", "01001010", "01001011", "00110010", "00110011", "00110100",
}

var g4BlackTerm = [64]string{
	"0000110111", "010", "11", "10", "011", "0011", "0010", "00011",
	"000101", "000100", "0000100", "0000101", "0000111", "00000100", "00000111", "000011000",
	"0000010111", "0000011000", "0000001000", "00001100111", "00001101000", "00001101100", "00000110111", "00000101000",
	"00000010111", "00000011000", "000011001010", "000011001011", "000011001100", "000011001101", "000001101000", "000001101001",
	"000001101010", "000001101011", "000011010010", "000011010011", "000011010100", "000011010101", "000011010110", "000011010111",
	"000001101100", "000001101101", "000011011010", "000011011011", "000001010100", "000001010101", "000001010110", "000001010111",
	"000001100100", "000001100101", "000001010010", "000001010011", "000000100100", "000000110111", "000000111000", "000000100111",
	"000000101000", "000001011000", "000001011001", "000000101011", "000000101100", "000001011010", "000001100110", "000001100111",
}

// Make-up codes for 64, 128, ... 1728 by colour; index n/64-1.
var g4WhiteMakeup = [27]string{
	"11011", "10010", "010111", "0110111", "00110110", "00110111", "01100100", "01100101",
	"01101000", "01100111", "011001100", "011001101", "011010010", "011010011", "011010100", "011010101",
	"011010110", "011010111", "011011000", "011011001", "011011010", "011011011", "010011000", "010011001",
	"010011010", "011000", "010011011",
}

var g4BlackMakeup = [27]string{
	"0000001111", "000011001000", "000011001001", "000001011011", "000000110011", "000000110100", "000000110101", "0000001101100",
	"0000001101101", "0000001001010", "0000001001011", "0000001001100", "0000001001101", "0000001110010", "0000001110011", "0000001110100",
	"0000001110101", "0000001110110", "0000001110111", "0000001010010", "0000001010011", "0000001010100", "0000001010101", "0000001011010",
	"0000001011011", "0000001100100", "0000001100101",
}

// Make-up codes for 1792 .. 2560, shared by both colours; index n/64-28.
var g4ExtMakeup = [13]string{
	"00000001000", "00000001100", "00000001101", "000000010010", "000000010011", "000000010100", "000000010101",
	"000000010110", "000000010111", "000000011100", "000000011101", "000000011110", "000000011111",
}

// bitWriter packs code strings MSB first (TIFF FillOrder 1).
type bitWriter struct {
	out  []byte
	cur  byte
	nbit uint
}

func (w *bitWriter) put(code string) {
	for i := 0; i < len(code); i++ {
		w.cur <<= 1
		if code[i] == '1' {
			w.cur |= 1
		}
		w.nbit++
		if w.nbit == 8 {
			w.out = append(w.out, w.cur)
			w.cur, w.nbit = 0, 0
		}
	}
}

func (w *bitWriter) flush() []byte {
	if w.nbit > 0 {
		w.out = append(w.out, w.cur<<(8-w.nbit))
		w.cur, w.nbit = 0, 0
	}
	return w.out
}

// putRun writes one run length of a colour: make-up codes, then a
// terminating code (always present, possibly for 0).
func (w *bitWriter) putRun(n int, black bool) {
	term, makeup := &g4WhiteTerm, &g4WhiteMakeup
	if black {
		term, makeup = &g4BlackTerm, &g4BlackMakeup
	}
	for n >= 2624 {
		w.put(g4ExtMakeup[len(g4ExtMakeup)-1]) // 2560
		n -= 2560
	}
	if n >= 64 {
		m := n / 64
		if m <= len(makeup) {
			w.put(makeup[m-1])
		} else {
			w.put(g4ExtMakeup[m-28])
		}
		n -= m * 64
	}
	w.put(term[n])
}

// encodeG4 encodes img (pixels < 128 are black) as a T.6 bit stream.
func encodeG4(img *image.Gray) []byte {
	b := img.Bounds()
	width := b.Dx()
	ref := make([]bool, width) // the imaginary all-white row above the page
	cur := make([]bool, width)
	var w bitWriter
	for y := 0; y < b.Dy(); y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+width]
		for x, v := range row {
			cur[x] = v < 128
		}
		encodeRow(&w, cur, ref)
		ref, cur = cur, ref
	}
	w.put(g4EOL)
	w.put(g4EOL)
	return w.flush()
}

// pixel reads a row with everything past the end white, as T.6 assumes.
func pixel(row []bool, x int) bool { return x >= 0 && x < len(row) && row[x] }

// nextChange is the first position >= from whose colour differs from
// colour (len(row) when none): the next changing element.
func nextChange(row []bool, from int, colour bool) int {
	for x := from; x < len(row); x++ {
		if row[x] != colour {
			return x
		}
	}
	return len(row)
}

// encodeRow codes one row against ref (the shape of libtiff's
// Fax3Encode2DRow, with the colour of a0's run tracked explicitly so the
// row start, where a0 is imaginary, needs no special case).
func encodeRow(w *bitWriter, cur, ref []bool) {
	n := len(cur)
	a0, colour := 0, false // false = white
	a1 := nextChange(cur, 0, false)
	b1 := nextChange(ref, 0, false)
	for {
		b2 := n
		if b1 < n {
			b2 = nextChange(ref, b1, pixel(ref, b1))
		}
		switch d := b1 - a1; {
		case b2 < a1: // pass: a0 moves under b2, the colour stays
			w.put(g4Pass)
			a0 = b2
		case d >= -3 && d <= 3: // vertical: a1 is coded relative to b1
			w.put(g4Vertical[d+3])
			a0, colour = a1, !colour
		default: // horizontal: two runs, a0..a1 then a1..a2
			a2 := n
			if a1 < n {
				a2 = nextChange(cur, a1, !colour)
			}
			w.put(g4Horiz)
			w.putRun(a1-a0, colour)
			w.putRun(a2-a1, !colour)
			a0 = a2
		}
		if a0 >= n {
			return
		}
		a1 = nextChange(cur, a0, colour)
		b1 = nextChange(ref, a0, !colour)
		b1 = nextChange(ref, b1, colour)
	}
}
