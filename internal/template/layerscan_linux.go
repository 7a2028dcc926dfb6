//go:build linux

package template

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
)

// Bounds on what flattening an image may hold or write, whatever its
// layers' byte count: a layer of a few kilobytes can declare a sparse file
// of a gigabyte, and mutate.Extract keeps every path and whiteout of the
// image in memory (1,500 whiteouts with 1 MB names took a 1.6 MB image to
// 2.25 GB of memory). Tests lower them.
var (
	maxImageNameLen   = 4096            // bytes of one entry's name or link target (PATH_MAX)
	maxImageNameBytes = int64(64 << 20) // names of all layers' entries together
)

// nameBudget counts the name bytes of every layer's entries; layers are
// scanned one at a time, but the budget is read from the writer's side.
type nameBudget struct{ used atomic.Int64 }

// layerScanner reads a layer's tar stream beside mutate.Extract (the
// verifying reader feeds both) and refuses, before mutate.Extract has
// gone past the entry, what would make the build hold or write much more
// than the image's size: sparse entries, overlong names and link targets,
// and more name bytes over the image than maxImageNameBytes.
type layerScanner struct {
	pw   *io.PipeWriter
	done chan error // the scan's verdict, once the stream ended
}

func newLayerScanner(names *nameBudget) *layerScanner {
	pr, pw := io.Pipe()
	s := &layerScanner{pw: pw, done: make(chan error, 1)}
	go func() {
		err := scanLayer(pr, names)
		// Refuse further writes with the verdict, and drain so the writer
		// never blocks on a scanner that stopped early.
		pr.CloseWithError(err)
		s.done <- err
	}()
	return s
}

// feed passes a chunk of the layer to the scanner; an error is its refusal.
func (s *layerScanner) feed(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	_, err := s.pw.Write(p)
	if errors.Is(err, io.ErrClosedPipe) {
		err = <-s.done
		s.done <- err
	}
	return err
}

// finish ends the stream and returns the scan's verdict.
func (s *layerScanner) finish() error {
	s.pw.Close()
	err := <-s.done
	s.done <- err
	return err
}

func scanLayer(r io.Reader, names *nameBudget) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			_, err = io.Copy(io.Discard, r) // trailing padding
			return err
		}
		if err != nil {
			return nil // a malformed layer is mutate.Extract's to report
		}
		if err := checkLayerEntry(hdr, names); err != nil {
			return err
		}
	}
}

func checkLayerEntry(hdr *tar.Header, names *nameBudget) error {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return fmt.Errorf("%.64q: sparse files are refused (a few bytes of layer would write %d)", hdr.Name, hdr.Size)
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return fmt.Errorf("%.64q: sparse files are refused (a few bytes of layer would write %d)", hdr.Name, hdr.Size)
		}
	}
	if len(hdr.Name) > maxImageNameLen || len(hdr.Linkname) > maxImageNameLen {
		return fmt.Errorf("%.64q...: a name or link target longer than %d bytes", hdr.Name, maxImageNameLen)
	}
	if n := names.used.Add(int64(len(hdr.Name) + len(hdr.Linkname))); n > maxImageNameBytes {
		return fmt.Errorf("the layers' entry names hold more than %d bytes", maxImageNameBytes)
	}
	return nil
}
