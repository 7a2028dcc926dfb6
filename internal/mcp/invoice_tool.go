package mcp

import (
	"context"
	"fmt"
	"io"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/jobs"
	"github.com/airlock-dev/airlock/internal/jobs/invoicecheck"
)

// InvoiceArgs are extract_invoice's arguments.
type InvoiceArgs struct {
	DocumentArgs
	Vendors      string `json:"vendors,omitempty" jsonschema:"the vendor master to judge against, JSON: {tenant_id, vendors: [{vendor_id, name, aliases, tax_id, country, currency, bank, payment_terms_days}]}; without one every invoice goes to review as unknown_vendor"`
	VendorsPath  string `json:"vendors_path,omitempty" jsonschema:"the vendor master as a file under the docs root, instead of vendors"`
	ApproveLimit string `json:"approve_limit,omitempty" jsonschema:"largest total approved without review, in any currency (default 10000)"`
	DayFirst     bool   `json:"day_first,omitempty" jsonschema:"read ambiguous numeric dates (03/04/2026) as day/month"`
}

// InvoiceResult is what extraction found and what the host decided.
type InvoiceResult = jobs.InvoiceLine

func (s *session) extractInvoice(ctx context.Context, a InvoiceArgs) (DocumentResult[InvoiceResult], []sdk.Content, error) {
	var none DocumentResult[InvoiceResult]
	checker, err := s.invoiceChecker(a)
	if err != nil {
		return none, nil, err
	}
	job := &jobs.Invoice{Checker: checker, Timeout: s.opts.JobTimeout, MaxPages: 50, Metadata: s.jobMetadata(),
		DayFirst: a.DayFirst}
	doc, done, err := s.openDocument(a.DocumentArgs)
	defer done()
	if err != nil {
		return none, nil, err
	}
	r, err := s.runJob(ctx, job, doc)
	if err != nil {
		return none, nil, err
	}
	line, ok := r.o.Fields.(jobs.InvoiceLine)
	var res *InvoiceResult
	summary := ""
	if ok {
		if line.FieldSources == nil {
			line.FieldSources = map[string]result.FieldSource{}
		}
		res = &line
		codes := make([]string, len(line.Flags))
		for i, f := range line.Flags {
			codes[i] = f.Code
		}
		summary = "decision " + line.Decision
		if len(codes) > 0 {
			summary += ", flags " + strings.Join(codes, ", ")
		}
	}
	out := documentResult(r, res)
	return out, documentContent("extract_invoice", summary, out), nil
}

// invoiceChecker builds the host's judge from the vendor master given
// (none: an empty one, so nothing is approved) and this session's
// invoice history.
func (s *session) invoiceChecker(a InvoiceArgs) (*invoicecheck.Checker, error) {
	master := &invoicecheck.Master{TenantID: "mcp"}
	var src io.Reader
	switch {
	case a.Vendors != "" && a.VendorsPath != "":
		return nil, errdefs.InvalidArgument("give vendors or vendors_path, not both")
	case a.Vendors != "":
		src = strings.NewReader(a.Vendors)
	case a.VendorsPath != "":
		doc, done, err := s.rootDocument(a.VendorsPath)
		if err != nil {
			return nil, fmt.Errorf("vendors_path: %w", err)
		}
		defer done()
		f, err := doc.Open()
		if err != nil {
			return nil, fmt.Errorf("vendors_path: %w", err)
		}
		defer f.Close()
		src = f
	}
	if src != nil {
		m, err := invoicecheck.ParseMaster(src)
		if err != nil {
			return nil, errdefs.InvalidArgument("%v", err)
		}
		master = m
	}
	pol := invoicecheck.Policy{AutoApproveLimit: map[string]decimal.Decimal{}}
	limit := decimal.NewFromInt(10000)
	if a.ApproveLimit != "" {
		d, err := decimal.NewFromString(strings.TrimSpace(a.ApproveLimit))
		if err != nil || d.IsNegative() {
			return nil, errdefs.InvalidArgument("approve_limit %q: want an amount", a.ApproveLimit)
		}
		limit = d
	}
	pol.DefaultLimit = &limit
	c, err := invoicecheck.NewChecker(master, pol, s.history)
	if err != nil {
		return nil, fmt.Errorf("invoice checker: %w", err)
	}
	return c, nil
}
