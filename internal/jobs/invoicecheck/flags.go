package invoicecheck

import (
	"fmt"
	"strings"
)

// Flag codes. Part of the output contract; never rename one.
const (
	FlagPromptInjection      = "prompt_injection"
	FlagBankChanged          = "bank_details_changed"
	FlagUnknownVendor        = "unknown_vendor"
	FlagTotalMismatch        = "total_mismatch"
	FlagHighValue            = "high_value"
	FlagPastDue              = "past_due"
	FlagDuplicate            = "duplicate_invoice_number"
	FlagLowConfidence        = "low_confidence"
	FlagUnreadable           = "unreadable"
	FlagActiveContent        = "active_content" // the PDF carries scripts, attachments or another file (docs.Risk*)
	DecisionApprove          = "approve"
	DecisionReview           = "review"
	maxFlagsPerCode          = 10
	maxDetailRunes           = 200
	maskKeep                 = 4
	maskChar            rune = '*'
)

// FlagCodes lists every flag code.
func FlagCodes() []string {
	return []string{FlagPromptInjection, FlagBankChanged, FlagUnknownVendor, FlagTotalMismatch,
		FlagHighValue, FlagPastDue, FlagDuplicate, FlagLowConfidence, FlagUnreadable, FlagActiveContent}
}

// Flag is one reason an invoice needs a human.
type Flag struct {
	Code   string `json:"code"`
	Field  string `json:"field,omitempty"`
	Detail string `json:"detail"`
}

// flagger collects flags, bounding how many of one code are kept.
type flagger struct {
	flags []Flag
	count map[string]int
}

func (f *flagger) add(code, field, format string, args ...any) {
	if f.count == nil {
		f.count = map[string]int{}
	}
	if f.count[code] >= maxFlagsPerCode {
		return
	}
	f.count[code]++
	d := fmt.Sprintf(format, args...)
	if r := []rune(d); len(r) > maxDetailRunes {
		d = string(r[:maxDetailRunes])
	}
	f.flags = append(f.flags, Flag{Code: code, Field: field, Detail: d})
}

// mask hides all but the last four letters and digits of a bank number,
// so a flag can say which account without carrying it.
func mask(s string) string {
	var keep []rune
	for _, r := range s {
		if r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' {
			keep = append(keep, r)
		}
	}
	if len(keep) <= maskKeep {
		return strings.Repeat(string(maskChar), max(len(keep), 1))
	}
	return strings.Repeat(string(maskChar), len(keep)-maskKeep) + string(keep[len(keep)-maskKeep:])
}
