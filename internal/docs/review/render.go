package review

import (
	"io"

	"github.com/airlock-dev/airlock/internal/docs/review/report"
)

// The renderers live in the stdlib-only package report, so the host can
// render a guest's result without this package; these forward to it for
// callers that already import review.

// IndexEntry is one document of a batch index (see report.IndexEntry).
type IndexEntry = report.IndexEntry

// RenderHTML writes a self-contained HTML report (see report.RenderHTML).
func RenderHTML(w io.Writer, r *Result, document string, risks []string) error {
	return report.RenderHTML(w, r, document, risks)
}

// RenderIndex writes an HTML index of a batch (see report.RenderIndex).
func RenderIndex(w io.Writer, title string, entries []IndexEntry) error {
	return report.RenderIndex(w, title, entries)
}

// RenderMarkdown writes the review as Markdown (see report.RenderMarkdown).
func RenderMarkdown(w io.Writer, r *Result, document string, risks []string) error {
	return report.RenderMarkdown(w, r, document, risks)
}
