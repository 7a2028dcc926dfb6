//go:build linux

package template

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// rawHeader is one 512-byte ustar header block.
func rawHeader(name string, typ byte, size int64) []byte {
	b := make([]byte, 512)
	copy(b[0:100], name)
	copy(b[100:108], "0000644\x00")
	copy(b[108:116], "0000000\x00")
	copy(b[116:124], "0000000\x00")
	copy(b[124:136], fmt.Sprintf("%011o\x00", size))
	copy(b[136:148], "00000000000\x00")
	b[156] = typ
	copy(b[257:265], "ustar\x0000")
	copy(b[148:156], "        ")
	var sum int
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

func pad(b []byte) []byte { return append(b, make([]byte, (512-len(b)%512)%512)...) }

func paxRecord(k, v string) string {
	n := len(k) + len(v) + 3
	for n != len(fmt.Sprintf("%d %s=%s\n", n, k, v)) {
		n = len(fmt.Sprintf("%d %s=%s\n", n, k, v))
	}
	return fmt.Sprintf("%d %s=%s\n", n, k, v)
}

// sparseLayer is a layer of about 2 KB holding a GNU PAX 1.0 sparse file
// that reads as realSize bytes (all but the last a hole).
func sparseLayer(t *testing.T, realSize int64) v1.Layer {
	t.Helper()
	recs := paxRecord("GNU.sparse.major", "1") + paxRecord("GNU.sparse.minor", "0") +
		paxRecord("GNU.sparse.name", "bomb") + paxRecord("GNU.sparse.realsize", fmt.Sprint(realSize))
	sparseMap := pad([]byte(fmt.Sprintf("1\n%d\n1\n", realSize-1)))
	data := append(sparseMap, pad([]byte("x"))...)
	var buf bytes.Buffer
	buf.Write(rawHeader("PaxHeaders/bomb", 'x', int64(len(recs))))
	buf.Write(pad([]byte(recs)))
	buf.Write(rawHeader("GNUSparseFile.0/bomb", '0', int64(len(sparseMap)+1)))
	buf.Write(data)
	buf.Write(make([]byte, 1024))
	raw := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil })
	must(t, err)
	return l
}

// What made a small image write or hold gigabytes is refused while it is
// read: a sparse file, names longer than PATH_MAX (whiteouts included),
// and more name bytes over the image than the bound.
func TestExtractImageBoundsWhatIsWrittenAndHeld(t *testing.T) {
	requireRootForChown(t)
	manyNames := func(n, length int) []entry {
		var es []entry
		for i := 0; i < n; i++ {
			el := strings.Repeat("d", 200) // long names of elements within NAME_MAX
			es = append(es, entry{name: fmt.Sprintf("%s/%s/%s/%s/%0*d", el, el, el, el, length-4*201, i)})
		}
		return es
	}
	for _, tc := range []struct {
		name  string
		layer func(t *testing.T) v1.Layer
		want  string
	}{
		{"sparse file", func(t *testing.T) v1.Layer { return sparseLayer(t, 1<<30) }, "sparse files are refused"},
		{"whiteout with a 1 MB name", func(t *testing.T) v1.Layer {
			return layerOf(t, entry{name: "dir/.wh." + strings.Repeat("w", 1000_000)})
		}, "longer than 4096"},
		{"names over the image's bound", func(t *testing.T) v1.Layer {
			old := maxImageNameBytes
			maxImageNameBytes = 64 << 10
			t.Cleanup(func() { maxImageNameBytes = old })
			return layerOf(t, manyNames(100, 1000)...)
		}, "names hold more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := ImageRef{Transport: TransportDockerArchive, Path: dockerArchive(t, imageOf(t, nil, "", tc.layer(t)))}
			root, err := extractTo(t, ref)
			if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want invalid_argument containing %q", err, tc.want)
			}
			if n := treeBytes(t, root); n > 2<<20 { // the bound's slack is 1 MiB
				t.Errorf("%d bytes written before the refusal", n)
			}
		})
	}
}

// treeBytes is the disk space the files under root take.
func treeBytes(t *testing.T, root string) int64 {
	t.Helper()
	var n int64
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Sys().(*syscall.Stat_t).Blocks * 512
			}
		}
		return nil
	})
	return n
}
