package blobs_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// conformance checks what every Store must do.
func conformance(t *testing.T, s blobs.Store) {
	ctx := context.Background()
	body := bytes.Repeat([]byte("airlock blob "), 100000)
	d := digestOf(body)
	if _, err := s.Stat(ctx, d); !errdefs.IsNotFound(err) {
		t.Fatalf("stat of an absent blob: %v, want not_found", err)
	}
	if _, _, err := s.Get(ctx, d); !errdefs.IsNotFound(err) {
		t.Fatalf("get of an absent blob: %v, want not_found", err)
	}
	if _, err := s.Stat(ctx, "../../etc/passwd"); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("stat of a bad digest: %v, want invalid_argument", err)
	}
	other := digestOf([]byte("something else"))
	if err := s.Put(ctx, other, bytes.NewReader(body), int64(len(body))); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("put under another digest: %v, want invalid_argument", err)
	}
	if _, err := s.Stat(ctx, other); !errdefs.IsNotFound(err) {
		t.Fatalf("a refused put left a blob: %v", err)
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	got, sent, err := blobs.Upload(ctx, s, path)
	if err != nil || got != d || sent != int64(len(body)) {
		t.Fatalf("upload: %s %d %v", got, sent, err)
	}
	if _, sent, err := blobs.Upload(ctx, s, path); err != nil || sent != 0 {
		t.Fatalf("upload of a present blob sent %d bytes (%v), want 0", sent, err)
	}
	if n, err := s.Stat(ctx, d); err != nil || n != int64(len(body)) {
		t.Fatalf("stat: %d %v", n, err)
	}
	rc, n, err := s.Get(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || n != int64(len(body)) || !bytes.Equal(b, body) {
		t.Fatalf("get: %d bytes (size %d): %v", len(b), n, err)
	}
}

func TestDir(t *testing.T) {
	s, err := blobs.Open("file://"+t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	conformance(t, s)
}

func TestHTTP(t *testing.T) {
	d, err := blobs.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(blobs.Handler(d, "put-token"))
	defer srv.Close()
	s, err := blobs.Open(srv.URL, "put-token")
	if err != nil {
		t.Fatal(err)
	}
	conformance(t, s)
	// Without the token (or with another) every PUT is refused.
	body := []byte("needs a token")
	for _, tok := range []string{"", "wrong"} {
		anon, _ := blobs.Open(srv.URL, tok)
		if err := anon.Put(context.Background(), digestOf(body), bytes.NewReader(body), int64(len(body))); !errors.Is(err, errdefs.ErrPermissionDenied) {
			t.Fatalf("put with token %q: %v, want permission_denied", tok, err)
		}
	}
	// A server without a token takes no PUT at all.
	ro := httptest.NewServer(blobs.Handler(d, ""))
	defer ro.Close()
	s2, _ := blobs.Open(ro.URL, "")
	if err := s2.Put(context.Background(), digestOf(body), bytes.NewReader(body), int64(len(body))); err == nil {
		t.Fatal("a server without a token took a PUT")
	}
}

func TestOpenRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "ftp://x/y", "file://host/dir", "file:relative", "http://", "s3://bucket"} {
		if _, err := blobs.Open(u, ""); !errdefs.IsInvalidArgument(err) {
			t.Errorf("Open(%q): %v, want invalid_argument", u, err)
		}
	}
	if !strings.HasPrefix(blobs.Key(strings.Repeat("a", 64)), "sha256/") {
		t.Error("key")
	}
}
