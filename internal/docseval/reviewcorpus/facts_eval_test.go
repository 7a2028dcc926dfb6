package reviewcorpus

import (
	"fmt"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/facts"
)

// TestFactsOnCorpus scores the guest's facts extraction on the generated
// contracts' paragraphs (the text layer as extraction yields it): parties
// (name, role, signatory) and the effective date. The generator's
// preamble and signature blocks were not used to write the extractor.
func TestFactsOnCorpus(t *testing.T) {
	cs, err := Generate(Options{Seed: 5, Contracts: 60})
	if err != nil {
		t.Fatal(err)
	}
	type pr struct{ tp, fp, fn int }
	score := map[string]*pr{}
	for _, k := range []string{"parties.name", "parties.role", "parties.signatory", "key_dates.effective_date"} {
		score[k] = &pr{}
	}
	value := func(k, got, want string) {
		s := score[k]
		switch {
		case got == want && got != "":
			s.tp++
		case got != "" && want != "":
			s.fp++
			s.fn++
		case got != "":
			s.fp++
		case want != "":
			s.fn++
		}
	}
	for _, c := range cs {
		paras := make([]facts.Paragraph, 0, len(c.Paragraphs))
		for _, p := range c.Paragraphs {
			paras = append(paras, facts.Paragraph{Text: p.Text, Pages: p.Pages})
		}
		got := facts.Extract(paras)
		value("key_dates.effective_date", got.KeyDates.EffectiveDate, c.Truth.EffectiveDate)
		used := map[int]bool{}
		for _, w := range c.Truth.Parties {
			var name, role, sig string
			for i, g := range got.Parties {
				if !used[i] && strings.EqualFold(g.Name, w.Name) {
					used[i] = true
					name, role, sig = g.Name, g.Role, g.Signatory
					break
				}
			}
			if name == "" {
				t.Logf("%s: party %q missed (got %+v)", c.Truth.Contract, w.Name, got.Parties)
			}
			value("parties.name", name, w.Name)
			value("parties.role", role, w.Role)
			value("parties.signatory", sig, w.Signatory)
		}
		for i, g := range got.Parties {
			if !used[i] {
				score["parties.name"].fp++
				t.Logf("%s: spurious party %q", c.Truth.Contract, g.Name)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-26s %4s %4s %4s %9s %6s\n", "field", "tp", "fp", "fn", "precision", "recall")
	for _, k := range []string{"parties.name", "parties.role", "parties.signatory", "key_dates.effective_date"} {
		s := score[k]
		p, r := frac(s.tp, s.tp+s.fp), frac(s.tp, s.tp+s.fn)
		fmt.Fprintf(&b, "%-26s %4d %4d %4d %9.2f %6.2f\n", k, s.tp, s.fp, s.fn, p, r)
		if p < 0.95 || r < 0.95 {
			t.Errorf("%s: precision %.2f, recall %.2f, below 0.95", k, p, r)
		}
	}
	t.Log(b.String())
}

func frac(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}
