package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&` + "\x1b[31m\u202e"

// hostileResult is a result whose every string attacks the report, as a
// compromised guest could write it (review's own tests run the same
// check on text that went through Analyze).
func hostileResult(t *testing.T) *result.Result {
	t.Helper()
	fs := []result.Finding{{
		Clause: "notice_fee", Title: "Notice and Fee " + hostile, Status: result.StatusDeviation, Similarity: 0.95,
		NumericChange: true, LocatedBy: result.LocatedByHeading, Heading: "4. NOTICE AND FEE " + hostile,
		Text:           "The Licensor shall notify each employee within forty-five (45) days " + hostile,
		ExpectedValues: map[string]string{"duration_1": "thirty (30) days"},
		FoundValues:    map[string]string{"duration_1": "forty-five (45) days " + hostile},
		Redline: []result.Segment{{Op: result.OpEqual, Text: "notify each employee within"},
			{Op: result.OpDelete, Text: "thirty (30)"}, {Op: result.OpInsert, Text: "forty-five (45)"},
			{Op: result.OpEqual, Text: "days " + hostile}},
		TermChanges: []result.TermChange{{Name: "duration_1", Expected: "thirty (30) days", Found: "forty-five (45) days " + hostile,
			Change: result.ChangeHigher, Verdict: result.VerdictWorse}},
		Pages:    []int{1},
		Location: &result.Location{Section: "4. NOTICE AND FEE " + hostile, Page: 1, FirstSentence: 2, LastSentence: 3, SectionSentences: 4},
		Severity: result.SeverityHigh, Guidance: "Escalate. " + hostile,
	}}
	r := &result.Result{Playbook: result.PlaybookRef{Name: "test " + hostile, Version: "1"}, Findings: fs, Summary: result.Summarize(fs)}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRenderHTMLEscapes(t *testing.T) {
	r := hostileResult(t)
	var b bytes.Buffer
	if err := RenderHTML(&b, r, "contract "+hostile+".pdf", []string{"pdf_javascript"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<script", "<img", "onerror=alert"} {
		if strings.Contains(strings.ToLower(out), strings.ToLower(bad)) && !strings.Contains(out, "&lt;img") {
			t.Errorf("report contains %q unescaped", bad)
		}
	}
	if strings.Contains(out, "<script") || strings.Contains(out, "<img") {
		t.Error("report contains live markup from the document")
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "<del>", "<ins>", "Content-Security-Policy", "@media print",
		"The PDF carries JavaScript"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(out, "http://") || strings.Contains(out, "https://") {
		t.Error("report loads an external resource")
	}
}

func TestRenderIndex(t *testing.T) {
	r := hostileResult(t)
	var b bytes.Buffer
	err := RenderIndex(&b, "Batch "+hostile, []IndexEntry{
		{Document: "a.pdf", Href: "a.html", Result: r},
		{Document: "b" + hostile, Href: "javascript:alert(3)", Result: r},
		{Document: "c.pdf", Error: "unreadable: " + hostile},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "<script") || strings.Contains(out, "javascript:") {
		t.Errorf("index has live markup or a script URL:\n%s", out)
	}
	for _, want := range []string{`href="a.html"`, "#ZgotmplZ", "failed: unreadable", "high"} {
		if !strings.Contains(out, want) {
			t.Errorf("index lacks %q", want)
		}
	}
}

func TestRenderMarkdown(t *testing.T) {
	r := hostileResult(t)
	var b bytes.Buffer
	if err := RenderMarkdown(&b, r, "doc*"+hostile, []string{"pdf_embedded_files"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\u202e") {
		t.Error("markdown carries terminal control or bidi characters")
	}
	for _, want := range []string{"**Risk:** The PDF carries embedded files", "~~thirty (30)~~", "**forty-five (45)", `\<script\>`, `doc\*`, `| duration\_1 | thirty (30) days | forty-five (45) days \<script\>`} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestMdEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"*bold* _em_ `code` [link](x)", `\*bold\* \_em\_ \` + "`" + `code\` + "`" + ` \[link\](x)`},
		{"a\nb\tc", "a b c"},
		{"\x1b[2J\x07bell", `\[2Jbell`},
		{"<b>&amp;", `\<b\>\&amp;`},
	}
	for _, tt := range tests {
		if got := mdEscape(tt.in); got != tt.want {
			t.Errorf("mdEscape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWorstSeverity(t *testing.T) {
	r := &result.Result{Findings: []result.Finding{
		{Status: result.StatusMatch, Severity: "critical"},
		{Status: result.StatusMissing, Severity: "medium"},
		{Status: result.StatusDeviation, Severity: "low"},
	}}
	if got := worstSeverity(r); got != "medium" {
		t.Errorf("worst %q, want medium (a matching critical clause is no issue)", got)
	}
	if got := worstSeverity(&result.Result{Findings: []result.Finding{{Status: result.StatusMatch, Severity: "high"}}}); got != "" {
		t.Errorf("worst %q, want none", got)
	}
}

// A person reading the report goes from the summary row to the clause's
// card, sees where the clause is and which way a changed term goes.
func TestRenderHTMLLinksLocationAndDirection(t *testing.T) {
	r := hostileResult(t)
	r.Findings[0].Clause = `notice "fee"<x>`
	var b bytes.Buffer
	if err := RenderHTML(&b, r, "contract.pdf", nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`<a href="#clause-1-noticefeex">`, `id="clause-1-noticefeex"`,
		"sentences 2-3 of 4", "higher, worse for us"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	var md bytes.Buffer
	if err := RenderMarkdown(&md, r, "contract.pdf", nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| higher, worse for us |", "sentences 2-3 of 4"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

func TestWhere(t *testing.T) {
	tests := []struct {
		l    *result.Location
		want string
	}{
		{nil, ""},
		{&result.Location{Section: "3. Term", Page: 1, FirstSentence: 2, LastSentence: 2, SectionSentences: 5}, "in section “3. Term”, sentence 2 of 5"},
		{&result.Location{Page: 2, FirstSentence: 12, LastSentence: 13, SectionSentences: 40}, "sentences 12-13 of the document (under no heading)"},
	}
	for _, tt := range tests {
		if got := where(tt.l); got != tt.want {
			t.Errorf("where(%+v) = %q, want %q", tt.l, got, tt.want)
		}
	}
}
