package jobs

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/publish"
)

// TestPublisher: the publish sandbox asks for the target as a credential
// route and nothing else, is labelled with the document, the file's hash
// and the host (never the path or content), gets the file and is killed;
// a refused sandbox is publish_refused, a failed PUT publish_failed.
func TestPublisher(t *testing.T) {
	tg, err := publish.Parse("http://dav.internal/reports/")
	if err != nil {
		t.Fatal(err)
	}
	p := &Publisher{Target: tg, Template: "legal-doc-review", Metadata: map[string]string{"matter": "M-1"}}
	doc := Doc{Path: "/x/Secret Deal.pdf", ID: "0123456789abcdef"}
	data := []byte("<html>report</html>")
	m := &memSandboxes{tool: func(files map[string][]byte) (int, []byte) {
		if string(files[guestPublishFile]) != string(data) {
			return 1, nil
		}
		return 0, nil
	}}
	out, lerr := p.Publish(t.Context(), m, doc, "Secret-Deal-01234567.html", data)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if out.URL != "http://dav.internal/reports/Secret-Deal-01234567.html" || out.SHA256 != publish.SHA256(data) || out.Bytes != len(data) {
		t.Errorf("published %+v", out)
	}
	o := m.opts[0]
	if len(o.Routes) != 1 || o.Routes[0] != "dav.internal" || len(o.Domains) != 0 {
		t.Errorf("egress asked: domains %v routes %v; want the one route", o.Domains, o.Routes)
	}
	want := map[string]string{"matter": "M-1", "job": "publish", "doc_sha256": doc.ID, "publish_sha256": out.SHA256, "publish_host": "dav.internal"}
	for k, v := range want {
		if o.Metadata[k] != v {
			t.Errorf("label %s = %q, want %q", k, o.Metadata[k], v)
		}
	}
	for _, v := range o.Metadata {
		if strings.Contains(v, "reports") || strings.Contains(v, "Secret") {
			t.Errorf("a label holds the path or name: %v", o.Metadata)
		}
	}
	if m.killed != 1 {
		t.Errorf("%d sandboxes killed, want 1", m.killed)
	}

	m.tool = func(map[string][]byte) (int, []byte) { return 1, nil }
	if _, lerr := p.Publish(t.Context(), m, doc, "r.html", data); lerr == nil || lerr.Code != publish.CodeFailed {
		t.Errorf("failed PUT: %v, want %s", lerr, publish.CodeFailed)
	}
	m.probe = errdefs.FailedPrecondition("egress rule \"job-1\": \"dav.internal\" is not a credential route")
	if _, lerr := p.Publish(t.Context(), m, doc, "r.html", data); lerr == nil || lerr.Code != publish.CodeRefused {
		t.Errorf("refused sandbox: %v, want %s", lerr, publish.CodeRefused)
	}
}
