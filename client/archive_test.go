package client_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/api"
)

// A directory goes up and comes back through the archive routes.
func TestUploadDownloadDir(t *testing.T) {
	_, c := setup(t, api.Config{})
	ctx := context.Background()
	sb, err := c.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(src, "a", "b", "c.txt"), []byte("deep"), 0o644)
	os.WriteFile(filepath.Join(src, "top.txt"), []byte("top"), 0o644)
	res, err := sb.Files().UploadDir(ctx, src, "/job/tree")
	if err != nil || res.Entries != 4 || res.Bytes != 7 {
		t.Fatalf("UploadDir: %+v, %v", res, err)
	}
	if b, err := sb.Files().ReadAll(ctx, "/job/tree/a/b/c.txt"); err != nil || string(b) != "deep" {
		t.Fatalf("uploaded file: %q %v", b, err)
	}
	dst := filepath.Join(t.TempDir(), "new", "place")
	if _, err := sb.Files().DownloadDir(ctx, "/job/tree", dst); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a/b/c.txt": "deep", "top.txt": "top"} {
		if b, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(b) != want {
			t.Errorf("downloaded %s: %q %v", name, b, err)
		}
	}
	var buf bytes.Buffer
	if n, err := sb.Files().ReadArchive(ctx, "/job/tree", &buf); err != nil || n != int64(buf.Len()) || n == 0 {
		t.Errorf("ReadArchive: %d %v", n, err)
	}

	// A local problem is the local problem's class, not "unavailable".
	if _, err := sb.Files().UploadDir(ctx, filepath.Join(src, "missing"), "/job/x"); !errors.Is(err, client.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("UploadDir of a missing directory: %v, want not_found", err)
	}
	if _, err := sb.Files().UploadDir(ctx, filepath.Join(src, "top.txt"), "/job/x"); !errors.Is(err, client.ErrInvalidArgument) {
		t.Errorf("UploadDir of a file: %v, want invalid_argument", err)
	}
	if _, err := sb.Files().DownloadDir(ctx, "/job/none", t.TempDir()); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("DownloadDir of a missing directory: %v, want not_found", err)
	}
}

// The stream a sandbox sends back is untrusted: DownloadDir extracts it
// confined to the local directory.
func TestDownloadDirRefusesEscapes(t *testing.T) {
	for name, ents := range map[string][]tar.Header{
		"dot-dot":  {{Name: "out/../../escaped", Typeflag: tar.TypeReg}},
		"absolute": {{Name: "/tmp/escaped", Typeflag: tar.TypeReg}},
		"link then write through it": {
			{Name: "out/l", Typeflag: tar.TypeSymlink, Linkname: "../../outside"},
			{Name: "out/l/escaped", Typeflag: tar.TypeReg}},
		"link out":         {{Name: "out/l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}},
		"hard link out":    {{Name: "out/h", Typeflag: tar.TypeLink, Linkname: "../outside/f"}},
		"device":           {{Name: "out/null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}},
		"outside the root": {{Name: "other/x", Typeflag: tar.TypeReg}},
	} {
		t.Run(name, func(t *testing.T) {
			var body bytes.Buffer
			tw := tar.NewWriter(&body)
			for _, h := range ents {
				h.Mode = 0o644
				if err := tw.WriteHeader(&h); err != nil {
					t.Fatal(err)
				}
			}
			tw.Close()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/x-tar")
				w.Write(body.Bytes())
			}))
			defer srv.Close()
			c, err := client.New(srv.URL, "k")
			if err != nil {
				t.Fatal(err)
			}
			base := t.TempDir()
			local, outside := filepath.Join(base, "local"), filepath.Join(base, "outside")
			os.Mkdir(outside, 0o755)
			_, err = c.Sandbox("sbx-1").Files().DownloadDir(context.Background(), "/job/out", local)
			if !errors.Is(err, client.ErrInvalidArgument) {
				t.Fatalf("DownloadDir of a hostile stream: %v, want invalid_argument", err)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("written outside: %v", ents)
			}
			if _, err := os.Lstat(filepath.Join(base, "escaped")); err == nil {
				t.Error("an entry escaped the local directory")
			}
		})
	}
}
