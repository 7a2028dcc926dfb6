package extract

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// kind is an input format, decided by magic bytes only: the file name and
// any declared type are attacker-chosen and ignored.
type kind int

const (
	kindUnknown kind = iota
	kindPDF
	kindPNG
	kindJPEG
	kindTIFF
)

func (k kind) String() string {
	return [...]string{"unknown", "pdf", "png", "jpeg", "tiff"}[k]
}

// pdfHeaderWindow: readers accept "%PDF-" anywhere in the first KiB
// (junk before it is common from mail gateways), so the sniffer does too.
const pdfHeaderWindow = 1024

func sniff(head []byte) kind {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return kindPNG
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return kindJPEG
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return kindTIFF
	case bytes.Contains(head[:min(len(head), pdfHeaderWindow)], []byte("%PDF-")):
		return kindPDF
	}
	return kindUnknown
}

// input is the opened document: its size and first bytes, checked before
// any tool sees it.
type input struct {
	path string
	size int64
	kind kind
}

func openInput(path string, o Options) (input, error) {
	in, err := sniffInput(path, o)
	if err == nil && in.kind == kindUnknown {
		return input{}, unreadable("input is not a PDF, PNG, JPEG or TIFF")
	}
	return in, err
}

// sniffInput checks the file and reads its kind, kindUnknown for anything
// that is not a PDF or an image (a text, CSV or JSON document).
func sniffInput(path string, o Options) (input, error) {
	st, err := os.Stat(path)
	if err != nil {
		return input{}, fmt.Errorf("input: %w", err)
	}
	if !st.Mode().IsRegular() {
		return input{}, unreadable("input is not a regular file")
	}
	if st.Size() == 0 {
		return input{}, unreadable("input is empty")
	}
	if st.Size() > o.MaxBytes {
		return input{}, tooLarge("input is %d bytes, over the %d byte limit", st.Size(), o.MaxBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return input{}, fmt.Errorf("input: %w", err)
	}
	defer f.Close()
	head := make([]byte, pdfHeaderWindow)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		return input{}, fmt.Errorf("read input: %w", err)
	}
	return input{path: path, size: st.Size(), kind: sniff(head[:n])}, nil
}
