package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	invcorpus "github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
	invcorpus2 "github.com/airlock-dev/airlock/internal/docseval/invoicecorpus2"
	"github.com/airlock-dev/airlock/internal/docseval/reviewcorpus"
)

// The second corpora are written with truth airlock eval reads: the
// contracts' truth through reviewcorpus.ReadTruth, the invoices' through
// invoicecorpus.ReadCaseTruth, and the invoice corpus's own tenant, date
// and limits through corpus.json.
func TestCorpusOtherDrafter(t *testing.T) {
	dir := t.TempDir()
	rev := filepath.Join(dir, "review")
	if _, stderr, code := runCLI(t, nil, "corpus", "review", "--drafter", "other", "--split", "tune", "--n", "2", "--scans", "0", rev); code != 0 {
		t.Fatalf("corpus review: exit %d: %s", code, stderr)
	}
	for _, name := range []string{"draft-tune-001.pdf", "draft-tune-002.pdf"} {
		tr, err := reviewcorpus.ReadTruth(filepath.Join(rev, name))
		if err != nil || len(tr.Clauses) == 0 {
			t.Fatalf("%s: truth %+v, %v", name, tr, err)
		}
	}

	inv := filepath.Join(dir, "invoice")
	if _, stderr, code := runCLI(t, nil, "corpus", "invoice", "--drafter", "other", "--n", "2", inv); code != 0 {
		t.Fatalf("corpus invoice: exit %d: %s", code, stderr)
	}
	ents, _ := os.ReadDir(inv)
	truths := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".truth.json") {
			stem := strings.TrimSuffix(e.Name(), ".truth.json")
			matches, _ := filepath.Glob(filepath.Join(inv, stem+".*"))
			for _, m := range matches {
				if !strings.HasSuffix(m, ".truth.json") {
					if _, err := invcorpus.ReadCaseTruth(m); err != nil {
						t.Fatalf("%s: %v", m, err)
					}
					truths++
				}
			}
		}
	}
	if truths != 4 { // 2 per held-out seed
		t.Fatalf("%d invoices with truth, want 4", truths)
	}
	f := &invoiceFlags{approveLimit: []string{"10000"}}
	jf := &jobFlags{tenant: "other"}
	if err := corpusSettings(inv, f, jf); err != nil {
		t.Fatal(err)
	}
	if jf.tenant != invcorpus2.TenantID || f.asOf != invcorpus2.AsOf().Format("2006-01-02") ||
		!slices.Contains(f.approveLimit, "15000") || !slices.Contains(f.approveLimit, "SEK=160000") {
		t.Fatalf("settings not applied: tenant %q as-of %q limits %v", jf.tenant, f.asOf, f.approveLimit)
	}
	// A corpus.json with a field eval does not know is refused, not
	// half-applied.
	if err := os.WriteFile(filepath.Join(inv, "corpus.json"), []byte(`{"tenant_id":"x","approve_limit":"5"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := corpusSettings(inv, &invoiceFlags{}, &jobFlags{}); err == nil {
		t.Fatal("a corpus.json with an unknown field was accepted")
	}

	if _, stderr, code := runCLI(t, nil, "corpus", "redact", "--drafter", "other", "--split", "dev", "--n", "1", filepath.Join(dir, "redact")); code != 0 {
		t.Fatalf("corpus redact: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "redact", "canaries.json")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"corpus", "review", "--drafter", "nobody", dir},
		{"corpus", "invoice", "--drafter", "other", "--split", "half", dir},
		{"corpus", "redact", "--drafter", "other", "--split", "tune", dir},
	} {
		if _, _, code := runCLI(t, nil, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want a usage error (%d)", args, code, exitUsage)
		}
	}
}
