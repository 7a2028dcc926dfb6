package invoicecheck

import (
	"context"
	"strings"
	"sync"
	"unicode"
)

// DupKey identifies an invoice for duplicate detection: the same tenant,
// vendor and (normalised) invoice number.
type DupKey struct {
	TenantID string
	// Vendor is the vendor id when the vendor is known, else "name:" and
	// the normalised name, or "tax:" and the tax id.
	Vendor string
	Number string // NormalizeInvoiceNumber
}

// History remembers the invoices a tenant has seen. Seen and Record are
// separate so a store can answer from its index and write in its own
// transaction; Check calls Seen then Record for every invoice with a
// number, in the order given.
type History interface {
	Seen(ctx context.Context, k DupKey) (bool, error)
	Record(ctx context.Context, k DupKey) error
}

// NormalizeInvoiceNumber folds the ways one number gets printed: case,
// separators and spacing, leading zeros of each digit run ("INV-0042",
// "inv 42" and "INV42" are one number), and the letters OCR reads for
// digits and back (O D Q as 0, I L as 1, Z as 2, S as 5, G as 6, B as 8:
// "VD1018" scanned and "V01018" typed are one number). Runs stay apart, so
// "1-23" and "12-3" remain two numbers.
//
// The confusion fold can make two different numbers one ("INV-B42" and
// "INV-842"): then the second is flagged as a duplicate and reviewed, the
// safe side. Missing a duplicate because a scan misread one character
// would approve it.
func NormalizeInvoiceNumber(s string) string {
	s = strings.Map(foldConfusable, strings.ToUpper(s))
	var parts []string
	var cur []rune
	kind := 0 // 1 letters, 2 digits
	flush := func() {
		if len(cur) == 0 {
			return
		}
		p := string(cur)
		if kind == 2 {
			p = strings.TrimLeft(p, "0")
			if p == "" {
				p = "0"
			}
		}
		parts = append(parts, p)
		cur = cur[:0]
	}
	for _, r := range s {
		k := 0
		switch {
		case unicode.IsDigit(r):
			k = 2
		case unicode.IsLetter(r):
			k = 1
		}
		if k != kind {
			flush()
			kind = k
		}
		if k != 0 {
			cur = append(cur, r)
		}
	}
	flush()
	return strings.Join(parts, "-")
}

// MemoryHistory is a History in memory, for batches and tests. Safe for
// concurrent use.
type MemoryHistory struct {
	mu   sync.Mutex
	seen map[DupKey]bool
}

// NewMemoryHistory returns an empty history.
func NewMemoryHistory() *MemoryHistory { return &MemoryHistory{seen: map[DupKey]bool{}} }

// Seen reports whether k was recorded.
func (h *MemoryHistory) Seen(_ context.Context, k DupKey) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[k], nil
}

// Record remembers k.
func (h *MemoryHistory) Record(_ context.Context, k DupKey) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen[k] = true
	return nil
}

// foldConfusable maps a letter OCR confuses with a digit to that digit.
func foldConfusable(r rune) rune {
	switch r {
	case 'O', 'D', 'Q':
		return '0'
	case 'I', 'L', '|':
		return '1'
	case 'Z':
		return '2'
	case 'S':
		return '5'
	case 'G':
		return '6'
	case 'B':
		return '8'
	}
	return r
}
