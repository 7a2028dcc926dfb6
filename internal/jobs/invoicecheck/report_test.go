package invoicecheck

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// TestOneFlagPerCode: an invoice with two instruction phrases and hidden
// text carries one prompt_injection flag holding all three reasons (it
// used to carry the code three times).
func TestOneFlagPerCode(t *testing.T) {
	r := cleanResult()
	r.Injection = []result.Injection{{Page: 1, PhraseCode: result.PhraseSkipReview, Visible: true},
		{Page: 1, PhraseCode: result.PhrasePreApproved, HiddenKind: result.HiddenWhite}}
	r.HiddenText = []result.HiddenText{{Page: 1, Kind: result.HiddenWhite, Chars: 40, Excerpt: "x"}}
	r.Fields.AccountNumber = sp("987654321")
	r.Fields.RoutingNumber = sp("021000022")
	rep := checkRaw(t, testChecker(t, nil), marshal(t, r))
	var codes []string
	for _, f := range rep.Flags {
		codes = append(codes, f.Code)
	}
	slices.Sort(codes)
	if !slices.Equal(codes, []string{FlagBankChanged, FlagPromptInjection}) {
		t.Fatalf("flags %v", codes)
	}
	for _, f := range rep.Flags {
		want := map[string]int{FlagPromptInjection: 3, FlagBankChanged: 3}[f.Code]
		if len(f.Reasons) != want || strings.Count(f.Detail, "; ") != want-1 || f.Detail != joinDetails(f.Reasons) {
			t.Errorf("%s: %d reasons %+v, detail %q", f.Code, len(f.Reasons), f.Reasons, f.Detail)
		}
	}
	assertMasked(t, rep)
}

func joinDetails(rs []Reason) string {
	var ds []string
	for _, r := range rs {
		ds = append(ds, r.Detail)
	}
	return strings.Join(ds, "; ")
}

// TestResubmittedDocumentIsNoDuplicate: the same document judged again by
// a later run (the same content id, the same history) is noted as
// resubmitted and judged on its own merits; another document with the
// vendor's number is still a duplicate, and so are the same bytes twice in
// one batch (a vendor that sent the file twice must not be paid twice).
func TestResubmittedDocumentIsNoDuplicate(t *testing.T) {
	h := NewMemoryHistory()
	c := testChecker(t, h)
	ctx := context.Background()
	raw := marshal(t, cleanResult())
	check := func(c *Checker, id string) *Report {
		t.Helper()
		rep, err := c.CheckDocument(ctx, raw, id)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := check(c, "a1b2c3d4e5f60718"); rep.Decision != DecisionApprove || len(rep.Notes) != 0 {
		t.Fatalf("first: %s %+v %+v", rep.Decision, rep.Flags, rep.Notes)
	}
	if rep := check(c, "a1b2c3d4e5f60718"); !slices.Equal(rep.Codes(), []string{FlagDuplicate}) || len(rep.Notes) != 0 {
		t.Fatalf("same file twice in one batch: flags %v notes %+v", rep.Codes(), rep.Notes)
	}
	c = testChecker(t, h) // the next run
	rep := check(c, "a1b2c3d4e5f60718")
	if rep.Decision != DecisionApprove || len(rep.Notes) != 1 || rep.Notes[0].Code != NoteResubmitted {
		t.Fatalf("same file in the next run: %s flags %+v notes %+v", rep.Decision, rep.Flags, rep.Notes)
	}
	if rep := check(c, "ffff0000ffff0000"); !slices.Equal(rep.Codes(), []string{FlagDuplicate}) || len(rep.Notes) != 0 {
		t.Fatalf("another file with the number: flags %v notes %+v", rep.Codes(), rep.Notes)
	}
	// Without a content id (CheckResult) a second copy is a duplicate,
	// as before.
	if rep := checkRaw(t, c, raw); !slices.Equal(rep.Codes(), []string{FlagDuplicate}) {
		t.Fatalf("no content id: %v", rep.Codes())
	}
}
