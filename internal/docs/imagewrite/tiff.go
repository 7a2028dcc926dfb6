package imagewrite

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"image"
	"io"
	"sort"
)

// TIFF tag numbers and field types used by the writer (TIFF 6.0).
const (
	tagNewSubfileType  = 254
	tagImageWidth      = 256
	tagImageLength     = 257
	tagBitsPerSample   = 258
	tagCompression     = 259
	tagPhotometric     = 262
	tagFillOrder       = 266
	tagStripOffsets    = 273
	tagSamplesPerPixel = 277
	tagRowsPerStrip    = 278
	tagStripByteCounts = 279
	tagXResolution     = 282
	tagYResolution     = 283
	tagT6Options       = 293
	tagResolutionUnit  = 296
	tagPageNumber      = 297

	typeShort    = 3
	typeLong     = 4
	typeRational = 5

	compressionG4      = 4
	compressionDeflate = 8
)

type tiffEntry struct {
	tag, typ uint16
	vals     []uint32 // SHORT/LONG values, or num,den pairs for RATIONAL
}

// TIFFPage is one encoded page: its strip and the tags describing it.
// Write makes them from images; DeflateGrayPage makes one by hand.
type TIFFPage struct {
	data    []byte
	entries []tiffEntry
}

// encodeTIFFPage compresses one page: CCITT G4 (WhiteIsZero, 1 bit) for
// bilevel pages, Deflate 8-bit gray otherwise.
func encodeTIFFPage(img *image.Gray, bilevel bool, dpi, index, count int) (TIFFPage, error) {
	w, h := uint32(img.Bounds().Dx()), uint32(img.Bounds().Dy())
	es := []tiffEntry{
		{tagNewSubfileType, typeLong, []uint32{2}}, // one page of a multi-page document
		{tagImageWidth, typeLong, []uint32{w}},
		{tagImageLength, typeLong, []uint32{h}},
		{tagSamplesPerPixel, typeShort, []uint32{1}},
		{tagRowsPerStrip, typeLong, []uint32{h}},
		{tagXResolution, typeRational, []uint32{uint32(dpi), 1}},
		{tagYResolution, typeRational, []uint32{uint32(dpi), 1}},
		{tagResolutionUnit, typeShort, []uint32{2}}, // inch
		{tagPageNumber, typeShort, []uint32{uint32(index), uint32(count)}},
	}
	var data []byte
	if bilevel {
		data = encodeG4(img)
		es = append(es,
			tiffEntry{tagBitsPerSample, typeShort, []uint32{1}},
			tiffEntry{tagCompression, typeShort, []uint32{compressionG4}},
			tiffEntry{tagPhotometric, typeShort, []uint32{0}}, // WhiteIsZero, as fax
			tiffEntry{tagFillOrder, typeShort, []uint32{1}},
			tiffEntry{tagT6Options, typeLong, []uint32{0}})
	} else {
		var b bytes.Buffer
		zw := zlib.NewWriter(&b)
		for y := 0; y < int(h); y++ {
			if _, err := zw.Write(img.Pix[y*img.Stride : y*img.Stride+int(w)]); err != nil {
				return TIFFPage{}, fmt.Errorf("deflate: %w", err)
			}
		}
		if err := zw.Close(); err != nil {
			return TIFFPage{}, fmt.Errorf("deflate: %w", err)
		}
		data = b.Bytes()
		es = append(es,
			tiffEntry{tagBitsPerSample, typeShort, []uint32{8}},
			tiffEntry{tagCompression, typeShort, []uint32{compressionDeflate}},
			tiffEntry{tagPhotometric, typeShort, []uint32{1}}) // BlackIsZero
	}
	es = append(es,
		tiffEntry{tagStripOffsets, typeLong, []uint32{0}}, // both filled in by writeTIFF
		tiffEntry{tagStripByteCounts, typeLong, []uint32{0}})
	return TIFFPage{data: data, entries: es}, nil
}

// WriteTIFF writes pages as one little-endian multi-page TIFF: per page
// the strip, any out-of-line values, then the IFD, chained in order. It
// fills in each page's StripOffsets and StripByteCounts.
func WriteTIFF(w io.Writer, pages []TIFFPage) error {
	le := binary.LittleEndian
	out := []byte("II*\x00\x00\x00\x00\x00")
	link := 4 // where the offset of the next IFD goes
	for _, p := range pages {
		stripAt := uint32(len(out))
		out = append(out, p.data...)
		out = pad2(out)
		sort.Slice(p.entries, func(i, j int) bool { return p.entries[i].tag < p.entries[j].tag })
		// Out-of-line values (rationals) go before the IFD.
		extern := map[int]uint32{}
		for i, e := range p.entries {
			switch e.tag {
			case tagStripOffsets:
				p.entries[i].vals = []uint32{stripAt}
			case tagStripByteCounts:
				p.entries[i].vals = []uint32{uint32(len(p.data))}
			}
			if e.typ == typeRational {
				extern[i] = uint32(len(out))
				for _, v := range e.vals {
					out = le.AppendUint32(out, v)
				}
			}
		}
		ifdAt := uint32(len(out))
		le.PutUint32(out[link:], ifdAt)
		out = le.AppendUint16(out, uint16(len(p.entries)))
		for i, e := range p.entries {
			out = appendEntry(out, e, extern[i])
		}
		link = len(out)
		out = le.AppendUint32(out, 0)
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("write tiff: %w", err)
	}
	return nil
}

func appendEntry(out []byte, e tiffEntry, externAt uint32) []byte {
	le := binary.LittleEndian
	out = le.AppendUint16(out, e.tag)
	out = le.AppendUint16(out, e.typ)
	count := uint32(len(e.vals))
	if e.typ == typeRational {
		count /= 2
	}
	out = le.AppendUint32(out, count)
	var v [4]byte
	switch e.typ {
	case typeRational:
		le.PutUint32(v[:], externAt)
	case typeShort:
		for i, x := range e.vals[:min(2, len(e.vals))] {
			le.PutUint16(v[2*i:], uint16(x))
		}
	default:
		le.PutUint32(v[:], e.vals[0])
	}
	return append(out, v[:]...)
}

// pad2 keeps offsets word-aligned, as TIFF requires for IFDs.
func pad2(b []byte) []byte {
	if len(b)%2 == 1 {
		return append(b, 0)
	}
	return b
}

// DeflateGrayPage is page (of pages) as 8-bit gray whose header declares
// width x height whatever the Deflate data holds: for generators of
// hostile files (a decompression bomb declares far more pixels than it
// carries).
func DeflateGrayPage(width, height uint32, deflated []byte, page, pages int) TIFFPage {
	return TIFFPage{data: deflated, entries: []tiffEntry{
		{tagImageWidth, typeLong, []uint32{width}},
		{tagImageLength, typeLong, []uint32{height}},
		{tagBitsPerSample, typeShort, []uint32{8}},
		{tagCompression, typeShort, []uint32{compressionDeflate}},
		{tagPhotometric, typeShort, []uint32{1}},
		{tagSamplesPerPixel, typeShort, []uint32{1}},
		{tagRowsPerStrip, typeLong, []uint32{height}},
		{tagPageNumber, typeShort, []uint32{uint32(page), uint32(pages)}},
		{tagStripOffsets, typeLong, []uint32{0}},
		{tagStripByteCounts, typeLong, []uint32{0}},
	}}
}
