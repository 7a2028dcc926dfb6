package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/jobs/invoicecheck"
	"github.com/airlock-dev/airlock/internal/store"
)

// InvoiceTemplate is the template invoice extraction runs in.
const InvoiceTemplate = "invoice-ocr"

// Invoice extracts invoices in sandboxes and judges each on the host:
// what the guest returns is a claim, checked against the tenant's vendor
// master, arithmetic, bank checksums, limits, dates and the tenant's
// invoice history. An invoice is approved only with no flag at all; an
// invoice that could not be read is never approved.
type Invoice struct {
	Checker  *invoicecheck.Checker
	Template string
	Timeout  time.Duration
	OCR      OCROptions // how scanned pages are read
	MaxPages int
	Metadata map[string]string
	DayFirst bool // read ambiguous numeric dates as day/month
	// ModelHost, when set, is a credential route's in-guest host (e.g.
	// "llm.internal") through which the guest may ask an OpenAI-compatible
	// model for a second reading; the sandbox may reach that name and
	// nothing else, and the key stays in the egress proxy. Needs a daemon
	// with networking and the route configured for the tenant.
	ModelHost, ModelName string
}

// maxInvoiceResult bounds an invoice result (fields, sources, hidden text).
const maxInvoiceResult = 1 << 20

// InvoiceLine is the job's part of an NDJSON line.
type InvoiceLine struct {
	Decision     string                        `json:"decision"`
	Flags        []invoicecheck.Flag           `json:"flags"`
	VendorID     string                        `json:"vendor_id"`
	Fields       *result.Fields                `json:"fields"`
	FieldSources map[string]result.FieldSource `json:"field_sources"`
	HiddenText   []result.HiddenText           `json:"hidden_text,omitempty"`
	Injection    []result.Injection            `json:"injection,omitempty"`
	// Notes need no review: a resubmitted file, the vendor read from
	// another place on the invoice (invoicecheck.Note*).
	Notes []invoicecheck.Note `json:"notes,omitempty"`
}

// pendingInvoice is what Process leaves for Finalize, which judges in
// input order (so the second copy of an invoice in a batch is the
// duplicate).
type pendingInvoice struct {
	result json.RawMessage
}

func (j *Invoice) Name() string { return "invoice" }
func (j *Invoice) Extensions() []string {
	return []string{".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff"}
}

// Templates implements Job.
func (j *Invoice) Templates() []string { return []string{j.template()} }

func (j *Invoice) template() string {
	if j.Template != "" {
		return j.Template
	}
	return InvoiceTemplate
}

// Process implements Job: extraction in a sandbox.
func (j *Invoice) Process(ctx context.Context, sbxs Sandboxes, doc Doc) Outcome {
	run := ToolRun{Template: j.template(), Job: result.Job, Doc: doc, Timeout: j.Timeout, MaxPages: j.MaxPages, OCR: j.OCR,
		MaxResult: maxInvoiceResult, Metadata: docMetadata(j.Metadata, "invoice", doc)}
	if j.DayFirst {
		run.Args = []string{"--day-first"}
	}
	if j.ModelHost != "" {
		run.Domains = []string{j.ModelHost}
		run.Args = append(run.Args, "--model-url", "http://"+j.ModelHost+"/v1", "--model", j.ModelName)
	}
	env, t, lerr := RunTool(ctx, sbxs, run)
	o := Outcome{Timings: t}
	if env != nil {
		o.Pages, o.OCRPages, o.Risks, o.OCRLang, o.PageMS = env.Pages, env.OCRPages, env.Risks, env.OCRLang, env.PageMS
	}
	switch {
	case lerr != nil:
		o.Err = lerr
	case env.Error != nil:
		o.Err = &LineError{Code: env.Error.Code, Message: env.Error.Message}
	default:
		o.Fields = pendingInvoice{result: env.Result}
	}
	return o
}

// Finalize implements Job: the host's judgement, in input order.
func (j *Invoice) Finalize(ctx context.Context, doc Doc, o *Outcome) {
	line := InvoiceLine{Decision: invoicecheck.DecisionReview, FieldSources: map[string]result.FieldSource{}}
	defer func() {
		o.Fields = line
		o.Tally = map[string]int{"decision " + line.Decision: 1}
		for _, c := range distinctFlags(line.Flags) {
			o.Tally["flag "+c]++
		}
	}()
	p, ok := o.Fields.(pendingInvoice)
	if o.Err != nil || !ok {
		// Never approve what could not be read.
		d := "no result from the guest"
		if o.Err != nil {
			d = "the extraction failed: " + o.Err.Code
		}
		line.Flags = []invoicecheck.Flag{unreadable(d)}
		return
	}
	rep, err := j.Checker.CheckDocument(ctx, p.result, doc.ID)
	if err != nil {
		o.Err = lineErr(CodeSandbox, "judge the invoice: %v", err)
		line.Flags = []invoicecheck.Flag{unreadable("the history could not be checked")}
		return
	}
	rep.FlagRisks(o.Risks)
	line.Decision, line.Flags, line.VendorID, line.Fields, line.Notes = rep.Decision, rep.Flags, rep.VendorID, &rep.Fields, rep.Notes
	if res, err := invoicecheck.DecodeResult(p.result); err == nil {
		line.FieldSources, line.HiddenText, line.Injection = res.FieldSources, res.HiddenText, res.Injection
	}
}

func unreadable(detail string) invoicecheck.Flag {
	return invoicecheck.Flag{Code: invoicecheck.FlagUnreadable, Detail: detail, Reasons: []invoicecheck.Reason{{Detail: detail}}}
}

func distinctFlags(fs []invoicecheck.Flag) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range fs {
		if !seen[f.Code] {
			seen[f.Code] = true
			out = append(out, f.Code)
		}
	}
	return out
}

// Human implements Job.
func (j *Invoice) Human(doc Doc, o Outcome) string {
	l, _ := o.Fields.(InvoiceLine)
	if o.Err != nil {
		return fmt.Sprintf("%s  FAILED  %s: %s  -> review", doc.Path, o.Err.Code, o.Err.Message)
	}
	total := "?"
	if l.Fields != nil && l.Fields.Total != nil {
		total = *l.Fields.Total
		if l.Fields.Currency != nil {
			total += " " + *l.Fields.Currency
		}
	}
	vendor := l.VendorID
	if vendor == "" {
		vendor = "unknown vendor"
	}
	s := fmt.Sprintf("%s  %s  %s  total %s", doc.Path, strings.ToUpper(l.Decision), vendor, total)
	if fl := distinctFlags(l.Flags); len(fl) > 0 {
		s += "  flags: " + strings.Join(fl, ", ")
	}
	for _, n := range l.Notes {
		if n.Code == invoicecheck.NoteResubmitted {
			s += "  (resubmitted: the same file was judged before)"
		}
	}
	return s
}

// StoreHistory keeps a tenant's invoice history in the airlock store, so
// duplicates are caught across batches; the store keeps only a digest of
// each (tenant, vendor, number).
type StoreHistory struct{ S *store.Store }

// Seen implements invoicecheck.History.
func (h StoreHistory) Seen(ctx context.Context, k invoicecheck.DupKey) (bool, error) {
	return h.S.InvoiceSeen(ctx, k.TenantID, k.Vendor, k.Number)
}

// Record implements invoicecheck.History.
func (h StoreHistory) Record(ctx context.Context, k invoicecheck.DupKey) error {
	return h.S.RecordInvoice(ctx, k.TenantID, k.Vendor, k.Number)
}
