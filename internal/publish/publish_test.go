package publish_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/publish"
	"github.com/airlock-dev/airlock/internal/publish/davtest"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		raw, host, path string // host "" = refused
	}{
		{"http://dav.internal/reports/", "dav.internal", "/reports/"},
		{"http://DAV.internal/reports", "dav.internal", "/reports/"},
		{"http://dav.internal", "dav.internal", "/"},
		{"http://dav.internal:80/a/b/", "dav.internal", "/a/b/"},
		{"https://dav.internal/reports/", "", ""},
		{"http://user:pw@dav.internal/reports/", "", ""},
		{"http://dav.internal/reports/?x=1", "", ""},
		{"http://dav.internal:8080/reports/", "", ""},
		{"http://10.0.0.1/reports/", "", ""},
		{"http://dav.internal/a/../b/", "", ""},
		{"dav.internal/reports/", "", ""},
		{"", "", ""},
	} {
		got, err := publish.Parse(c.raw)
		if c.host == "" {
			if !errdefs.IsInvalidArgument(err) {
				t.Errorf("Parse(%q) = %+v, %v; want invalid_argument", c.raw, got, err)
			}
			if err != nil && strings.Contains(err.Error(), "pw@") {
				t.Errorf("Parse(%q): the error quotes user info: %v", c.raw, err)
			}
			continue
		}
		if err != nil || got.Host != c.host || got.Path != c.path {
			t.Errorf("Parse(%q) = %+v, %v; want %s %s", c.raw, got, err, c.host, c.path)
		}
	}
	tg, _ := publish.Parse("http://dav.internal/r/")
	if u := tg.URL("a b.html"); u != "http://dav.internal/r/a%20b.html" {
		t.Errorf("URL = %s", u)
	}
}

// TestPutNginx PUTs to a real nginx DAV server: the file lands byte for
// byte (under a collection that did not exist), an environment proxy is
// ignored, and a refusal (401 without the credential the egress proxy
// would add) is an error naming the status.
func TestPutNginx(t *testing.T) {
	ctx := context.Background()
	open := davtest.Start(t, davtest.Options{Addr: davtest.FreeLoopback(t)})
	body := []byte("<html><body>report " + strings.Repeat("x", 200<<10) + "</body></html>")
	f := filepath.Join(t.TempDir(), "r.html")
	os.WriteFile(f, body, 0o600)
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	status, err := publish.Put(ctx, open.URL+"/reports/2026/r.html", f, 30*time.Second)
	if err != nil || status != 201 {
		t.Fatalf("Put = %d, %v; want 201", status, err)
	}
	got, err := open.File("reports/2026/r.html")
	if err != nil || string(got) != string(body) {
		t.Fatalf("nginx wrote %d bytes (%v), want %d", len(got), err, len(body))
	}
	if status, err := publish.Put(ctx, open.URL+"/reports/2026/r.html", f, 30*time.Second); err != nil || status != 204 {
		t.Fatalf("overwrite: Put = %d, %v; want 204", status, err)
	}

	locked := davtest.Start(t, davtest.Options{Addr: davtest.FreeLoopback(t), User: "publisher", Password: "s3cret-dav"})
	status, err = publish.Put(ctx, locked.URL+"/reports/r.html", f, 30*time.Second)
	if status != 401 || err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("without credentials: Put = %d, %v; want a 401 error", status, err)
	}
	if _, err := locked.File("reports/r.html"); !os.IsNotExist(err) {
		t.Fatalf("a refused PUT left a file: %v", err)
	}
}
