package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

func TestFactsInReports(t *testing.T) {
	r := &result.Result{Playbook: result.PlaybookRef{Name: "p", Version: "1"}, Findings: []result.Finding{},
		Parties:      []result.Party{{Name: "Evil <script>alert(1)</script> Corp", Role: "Customer", Signatory: "\x1b[31mJ"}},
		KeyDates:     result.KeyDates{EffectiveDate: "2025-03-03", NoticeDeadlines: []result.NoticeDeadline{{Event: "non-renewal", Notice: "60 days", Date: "2027-01-02"}}},
		Obligations:  []result.Obligation{{Party: "Customer", Action: "pay | each ![x](http://e) invoice", DueDate: "2025-04-02", Page: 1}},
		DefinedTerms: []result.DefinedTerm{{Term: "Steering Committee", Problems: []string{result.ProblemUndefined}}},
	}
	var h bytes.Buffer
	if err := RenderHTML(&h, r, "c.pdf", nil); err != nil {
		t.Fatal(err)
	}
	html := h.String()
	if strings.Contains(html, "<script>alert") || !strings.Contains(html, "&lt;script&gt;") {
		t.Error("a party name reached the HTML unescaped")
	}
	for _, want := range []string{"2027-01-02", "2025-04-02", "Steering Committee", "undefined"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	var m bytes.Buffer
	if err := RenderMarkdown(&m, r, "c.pdf", nil); err != nil {
		t.Fatal(err)
	}
	md := m.String()
	if strings.Contains(md, "\x1b") || strings.Contains(md, "![x]") || strings.Contains(md, "pay | each") {
		t.Errorf("hostile text reached the Markdown: %q", md)
	}
	if !strings.Contains(md, "## Parties, dates and obligations") || !strings.Contains(md, "2025-04-02") {
		t.Errorf("Markdown lacks the facts: %s", md)
	}
}
