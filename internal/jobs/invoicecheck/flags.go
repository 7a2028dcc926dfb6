package invoicecheck

import (
	"fmt"
	"slices"
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

// Flag is why an invoice needs a human, one per code: Reasons holds every
// reason found for the code (at most maxFlagsPerCode), Field and Detail
// the first one's field and all the details joined by "; ".
type Flag struct {
	Code    string   `json:"code"`
	Field   string   `json:"field,omitempty"`
	Detail  string   `json:"detail"`
	Reasons []Reason `json:"reasons"`
}

// Reason is one finding behind a flag.
type Reason struct {
	Field  string `json:"field,omitempty"`
	Detail string `json:"detail"`
}

// flagger collects flags, one per code, bounding the reasons kept.
type flagger struct {
	flags []Flag
}

func (f *flagger) add(code, field, format string, args ...any) {
	d := fmt.Sprintf(format, args...)
	if r := []rune(d); len(r) > maxDetailRunes {
		d = string(r[:maxDetailRunes])
	}
	addReason(&f.flags, code, Reason{Field: field, Detail: d})
}

// addReason adds a reason to the flag of its code, making the flag if
// the invoice has none of that code yet.
func addReason(flags *[]Flag, code string, r Reason) {
	for i := range *flags {
		fl := &(*flags)[i]
		if fl.Code != code {
			continue
		}
		if len(fl.Reasons) >= maxFlagsPerCode || slices.Contains(fl.Reasons, r) {
			return
		}
		fl.Reasons = append(fl.Reasons, r)
		fl.Detail += "; " + r.Detail
		if fl.Field == "" {
			fl.Field = r.Field
		}
		return
	}
	*flags = append(*flags, Flag{Code: code, Field: r.Field, Detail: r.Detail, Reasons: []Reason{r}})
}

// Note codes: what the host wants a reader to know that does not stop an
// approval.
const (
	// NoteResubmitted: this same document (the same bytes) was judged
	// before; it is not a second invoice with the first one's number.
	NoteResubmitted = "resubmitted"
	// NoteVendorEvidence: the vendor's name or tax id was taken from
	// another place the invoice prints it, because the vendor master
	// knows that reading and not the first one.
	NoteVendorEvidence = "vendor_master_evidence"
)

// Note is something the host found that needs no review.
type Note struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
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
