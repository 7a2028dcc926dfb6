package review

import (
	"bytes"
	"strings"
	"testing"
)

// TestReportOfHostileContract runs a contract that carries markup and
// terminal escapes through Analyze and the renderers: nothing of it may
// stay live.
func TestReportOfHostileContract(t *testing.T) {
	hostile := `<script>alert(1)</script><img src=x onerror=alert(2)>` + "\x1b[31m"
	pb := testPlaybook(t)
	body := strings.Replace(testStandard, "thirty (30) days", "forty-five (45) days "+hostile, 1)
	r, err := Analyze(paras("4. FEE NOTICE "+hostile, body), pb)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Findings[0].Text, "<script>") {
		t.Fatal("the hostile text did not reach the finding; the test would prove nothing")
	}
	var html, md bytes.Buffer
	if err := RenderHTML(&html, r, "contract.pdf", nil); err != nil {
		t.Fatal(err)
	}
	if err := RenderIndex(&html, "batch", []IndexEntry{{Document: hostile, Href: "javascript:alert(1)", Result: r}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html.String(), "<script") || strings.Contains(html.String(), "<img") ||
		strings.Contains(html.String(), "javascript:") || !strings.Contains(html.String(), "&lt;script&gt;") {
		t.Error("HTML carries live markup from the contract")
	}
	if err := RenderMarkdown(&md, r, "contract.pdf", nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "\x1b") || strings.Contains(md.String(), "<script>") {
		t.Error("Markdown carries a terminal escape or raw markup from the contract")
	}
}
