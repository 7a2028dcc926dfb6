package redact

import (
	"fmt"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/redact/analyzer"
	"github.com/airlock-dev/airlock/internal/docs/redact/formats"
	"github.com/airlock-dev/airlock/internal/docs/redact/operator"
	"github.com/airlock-dev/airlock/internal/docs/redact/pages"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

// Limits bound what one job reads (see formats.Limits).
type Limits = formats.Limits

// DefaultLimits are the limits a job runs under unless told otherwise.
func DefaultLimits() Limits { return formats.DefaultLimits() }

// Output is a redacted document (see formats.Output).
type Output = formats.Output

// Options configure a Redactor.
type Options struct {
	Policy *policy.Policy // nil = policy.Default()
	// Salt keys the hash operator (HMAC-SHA256). It must be random per
	// job and at least 16 bytes when the policy hashes any type.
	Salt   []byte
	Limits Limits // zero = DefaultLimits
}

// Redactor detects and redacts one job's inputs: the analyzer finds,
// the operator replaces, and the format's writer (or, for pages, the
// page finder) puts the document back together.
type Redactor struct {
	an    *analyzer.Analyzer
	w     *formats.Writer
	pages *pages.Finder
}

// New checks the options and builds a Redactor.
func New(o Options) (*Redactor, error) {
	if o.Policy == nil {
		o.Policy = policy.Default()
	}
	if o.Policy.UsesHash() && len(o.Salt) < 16 {
		return nil, docs.Errorf(docs.CodeInvalidArg, "the policy hashes values but no salt of 16+ bytes was given")
	}
	an, err := analyzer.New(o.Policy)
	if err != nil {
		return nil, fmt.Errorf("load detectors: %w", err)
	}
	op := operator.New(o.Policy, o.Salt)
	return &Redactor{an: an, w: formats.New(an, op, o.Limits), pages: pages.New(an, op)}, nil
}

// Analyzer returns the redactor's analyzer.
func (r *Redactor) Analyzer() *analyzer.Analyzer { return r.an }

// Text redacts a plain-text document.
func (r *Redactor) Text(in []byte) (*Output, error) { return r.w.Text(in) }

// JSON redacts a JSON document (see formats.Writer.JSON).
func (r *Redactor) JSON(in []byte) (*Output, error) { return r.w.JSON(in) }

// CSV redacts a delimited file (see formats.Writer.CSV).
func (r *Redactor) CSV(in []byte) (*Output, error) { return r.w.CSV(in) }

// Pages finds PII on each page of an extracted document and returns
// findings carrying the page number and the boxes to paint (see
// pages.Finder.Pages); the raster package paints and rebuilds.
func (r *Redactor) Pages(doc *extract.Document) []Finding { return r.pages.Pages(doc) }
