package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/jobs"
)

// DocumentResult is a document tool's result. Everything under result,
// and error's message, came out of the document's sandboxes: untrusted
// names them.
type DocumentResult[T any] struct {
	Document DocumentRef     `json:"document"`
	OK       bool            `json:"ok"`
	Error    *jobs.LineError `json:"error,omitempty" jsonschema:"why the job failed: a stable code (encrypted, unreadable, too_large, timeout, sandbox_failed, egress_open, invalid_result, ...) and a message"`
	Pages    int             `json:"pages"`
	OCRPages int             `json:"ocr_pages"`
	Risks    []string        `json:"risks" jsonschema:"active content the original carries (scripts, attachments, a polyglot)"`
	// TimingsMS are the phases in the sandbox (create, upload, tool,
	// download, destroy).
	TimingsMS map[string]int64 `json:"timings_ms"`
	// ReportURI is the review's HTML report, an MCP resource of this
	// session.
	ReportURI string   `json:"report_uri,omitempty"`
	Result    *T       `json:"result,omitempty"`
	Untrusted []string `json:"untrusted"`
}

// DocumentRef names the document as airlock does: by digest, never by
// content.
type DocumentRef struct {
	Name   string `json:"name" jsonschema:"the path under the docs root, or the filename given"`
	SHA256 string `json:"sha256" jsonschema:"the first 16 hex digits of its SHA-256, as the audit log names it"`
	Bytes  int64  `json:"bytes"`
}

// jobRun is one document through one job.
type jobRun struct {
	doc jobs.Doc // after the run: with its ID and size
	o   jobs.Outcome
}

// runJob runs job on doc through the batch runner (hashing, size limit,
// sandboxes, strict decoding, Finalize), with the session's labels on
// every sandbox it makes.
func (s *session) runJob(ctx context.Context, job jobs.Job, doc jobs.Doc) (jobRun, error) {
	var r jobRun
	b := &jobs.Batch{Job: job, Sandboxes: s.be.Jobs(), Concurrency: 1, MaxBytes: s.opts.MaxDocumentBytes,
		Collect: func(d jobs.Doc, o jobs.Outcome) { r.doc, r.o = d, o }}
	if _, err := b.Run(ctx, []jobs.Doc{doc}); err != nil {
		return r, fmt.Errorf("%s: %w", job.Name(), err)
	}
	if r.doc.Path == "" {
		return r, errdefs.New(errdefs.ErrInternal, "%s: the batch ran no document", job.Name())
	}
	return r, nil
}

// jobMetadata is what every sandbox of a document job carries: the
// session's labels (the job adds its own name and the document's digest).
func (s *session) jobMetadata() map[string]string {
	md, _ := s.metadata(nil) // no agent keys: cannot fail
	return md
}

// documentResult fills the common fields from a run.
func documentResult[T any](r jobRun, res *T) DocumentResult[T] {
	out := DocumentResult[T]{Document: DocumentRef{Name: r.doc.Path, SHA256: r.doc.ID, Bytes: r.doc.Size},
		OK: r.o.Err == nil, Error: r.o.Err, Pages: r.o.Pages, OCRPages: r.o.OCRPages, Risks: r.o.Risks,
		TimingsMS: r.o.Timings.MS(), Result: res, Untrusted: []string{"result", "error.message"}}
	if out.Risks == nil {
		out.Risks = []string{}
	}
	return out
}

// documentContent renders a document tool's result: airlock's own summary
// line, then everything from the document fenced as untrusted JSON.
func documentContent[T any](tool, summary string, out DocumentResult[T]) []sdk.Content {
	head := fmt.Sprintf("%s: %s (sha256 %s, %d bytes)", tool, out.Document.Name, out.Document.SHA256, out.Document.Bytes)
	if out.Error != nil {
		head += ": failed, " + out.Error.Code
	} else {
		head += fmt.Sprintf(": %d pages (%d OCRed)", out.Pages, out.OCRPages)
		if summary != "" {
			head += "; " + summary
		}
	}
	if len(out.Risks) > 0 {
		head += "; the original carries " + strings.Join(out.Risks, ", ")
	}
	data := struct {
		Error  *jobs.LineError `json:"error,omitempty"`
		Result *T              `json:"result,omitempty"`
	}{out.Error, out.Result}
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte(`{"error":{"code":"internal","message":"the result could not be encoded"}}`)
	}
	return []sdk.Content{text("%s", head), untrusted("The job's result (from the document)", string(b))}
}
