package invoicecheck

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

func TestCleanInvoiceIsApproved(t *testing.T) {
	c := testChecker(t, nil)
	rep := checkRaw(t, c, marshal(t, cleanResult()))
	if rep.Decision != DecisionApprove || len(rep.Flags) != 0 {
		t.Fatalf("clean invoice: %s %+v", rep.Decision, rep.Flags)
	}
	if rep.VendorID != "v-acme" || rep.MatchedBy != "tax_id" {
		t.Fatalf("vendor %q by %q", rep.VendorID, rep.MatchedBy)
	}
}

func TestChecksFlag(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *result.Result)
		want   []string // exact set of codes
	}{
		{"bank account changed", func(r *result.Result) { r.Fields.AccountNumber = sp("987654321") }, []string{FlagBankChanged}},
		{"routing checksum fails", func(r *result.Result) { r.Fields.RoutingNumber = sp("021000022") }, []string{FlagBankChanged}},
		{"IBAN not on file for a US vendor", func(r *result.Result) {
			r.Fields.IBAN = sp("DE89370400440532013000")
			r.FieldSources[result.FieldIBAN] = src(0.95)
		}, []string{FlagBankChanged}},
		{"unknown vendor", func(r *result.Result) { r.Fields.VendorName = sp("Initech LLC"); r.Fields.VendorTaxID = nil }, []string{FlagUnknownVendor}},
		{"name matches but tax id differs", func(r *result.Result) { r.Fields.VendorTaxID = sp("98-7654321") }, []string{FlagUnknownVendor}},
		{"total mismatch", func(r *result.Result) { r.Fields.Total = sp("1100.01") }, []string{FlagTotalMismatch}},
		{"line items off the subtotal", func(r *result.Result) {
			r.Fields.LineItems[1].Amount = sp("410.00")
			r.Fields.LineItems[1].UnitPrice = sp("102.50")
		}, []string{FlagTotalMismatch}},
		{"line quantity x price", func(r *result.Result) { r.Fields.LineItems[0].UnitPrice = sp("61.00") }, []string{FlagTotalMismatch}},
		{"no quantity, amount no multiple of the price", func(r *result.Result) {
			r.Fields.LineItems[0].Quantity, r.Fields.LineItems[0].UnitPrice = nil, sp("55.55")
		}, []string{FlagTotalMismatch}},
		{"high value", func(r *result.Result) {
			r.Fields.Subtotal, r.Fields.Total = sp("10900.00"), sp("11000.00")
			r.Fields.LineItems[1].Amount, r.Fields.LineItems[1].Quantity = sp("10300.00"), sp("103")
		}, []string{FlagHighValue}},
		{"past due", func(r *result.Result) { r.Fields.DueDate = sp("2026-03-19") }, []string{FlagPastDue}},
		{"due before invoice date", func(r *result.Result) { r.Fields.InvoiceDate = sp("2026-05-01") }, []string{FlagPastDue}},
		{"no due date: terms make it past due", func(r *result.Result) {
			r.Fields.DueDate, r.Fields.InvoiceDate = nil, sp("2026-01-02")
			delete(r.FieldSources, result.FieldDueDate)
		}, []string{FlagPastDue}},
		{"low confidence total", func(r *result.Result) { r.FieldSources[result.FieldTotal] = src(0.4) }, []string{FlagLowConfidence}},
		{"account read faintly but exactly as on file", func(r *result.Result) {
			s := src(0.4)
			s.Issues = []string{result.IssueLowOCRConfidence}
			r.FieldSources[result.FieldAccountNumber] = s
		}, nil},
		{"account read faintly, not as on file", func(r *result.Result) {
			r.Fields.AccountNumber = sp("123456780")
			r.FieldSources[result.FieldAccountNumber] = src(0.4)
		}, []string{FlagBankChanged, FlagLowConfidence}},
		{"as on file, but its checksum failed as read", func(r *result.Result) {
			s := src(0.9)
			s.Issues = []string{result.IssueChecksumFailed}
			r.FieldSources[result.FieldRoutingNumber] = s
		}, []string{FlagLowConfidence}},
		{"implausible separators at high confidence", func(r *result.Result) {
			s := src(0.9)
			s.Issues = []string{result.IssueImplausibleSeparators}
			r.FieldSources[result.FieldTotal] = s
		}, []string{FlagLowConfidence}},
		{"amount without source", func(r *result.Result) { delete(r.FieldSources, result.FieldTax) }, []string{FlagLowConfidence}},
		{"low OCR confidence at high field confidence", func(r *result.Result) {
			s := src(0.9)
			s.Issues = []string{result.IssueLowOCRConfidence}
			r.FieldSources[result.FieldTotal] = s
		}, []string{FlagLowConfidence}},
		{"ink check did not run", func(r *result.Result) { r.Pages[0].InkChecked = false }, []string{FlagLowConfidence}},
		{"invisible text layer", func(r *result.Result) { r.Pages[0].InvisibleLayer = true }, []string{FlagLowConfidence}},
		{"bank label printed, value unreadable", func(r *result.Result) {
			r.FieldSources[result.FieldIBAN] = result.FieldSource{Method: result.MethodLabel, Page: 1, Issues: []string{result.IssueValueUnreadable}}
		}, []string{FlagLowConfidence}},
		{"hidden injection", func(r *result.Result) {
			r.Injection = []result.Injection{{Page: 1, PhraseCode: result.PhraseSkipReview, HiddenKind: result.HiddenWhite}}
		}, []string{FlagPromptInjection}},
		{"hidden text alone", func(r *result.Result) {
			r.HiddenText = []result.HiddenText{{Page: 1, Kind: result.HiddenTiny, Chars: 40, Excerpt: "x"}}
		}, []string{FlagPromptInjection}},
		{"no total", func(r *result.Result) { r.Fields.Total = nil }, []string{FlagUnreadable}},
		{"total dropped by clamp", func(r *result.Result) { r.Fields.Total = sp("1,100.00") }, []string{FlagUnreadable}},
		// Near misses that must stay clean.
		{"tax id printed without its dash matches", func(r *result.Result) { r.Fields.VendorTaxID = sp("123456789") }, nil},
		{"alias with other legal form", func(r *result.Result) { r.Fields.VendorName = sp("Acme Supplies, Inc."); r.Fields.VendorTaxID = nil }, nil},
		{"line rounding within a cent", func(r *result.Result) {
			r.Fields.LineItems[0].Quantity, r.Fields.LineItems[0].UnitPrice = sp("3"), sp("199.997")
			r.Fields.LineItems[0].Amount = sp("600.00")
		}, nil},
		{"total exactly at the limit", func(r *result.Result) {
			r.Fields.Subtotal, r.Fields.Total = sp("9900.00"), sp("10000.00")
			r.Fields.LineItems[1].Amount, r.Fields.LineItems[1].Quantity = sp("9300.00"), sp("93")
		}, nil},
		{"due on the as-of day", func(r *result.Result) { r.Fields.DueDate = sp("2026-03-20") }, nil},
		{"no quantity, amount a multiple of the price", func(r *result.Result) { r.Fields.LineItems[0].Quantity = nil }, nil},
		{"confidence at the minimum", func(r *result.Result) { r.FieldSources[result.FieldTotal] = src(0.6) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cleanResult()
			tt.mutate(r)
			rep := checkRaw(t, testChecker(t, nil), marshal(t, r))
			got := rep.Codes()
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("codes %v, want %v; flags %+v", got, want, rep.Flags)
			}
			if (rep.Decision == DecisionApprove) != (len(tt.want) == 0) {
				t.Fatalf("decision %s with flags %v", rep.Decision, got)
			}
			assertMasked(t, rep)
		})
	}
}

func TestDuplicatesWithinBatchInOrder(t *testing.T) {
	c := testChecker(t, NewMemoryHistory())
	a := cleanResult()
	b := cleanResult()
	b.Fields.InvoiceNumber = sp("inv 42") // the same number, printed differently
	other := cleanResult()
	other.Fields.InvoiceNumber = sp("INV-0043")
	var codes [][]string
	for _, r := range []*schemaResult{a, other, b} {
		rep := checkRaw(t, c, marshal(t, r))
		codes = append(codes, rep.Codes())
	}
	if len(codes[0]) != 0 || len(codes[1]) != 0 {
		t.Fatalf("first copies flagged: %v", codes)
	}
	if !slices.Equal(codes[2], []string{FlagDuplicate}) {
		t.Fatalf("second copy: %v, want duplicate", codes[2])
	}
	// Another tenant's history is its own.
	fresh := testChecker(t, NewMemoryHistory())
	if rep := checkRaw(t, fresh, marshal(t, b)); len(rep.Flags) != 0 {
		t.Fatalf("fresh history flagged %v", rep.Codes())
	}
}

type schemaResult = result.Result

func TestNormalizeInvoiceNumber(t *testing.T) {
	same := [][2]string{{"INV-0042", "inv 42"}, {"INV-0042", "INV42"}, {"2026/001", "2026-1"},
		// OCR read a digit as a letter, or the other way round.
		{"VD1018", "v01018"}, {"INV-1O42", "INV-1042"}, {"S-2026-118", "5-2026-118"}, {"INV-0l7", "INV-017"}}
	diff := [][2]string{{"1-23", "12-3"}, {"INV-42", "INV-420"}, {"A42", "C42"}, {"VD1018", "VD1019"}, {"INV-1042", "INV-1043"}}
	for _, p := range same {
		if NormalizeInvoiceNumber(p[0]) != NormalizeInvoiceNumber(p[1]) {
			t.Errorf("%q and %q should be one number", p[0], p[1])
		}
	}
	for _, p := range diff {
		if NormalizeInvoiceNumber(p[0]) == NormalizeInvoiceNumber(p[1]) {
			t.Errorf("%q and %q should differ", p[0], p[1])
		}
	}
}

func TestMask(t *testing.T) {
	tests := []struct{ in, want string }{
		{"DE89370400440532013000", "******************3000"},
		{"021000021", "*****0021"},
		{"12-34-56", "**3456"},
		{"123", "***"},
	}
	for _, tt := range tests {
		if got := mask(tt.in); got != tt.want {
			t.Errorf("mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCheckEnvelope(t *testing.T) {
	c := testChecker(t, nil)
	res := string(marshal(t, cleanResult()))
	tests := []struct {
		name, env string
		decision  string
		detail    string
	}{
		{"ok", `{"version":1,"job":"invoice","ok":true,"error":null,"pages":1,"ocr_pages":0,"timings_ms":{"extract":3},"result":` + res + `}`, DecisionApprove, ""},
		{"guest error", `{"version":1,"job":"invoice","ok":false,"error":{"code":"encrypted","message":"x"},"pages":0,"ocr_pages":0,"timings_ms":{},"result":null}`, DecisionReview, "encrypted"},
		{"unknown guest code", `{"version":1,"job":"invoice","ok":false,"error":{"code":"approved","message":"x"},"pages":0,"ocr_pages":0,"timings_ms":{},"result":null}`, DecisionReview, "known error code"},
		{"other job", `{"version":1,"job":"review","ok":true,"error":null,"pages":1,"ocr_pages":0,"timings_ms":{},"result":` + res + `}`, DecisionReview, "job"},
		{"version 2", `{"version":2,"job":"invoice","ok":true,"error":null,"pages":1,"ocr_pages":0,"timings_ms":{},"result":` + res + `}`, DecisionReview, "version"},
		{"decision in envelope", `{"version":1,"job":"invoice","ok":true,"decision":"approve","error":null,"pages":1,"ocr_pages":0,"timings_ms":{},"result":` + res + `}`, DecisionReview, "unknown field"},
		{"javascript", `{"version":1,"job":"invoice","ok":true,"error":null,"pages":1,"ocr_pages":0,"risks":["pdf_javascript"],"timings_ms":{},"result":` + res + `}`, DecisionReview, "pdf_javascript"},
		{"unknown risk", `{"version":1,"job":"invoice","ok":true,"error":null,"pages":1,"ocr_pages":0,"risks":["harmless"],"timings_ms":{},"result":` + res + `}`, DecisionReview, "risk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := c.CheckEnvelope(context.Background(), []byte(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Decision != tt.decision {
				t.Fatalf("decision %s, flags %+v", rep.Decision, rep.Flags)
			}
			found := tt.detail == ""
			for _, f := range rep.Flags {
				found = found || strings.Contains(f.Detail, tt.detail)
			}
			if !found {
				t.Fatalf("flags %+v, want detail %q", rep.Flags, tt.detail)
			}
		})
	}
}

// TestFlagRisks: the runner judges the result and the envelope's risks
// apart (CheckResult, then FlagRisks); a clean invoice carrying a script
// still goes to review.
func TestFlagRisks(t *testing.T) {
	c := testChecker(t, nil)
	rep, err := c.CheckResult(context.Background(), marshal(t, cleanResult()))
	if err != nil || rep.Decision != DecisionApprove {
		t.Fatalf("clean invoice: %v %+v", err, rep)
	}
	rep.FlagRisks(nil)
	if rep.Decision != DecisionApprove || len(rep.Flags) != 0 {
		t.Fatalf("no risks changed the report: %+v", rep)
	}
	rep.FlagRisks([]string{"pdf_embedded_files", "pdf_javascript"})
	if rep.Decision != DecisionReview || len(rep.Flags) != 1 || rep.Flags[0].Code != FlagActiveContent ||
		rep.Flags[0].Detail != "pdf_embedded_files, pdf_javascript" {
		t.Fatalf("risks: %+v", rep)
	}
}
