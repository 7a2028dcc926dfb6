package multinode

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
	"github.com/airlock-dev/airlock/internal/template"
)

// testHost is the host parts of the stand-in bakes: the nodes report its
// class.
var testHost = template.HostParts{Kernel: "test-kernel", Initramfs: "test-initrd.cpio.gz", QEMUVersion: "0.0-test", Accel: "tcg"}

// bake is a stand-in bake of template name in a builder's state dir:
// random memory, state and root files of the given sizes, published into
// the builder's registry the way a pulled build is. It returns the
// builder's state dir and the bake's manifest.
func bake(t *testing.T, name string, memB, stateB, rootB int64) (string, template.Manifest) {
	t.Helper()
	dir := t.TempDir()
	reg, err := template.NewRegistry(filepath.Join(dir, "templates"))
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 12)
	_, _ = rand.Read(key)
	m := template.Manifest{Name: name, Key: hex.EncodeToString(key), Host: testHost, MemoryMiB: 256, VCPUs: 1, DefaultTTLSeconds: 600}
	im, err := reg.BeginImport(m.Name, m.Key)
	if err != nil {
		t.Fatal(err)
	}
	sums := make([]string, 3)
	for i, f := range []struct {
		path string
		n    int64
	}{{im.MemPath(), memB}, {im.StatePath(), stateB}, {im.RootPath(), rootB}} {
		sums[i] = randomFile(t, f.path, f.n)
	}
	m.MemSHA256, m.StateSHA256, m.RootImageSHA256 = sums[0], sums[1], sums[2]
	if err := im.Commit(m); err != nil {
		t.Fatal(err)
	}
	got, err := reg.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return dir, got.Manifest
}

func randomFile(t *testing.T, path string, n int64) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.Reader, n); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// publish runs `airlock template publish` for the builder in stateDir
// and returns its output line.
func publish(t *testing.T, c *multiproc.Cluster, stateDir, name, blobURL, tokenFile string) string {
	t.Helper()
	airlock, _ := multiproc.Binaries(t)
	out, err := exec.Command(airlock, "template", "publish", name, "--blobs", blobURL, "--dsn", c.DSN,
		"--state-dir", stateDir, "--token-file", tokenFile).CombinedOutput()
	if err != nil {
		t.Fatalf("template publish: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// countingStore serves a blob directory over HTTP (blobs.Handler) and
// counts the bytes its GETs send (a GET of a missing blob included).
type countingStore struct {
	dir  *blobs.Dir
	sent atomic.Int64
	// cut, when set, cuts off every GET of this digest half-way.
	cut string
	// gate, when set, holds every GET until it is closed.
	gate chan struct{}
}

func (s *countingStore) handler(token string) http.Handler {
	h := blobs.Handler(s.dir, token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && s.gate != nil {
			select {
			case <-s.gate:
			case <-r.Context().Done():
				return
			}
		}
		if r.Method == http.MethodGet && s.cut != "" && strings.HasSuffix(r.URL.Path, s.cut) {
			st, err := s.dir.Stat(r.Context(), s.cut)
			if err != nil {
				http.Error(w, err.Error(), http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Length", itoa(st))
			w.WriteHeader(http.StatusOK)
			rc, _, err := s.dir.Get(context.Background(), s.cut)
			if err == nil {
				n, _ := io.CopyN(w, rc, st/2)
				s.sent.Add(n)
				rc.Close()
			}
			// Returning short of Content-Length makes the server close
			// the connection: the client reads an unexpected EOF.
			return
		}
		if r.Method == http.MethodGet {
			w = &countingWriter{ResponseWriter: w, n: &s.sent}
		}
		h.ServeHTTP(w, r)
	})
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n.Add(int64(n))
	return n, err
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
