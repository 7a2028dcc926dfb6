package invoicecheck

import (
	"errors"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

func TestDecodeResultRejects(t *testing.T) {
	good := string(marshal(t, cleanResult()))
	inFields := func(extra string) string { return strings.Replace(good, `"fields":{`, `"fields":{`+extra+`,`, 1) }
	top := func(extra string) string { return strings.Replace(good, `{"fields"`, `{`+extra+`,"fields"`, 1) }
	tests := []struct {
		name, raw, want string
	}{
		{"approved at top", top(`"approved":true`), "unknown field"},
		{"status at top", top(`"status":"approved"`), "unknown field"},
		{"decision in fields", inFields(`"decision":"approve"`), "unknown field"},
		{"duplicate total", inFields(`"total":"1.00"`), "duplicate key"},
		{"case-variant key", inFields(`"TOTAL":"1.00"`), "not a result key"},
		{"trailing value", good + `{}`, "more than one JSON value"},
		{"not an object", `[1,2]`, "not a JSON object"},
		{"invalid UTF-8", strings.Replace(good, "Widgets", "Wid\xffgets", 1), "UTF-8"},
		{"too large", good + strings.Repeat(" ", result.MaxResultBytes), "byte limit"},
		{"too deep", top(`"x":[[[[[[1]]]]]]`), "deeper"},
		{"number as amount", strings.Replace(good, `"total":"1100.00"`, `"total":1100`, 1), "decode"},
		{"unknown method", strings.Replace(good, `"method":"label"`, `"method":"guess"`, 1), "unknown method"},
		{"confidence over 1", strings.Replace(good, `"confidence":0.95`, `"confidence":1.5`, 1), "confidence out of range"},
		{"source for unknown field", strings.Replace(good, `"field_sources":{`, `"field_sources":{"approval":{"method":"label","confidence":1,"page":1,"issues":[]},`, 1), "unknown field"},
		{"page beyond the document", strings.Replace(good, `"page":1`, `"page":7`, 1), "out of range"},
		{"unknown phrase code", strings.Replace(good, `"injection":[]`, `"injection":[{"page":1,"phrase_code":"approve_now","visible":true,"hidden_kind":""}]`, 1), "phrase code"},
		{"hidden yet visible", strings.Replace(good, `"injection":[]`, `"injection":[{"page":1,"phrase_code":"skip_review","visible":true,"hidden_kind":"white"}]`, 1), "disagree"},
		{"long excerpt", strings.Replace(good, `"hidden_text":[]`, `"hidden_text":[{"page":1,"kind":"white","chars":3,"excerpt":"`+strings.Repeat("a", 41)+`"}]`, 1), "excerpt"},
		{"ink-checked OCR page", strings.Replace(good, `"method":"text","ocr_confidence":-1,"ink_checked":true`, `"method":"ocr","ocr_confidence":90,"ink_checked":true`, 1), "no text layer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeResult([]byte(tt.raw))
			if err == nil || !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want rejection mentioning %q", err, tt.want)
			}
		})
	}
	if _, err := DecodeResult([]byte(good)); err != nil {
		t.Fatalf("good result rejected: %v", err)
	}
}

func TestClampDropsOutOfSchemaValues(t *testing.T) {
	tests := []struct {
		name  string
		field string
		value string
		drop  bool
	}{
		{"plain amount", result.FieldTax, "82.50", false},
		{"four decimals", result.FieldTax, "82.5000", false},
		{"five decimals", result.FieldTax, "82.50000", true},
		{"grouped amount", result.FieldTax, "1,082.50", true},
		{"exponent", result.FieldTax, "8.25e1", true},
		{"negative total", result.FieldTax, "-82.50", true},
		{"huge", result.FieldTax, "10000000000", true},
		{"leading plus", result.FieldTax, "+82.50", true},
		{"ISO date", result.FieldDueDate, "2026-04-09", false},
		{"impossible date", result.FieldDueDate, "2026-02-30", true},
		{"US date", result.FieldDueDate, "04/09/2026", true},
		{"year 1800", result.FieldDueDate, "1800-01-01", true},
		{"currency", result.FieldCurrency, "EUR", false},
		{"made-up currency", result.FieldCurrency, "XYZ", true},
		{"lower-case currency", result.FieldCurrency, "usd", true},
		{"BIC", result.FieldBIC, "COBADEFFXXX", false},
		{"BIC with digits in bank code", result.FieldBIC, "C0BADEFF", true},
		{"vendor with bidi override", result.FieldVendorName, "Acme \u202eCorp", true},
		{"vendor with newline", result.FieldVendorName, "Acme\nCorp", true},
		{"vendor too long", result.FieldVendorName, strings.Repeat("a", 201), true},
		{"PO number", result.FieldPONumber, "PO-7781", false},
		{"PO number with quote", result.FieldPONumber, `PO"7781`, true},
		{"sort code", result.FieldSortCode, "60-16-13", false},
		{"account with letters", result.FieldAccountNumber, "12345ABC", true},
	}
	c := testChecker(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cleanResult()
			v := tt.value
			*r.Fields.Ptr(tt.field) = &v
			var fl flagger
			f := r.Fields
			c.clamp(&f, &fl)
			dropped := *f.Ptr(tt.field) == nil
			if dropped != tt.drop {
				t.Fatalf("dropped = %v, want %v (flags %+v)", dropped, tt.drop, fl.flags)
			}
			if tt.drop && (len(fl.flags) != 1 || fl.flags[0].Code != FlagUnreadable || fl.flags[0].Field != tt.field) {
				t.Fatalf("flags %+v, want one unreadable on %s", fl.flags, tt.field)
			}
		})
	}
}
