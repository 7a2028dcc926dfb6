package api_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/internal/api"
)

func tarOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	return buf.Bytes()
}

// TestArchive: a tar stream goes in as a directory, comes back as one
// (application/x-tar, named from the base name), and the errors before
// streaming are JSON.
func TestArchive(t *testing.T) {
	h := newHarness(t, api.Config{MaxUploadBytes: 1 << 20})
	id := h.create(h.keyA, nil)
	base := "/v1/sandboxes/" + id + "/archive"
	r := h.do("PUT", base+"?path=/job/in", h.keyA, tarOf(t, map[string]string{"a.txt": "alpha", "sub/b.txt": "beta"}))
	var wr wire.WriteArchiveResponse
	if err := json.Unmarshal(r.body, &wr); r.status != 200 || err != nil || wr.Entries != 2 || wr.Bytes != 9 {
		t.Fatalf("put archive: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/v1/sandboxes/"+id+"/files?path=/job/in/sub/b.txt", h.keyA, nil); string(r.body) != "beta" {
		t.Errorf("a file unpacked reads %d %q", r.status, r.body)
	}
	r = h.do("GET", base+"?path=/job/in", h.keyA, nil)
	if r.status != 200 || r.header.Get("Content-Type") != "application/x-tar" {
		t.Fatalf("get archive: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	got := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(r.body))
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(tr)
		got[hdr.Name] = string(b)
	}
	if got["in/a.txt"] != "alpha" || got["in/sub/b.txt"] != "beta" {
		t.Errorf("archive read back: %v", got)
	}

	wantErr(t, h.do("GET", base+"?path=/job/none", h.keyA, nil), 404, "not_found")
	wantErr(t, h.do("GET", base+"?path=/", h.keyA, nil), 400, "invalid_argument")
	wantErr(t, h.do("GET", base+"?path=/job/../etc", h.keyA, nil), 400, "invalid_argument")
	wantErr(t, h.do("PUT", base+"?path=/job&mode=0644", h.keyA, tarOf(t, nil)), 400, "invalid_argument")
	wantErr(t, h.do("PUT", base+"?path=/job", h.keyA, tarOf(t, map[string]string{"../x": "x"})), 400, "invalid_argument")
	wantErr(t, h.do("PUT", base+"?path=/job", h.keyB, tarOf(t, nil)), 404, "not_found")
	wantErr(t, h.do("PUT", base+"?path=/job", h.keyA, strings.Repeat("x", 2<<20)), 413, "resource_exhausted")

	req, _ := http.NewRequest("PUT", h.env.TCPURL+base+"?path=/job", bytes.NewReader(tarOf(t, nil)))
	req.Header.Set("Authorization", "Bearer "+h.keyA)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	wantErr(t, resp{res.StatusCode, res.Header, b, res.Close}, 400, "invalid_argument")
}
