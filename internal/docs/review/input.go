package review

import (
	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// Paragraph is one paragraph of the contract in reading order, as the
// extraction stage produces it: running headers, footers and page numbers
// stripped, hyphenation re-joined, wrapped lines joined. A heading may be
// a paragraph of its own or run in at the start of one. Pages are the
// 1-based pages the paragraph is printed on (two when it crosses a page
// break).
type Paragraph struct {
	Text  string `json:"text"`
	Pages []int  `json:"pages"`
}

// The output types are defined in the stdlib-only result package (so the
// host can validate a guest's output without this package) and aliased
// here for callers of Analyze.
type (
	Result      = result.Result
	Finding     = result.Finding
	Location    = result.Location
	TermChange  = result.TermChange
	Segment     = result.Segment
	Summary     = result.Summary
	PlaybookRef = result.PlaybookRef
)

// Statuses, re-exported for callers of Analyze.
const (
	StatusMatch     = result.StatusMatch
	StatusDeviation = result.StatusDeviation
	StatusMissing   = result.StatusMissing
)

// Input limits: a document over them is refused as too_large rather than
// analysed slowly.
const (
	MaxParagraphs     = 20000
	MaxParagraphBytes = 64 << 10
	MaxDocumentBytes  = 4 << 20
	// maxCompareWords bounds the located text a clause is compared on: a
	// heading that matches a whole 30-page article must not make the
	// difflib step quadratic in the document.
	maxCompareWords = 3000
)
