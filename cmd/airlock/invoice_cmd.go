package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/jobs"
	"github.com/airlock-dev/airlock/internal/jobs/invoicecheck"
	"github.com/airlock-dev/airlock/internal/store"
)

// invoiceFlags configure how invoices are judged.
type invoiceFlags struct {
	vendors      string
	approveLimit []string
	asOf         string
	dayFirst     bool
	history      string
	modelHost    string
	modelName    string
	strict       bool // refuse a vendor master with fields invoicecheck does not know
}

func newInvoiceCmd(g *globalFlags) *cobra.Command {
	// Invoices run to a few pages; a 200-page "invoice" is refused at once
	// rather than OCRed for an hour.
	jf := &jobFlags{pagesLimit: 50}
	f := &invoiceFlags{}
	cmd := &cobra.Command{
		Use:   "invoice --tenant T --vendors FILE [--approve-limit AMOUNT] [--as-of DATE] [--json] PATH...",
		Short: "Extract invoices in sandboxes and judge them against the tenant's vendor data",
		Long: `Extract invoices (PDF, PNG, JPEG, TIFF, or directories of them), each in its
own invoice-ocr sandbox with egress denied, and judge what comes back on the
host: the vendor matched against the tenant's vendor master (tax id, name,
aliases), bank details checked (IBAN mod-97, ABA checksum) and compared with
the vendor's, subtotal + shipping + tax == total and line items summing to
the subtotal, the auto-approve limit, due dates, duplicates against the
tenant's invoice history (kept in the store as digests) and within the batch
in the order given, hidden or instruction-like text, and OCR confidence.
An invoice is approved only when nothing is flagged.

Exit status: 0 when every invoice was processed (approved or sent to
review), 1 when any could not be, 2 on usage errors.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			job, closeHistory, err := f.job(jf)
			if err != nil {
				return err
			}
			defer closeHistory()
			return jf.runBatch(cmd, job, args)
		},
	}
	jf.register(cmd, g)
	fl := cmd.Flags()
	fl.StringVar(&f.vendors, "vendors", "", "the tenant's vendor master data (JSON): {\"tenant_id\", \"vendors\": [...]} (required)")
	fl.BoolVar(&f.strict, "strict", false, "refuse a vendor master with fields airlock does not know (default: warn and ignore them)")
	fl.StringSliceVar(&f.approveLimit, "approve-limit", []string{"10000"}, "largest total approved without review: AMOUNT for every currency, or CUR=AMOUNT (repeatable)")
	fl.StringVar(&f.asOf, "as-of", "", "judge due dates as of this day, YYYY-MM-DD (default today, UTC)")
	fl.BoolVar(&f.dayFirst, "day-first", false, "read ambiguous numeric dates (03/04/2026) as day/month")
	fl.StringVar(&f.history, "history", "", "store holding the tenant's invoice history (default: airlock.db in --state-dir)")
	fl.StringVar(&f.modelHost, "model", "", "also ask an OpenAI-compatible model, reached through this credential route host (e.g. llm.internal); needs a daemon with --net and the route for the tenant")
	fl.StringVar(&f.modelName, "model-name", "gpt-4o-mini", "model name sent to the endpoint")
	return cmd
}

// job builds the invoice job from the flags; the returned func closes the
// history store.
func (f *invoiceFlags) job(jf *jobFlags) (*jobs.Invoice, func(), error) {
	if jf.tenant == "" || jf.tenant == "local" {
		return nil, nil, usageErr("invoice: --tenant is required (the tenant whose vendor data and history apply)")
	}
	if f.vendors == "" {
		return nil, nil, usageErr("invoice: --vendors is required")
	}
	vf, err := os.Open(f.vendors)
	if err != nil {
		return nil, nil, usageErr("--vendors: %v", err)
	}
	master, err := invoicecheck.ParseMasterWith(vf, invoicecheck.MasterOptions{Strict: f.strict})
	vf.Close()
	if err != nil {
		return nil, nil, usageErr("--vendors %s: %v", f.vendors, err)
	}
	for _, w := range master.Warnings {
		fmt.Fprintf(os.Stderr, "warning: --vendors %s: %s\n", f.vendors, w)
	}
	if master.TenantID != jf.tenant {
		return nil, nil, usageErr("--vendors %s is tenant %q's, not %q's", f.vendors, master.TenantID, jf.tenant)
	}
	pol := invoicecheck.Policy{AutoApproveLimit: map[string]decimal.Decimal{}}
	if err := f.limits(&pol); err != nil {
		return nil, nil, err
	}
	if f.asOf != "" {
		if pol.AsOf, err = time.Parse("2006-01-02", f.asOf); err != nil {
			return nil, nil, usageErr("--as-of %q: want YYYY-MM-DD", f.asOf)
		}
	}
	path := f.history
	if path == "" {
		path = filepath.Join(filepath.Clean(jf.host.stateDir), "airlock.db")
	}
	st, err := store.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("invoice history: %w", err)
	}
	checker, err := invoicecheck.NewChecker(master, pol, jobs.StoreHistory{S: st})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	md, err := jf.metadata()
	if err != nil {
		st.Close()
		return nil, nil, usageErr("%v", err)
	}
	md["tenant_id"] = jf.tenant
	job := &jobs.Invoice{Checker: checker, Timeout: jf.timeout, OCR: jf.ocr(), MaxPages: jf.maxPages, Metadata: md, DayFirst: f.dayFirst,
		ModelHost: f.modelHost, ModelName: f.modelName}
	if f.modelHost != "" && jf.url == "" {
		st.Close()
		return nil, nil, usageErr("--model needs a daemon with networking (--url): the guest reaches the model only through its egress proxy")
	}
	return job, func() { st.Close() }, nil
}

// limits parses --approve-limit: CUR=AMOUNT for one currency, a bare
// amount for every other.
func (f *invoiceFlags) limits(pol *invoicecheck.Policy) error {
	for _, l := range f.approveLimit {
		cur, amt, specific := strings.Cut(l, "=")
		if !specific {
			amt, cur = cur, ""
		}
		d, err := decimal.NewFromString(strings.TrimSpace(amt))
		if err != nil || d.IsNegative() {
			return usageErr("--approve-limit %q: want AMOUNT or CUR=AMOUNT", l)
		}
		if specific {
			pol.AutoApproveLimit[strings.ToUpper(strings.TrimSpace(cur))] = d
			continue
		}
		pol.DefaultLimit = &d
	}
	return nil
}
