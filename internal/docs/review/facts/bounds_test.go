package facts

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// TestHostileBounded: a document built to overflow every list still
// yields facts the host accepts, in bounded time.
func TestHostileBounded(t *testing.T) {
	var paras []Paragraph
	var pre strings.Builder
	pre.WriteString("This Agreement is made on March 3, 2025 between ")
	for i := range 50 {
		fmt.Fprintf(&pre, "Party%d Holdings LLC, a Delaware company with offices at %s (\"P%d\"), and ", i, strings.Repeat("x", 600), i)
	}
	paras = append(paras, Paragraph{Text: pre.String() + "Last LLC (\"Last\").", Pages: []int{1}})
	for i := range hostileParas {
		paras = append(paras, Paragraph{Text: fmt.Sprintf(`"Term%d" means the Thing%d of the Big Undefined%d. P1 shall pay the Fee%d within %d days after the Effective Date. Either party may give notice at least 10 days before the end of the Term. This renews. %s`,
			i, i, i, i, i%90+1, strings.Repeat("P1 ", 200)), Pages: []int{1 + i/10}})
	}
	start := time.Now()
	f := Extract(paras)
	t.Logf("%d paragraphs in %v: %d parties, %d terms, %d obligations, %d notice deadlines",
		len(paras), time.Since(start), len(f.Parties), len(f.DefinedTerms), len(f.Obligations), len(f.KeyDates.NoticeDeadlines))
	r := result.Result{Findings: []result.Finding{}}
	f.Into(&r)
	if err := r.Validate(); err != nil {
		t.Fatalf("the host would refuse these facts: %v", err)
	}
	if len(f.DefinedTerms) != result.MaxDefinedTerms || len(f.Obligations) != result.MaxObligations {
		t.Errorf("%d terms, %d obligations: want both lists filled to their limits", len(f.DefinedTerms), len(f.Obligations))
	}
	// Fit keeps the whole result under a limit (a small one here, to
	// make it act).
	const limit = 64 << 10
	Fit(&r, limit)
	b, err := json.Marshal(&r)
	if err != nil || len(b) > limit || len(r.Parties) == 0 {
		t.Errorf("after Fit: %d bytes (limit %d), %d parties, %v", len(b), limit, len(r.Parties), err)
	}
	if err := r.Validate(); err != nil {
		t.Errorf("after Fit: %v", err)
	}
}

func FuzzExtract(f *testing.F) {
	f.Add("This Agreement (the \"Agreement\") is entered into as of March 3, 2025 by and between A Inc., a Delaware corporation (\"Customer\"), and B LLC (\"Provider\").",
		"Customer shall pay within thirty (30) days after the Effective Date. \"Fee\" means the fee.")
	f.Add("PARTIES", "(1) X LIMITED of 1 Road (the \"Supplier\"); and")
	f.Fuzz(func(t *testing.T, a, b string) {
		fs := Extract([]Paragraph{{Text: a, Pages: []int{1}}, {Text: b, Pages: []int{1, 2}}, {Text: a + " " + b}})
		r := result.Result{Findings: []result.Finding{}}
		fs.Into(&r)
		if err := r.Validate(); err != nil {
			t.Fatalf("the host would refuse these facts: %v", err)
		}
	})
}

var hostileParas = 2000
