package invoicecheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// Policy is a tenant's approval policy.
type Policy struct {
	// AsOf is the day invoices are judged on (past_due); zero = today UTC.
	AsOf time.Time
	// AutoApproveLimit is the largest total approved without review, per
	// ISO 4217 currency; DefaultLimit, when set, applies to currencies not
	// listed. A currency with neither is always high_value.
	AutoApproveLimit map[string]decimal.Decimal
	DefaultLimit     *decimal.Decimal
	// MinConfidence is the lowest guest confidence accepted on money, bank
	// and identity fields; 0 = 0.6.
	MinConfidence float64
	// AllowUncheckedInk accepts text pages whose hidden-text ink check did
	// not run. Off by default: without it, white text cannot be ruled out.
	AllowUncheckedInk bool
}

// Report is the host's verdict on one invoice.
type Report struct {
	TenantID string `json:"tenant_id"`
	Decision string `json:"decision"` // approve | review
	Flags    []Flag `json:"flags"`
	VendorID string `json:"vendor_id"`
	// MatchedBy is how the vendor was found: "tax_id", "name" or "".
	MatchedBy string `json:"matched_by"`
	// Fields are the guest's values after clamping: every non-null value
	// here passed its schema.
	Fields result.Fields `json:"fields"`
	// Notes are findings that need no review (a resubmitted file, the
	// vendor read from another place on the invoice).
	Notes []Note `json:"notes,omitempty"`
}

// Codes returns the report's distinct flag codes in order.
func (r *Report) Codes() []string {
	var out []string
	for _, f := range r.Flags {
		if !contains(out, f.Code) {
			out = append(out, f.Code)
		}
	}
	return out
}

// Checker validates invoices for one tenant. Safe for concurrent use if
// its History is.
type Checker struct {
	master  *Master
	policy  Policy
	history History
	ref     *refData

	// judged holds the content ids this checker has judged: the same
	// bytes twice in one batch are two submissions of one invoice (a
	// vendor that sent it twice), a duplicate; the same bytes judged by
	// an earlier run are that run's document again, resubmitted.
	mu     sync.Mutex
	judged map[string]bool
}

// NewChecker returns a checker for master's tenant.
func NewChecker(master *Master, policy Policy, history History) (*Checker, error) {
	if master == nil || history == nil {
		return nil, errors.New("invoicecheck: master and history are required")
	}
	ref, err := loadRefData()
	if err != nil {
		return nil, fmt.Errorf("invoicecheck reference data: %w", err)
	}
	if policy.MinConfidence == 0 {
		policy.MinConfidence = 0.6
	}
	if policy.AsOf.IsZero() {
		policy.AsOf = time.Now().UTC()
	}
	return &Checker{master: master, policy: policy, history: history, ref: ref, judged: map[string]bool{}}, nil
}

// CheckEnvelope judges the guest's whole result file. A failed job or a
// refused envelope gives a review report with an unreadable flag; the
// error is only for a History failure.
func (c *Checker) CheckEnvelope(ctx context.Context, raw []byte) (*Report, error) {
	res, risks, code, err := DecodeEnvelope(raw)
	switch {
	case err != nil:
		return c.refused(err), nil
	case code != "":
		r := c.refused(nil)
		r.Flags[0].Detail = "the guest job failed: " + code
		return r, nil
	}
	r, err := c.check(ctx, res)
	if err == nil {
		r.FlagRisks(risks)
	}
	return r, err
}

// FlagRisks sends the invoice to review with an active_content flag when
// its PDF carries any of the envelope's risks (docs.Risk*): an invoice has
// no business carrying scripts, attachments or a second file, and a person
// looks before anyone opens the original.
func (r *Report) FlagRisks(risks []string) {
	if len(risks) == 0 {
		return
	}
	addReason(&r.Flags, FlagActiveContent, Reason{Detail: strings.Join(risks, ", ")})
	r.Decision = DecisionReview
}

// CheckResult judges the invoice result alone (the envelope's "result").
func (c *Checker) CheckResult(ctx context.Context, raw []byte) (*Report, error) {
	return c.CheckDocument(ctx, raw, "")
}

// CheckDocument is CheckResult for a document the caller identifies by
// its content (jobs.Doc.ID, a digest of its bytes): the same document
// judged again by a later run is noted as resubmitted, never flagged as a
// duplicate of itself, while another document with the same vendor and
// number, or the same bytes twice in one batch, is a duplicate.
func (c *Checker) CheckDocument(ctx context.Context, raw []byte, docID string) (*Report, error) {
	res, err := DecodeResult(raw)
	if err != nil {
		return c.refused(err), nil
	}
	return c.checkDoc(ctx, res, docID)
}

// CheckBatch judges envelopes in the order given, so the second copy of
// an invoice in a batch is the duplicate.
func (c *Checker) CheckBatch(ctx context.Context, raws [][]byte) ([]*Report, error) {
	out := make([]*Report, 0, len(raws))
	for i, raw := range raws {
		r, err := c.CheckEnvelope(ctx, raw)
		if err != nil {
			return out, fmt.Errorf("invoice %d: %w", i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func (c *Checker) refused(err error) *Report {
	d := "the guest result was refused"
	if err != nil {
		d = truncate(err.Error(), 150)
	}
	return &Report{TenantID: c.master.TenantID, Decision: DecisionReview,
		Flags: []Flag{{Code: FlagUnreadable, Detail: d, Reasons: []Reason{{Detail: d}}}}}
}

// check runs every check on a decoded result.
func (c *Checker) check(ctx context.Context, res *result.Result) (*Report, error) {
	return c.checkDoc(ctx, res, "")
}

func (c *Checker) checkDoc(ctx context.Context, res *result.Result, docID string) (*Report, error) {
	var fl flagger
	var notes []Note
	f := res.Fields
	c.clamp(&f, &fl)
	c.checkRequired(&f, &fl)
	c.checkScreens(res, &fl)
	m := c.resolveVendor(res.Candidates, &f, &notes)
	c.checkVendor(m, &f, &fl)
	c.checkBank(m, &f, &fl)
	c.checkArithmetic(&f, &fl)
	c.checkLimit(&f, &fl)
	c.checkDates(m, &f, &fl)
	c.checkConfidence(res, &f, asOnFile(m, &f), &fl)
	if err := c.checkDuplicate(ctx, m, &f, docID, &fl, &notes); err != nil {
		return nil, err
	}
	r := &Report{TenantID: c.master.TenantID, Flags: fl.flags, Fields: f, Decision: DecisionApprove, Notes: notes}
	if m.vendor != nil {
		r.VendorID, r.MatchedBy = m.vendor.VendorID, m.by
	}
	if len(r.Flags) > 0 {
		r.Decision = DecisionReview
	}
	if r.Flags == nil {
		r.Flags = []Flag{}
	}
	return r, nil
}

func (c *Checker) checkRequired(f *result.Fields, fl *flagger) {
	for _, name := range []string{result.FieldInvoiceNumber, result.FieldTotal, result.FieldCurrency} {
		if *f.Ptr(name) == nil {
			fl.add(FlagUnreadable, name, "no %s", name)
		}
	}
}

// checkScreens turns the guest's hidden-text and injection findings into
// flags. Hidden text with no known phrase is still flagged: text meant to
// be read by software and not by people has no business on an invoice.
func (c *Checker) checkScreens(res *result.Result, fl *flagger) {
	for _, in := range res.Injection {
		where := "visible text"
		if !in.Visible {
			where = in.HiddenKind + " hidden text"
		}
		fl.add(FlagPromptInjection, "", "page %d: %q phrase in %s", in.Page, in.PhraseCode, where)
	}
	for _, h := range res.HiddenText {
		fl.add(FlagPromptInjection, "", "page %d: %d characters of %s hidden text", h.Page, h.Chars, h.Kind)
	}
	for _, p := range res.Pages {
		if p.InvisibleLayer {
			fl.add(FlagLowConfidence, "", "page %d: its text layer draws no ink (a scan with an OCR layer?); fields were not read from what it shows", p.Number)
		}
		if p.Method == "text" && !p.InkChecked && !c.policy.AllowUncheckedInk {
			fl.add(FlagLowConfidence, "", "page %d: the hidden-text ink check did not run", p.Number)
		}
	}
}

func (c *Checker) checkVendor(m vendorMatch, f *result.Fields, fl *flagger) {
	switch {
	case m.vendor == nil && f.VendorName == nil && f.VendorTaxID == nil:
		fl.add(FlagUnknownVendor, result.FieldVendorName, "no vendor name or tax id on the invoice")
	case m.vendor == nil:
		fl.add(FlagUnknownVendor, result.FieldVendorName, "no vendor in the master matches the invoice's name or tax id")
	case m.taxConflict:
		fl.add(FlagUnknownVendor, result.FieldVendorTaxID, "name matches %s but the tax id %s is not the one on file", m.vendor.VendorID, mask(*f.VendorTaxID))
	}
}

// bankDetail is one bank field of the invoice beside the vendor's.
type bankDetail struct {
	field, label string
	got          *string
	want         string
	same         func(a, b string) bool
}

func bankDetails(f *result.Fields, known Bank) []bankDetail {
	return []bankDetail{
		{result.FieldIBAN, "IBAN", f.IBAN, known.IBAN, func(a, b string) bool { return normIBAN(a) == b }},
		{result.FieldBIC, "BIC", f.BIC, known.BIC, sameBIC},
		{result.FieldAccountNumber, "account number", f.AccountNumber, known.AccountNumber, func(a, b string) bool { return digitsOnly(a) == b }},
		{result.FieldRoutingNumber, "routing number", f.RoutingNumber, known.RoutingNumber, func(a, b string) bool { return digitsOnly(a) == b }},
		{result.FieldSortCode, "sort code", f.SortCode, known.SortCode, func(a, b string) bool { return digitsOnly(a) == b }},
	}
}

// asOnFile reports the bank fields read exactly as the matched vendor's
// master data has them: where money goes is then the vendor's own
// account, and a misread that lands exactly on it does not happen (an
// IBAN's mod-97 alone rules out almost every one).
func asOnFile(m vendorMatch, f *result.Fields) map[string]bool {
	out := map[string]bool{}
	if m.vendor == nil || m.taxConflict {
		return out
	}
	for _, k := range bankDetails(f, m.vendor.Bank) {
		if k.got != nil && k.want != "" && k.same(*k.got, k.want) {
			out[k.field] = true
		}
	}
	return out
}

// checkBank validates the invoice's bank details and compares them with
// the vendor's: any difference, any detail the master does not have, and
// any number failing its checksum is a change.
func (c *Checker) checkBank(m vendorMatch, f *result.Fields, fl *flagger) {
	if f.IBAN != nil {
		if why := c.ref.ibanProblem(*f.IBAN); why != "" {
			fl.add(FlagBankChanged, result.FieldIBAN, "IBAN %s %s", mask(*f.IBAN), why)
		}
	}
	if f.RoutingNumber != nil && !abaValid(*f.RoutingNumber) {
		fl.add(FlagBankChanged, result.FieldRoutingNumber, "routing number %s fails the ABA checksum", mask(*f.RoutingNumber))
	}
	if m.vendor == nil {
		return
	}
	for _, k := range bankDetails(f, m.vendor.Bank) {
		switch {
		case k.got == nil:
		case k.field == result.FieldBIC && k.want == "":
			// The account decides where money goes; a BIC the master
			// lacks is routing detail, not a change.
		case k.want == "":
			fl.add(FlagBankChanged, k.field, "%s %s is not on file for %s", k.label, mask(*k.got), m.vendor.VendorID)
		case !k.same(*k.got, k.want):
			fl.add(FlagBankChanged, k.field, "%s %s differs from %s on file", k.label, mask(*k.got), mask(k.want))
		}
	}
}
