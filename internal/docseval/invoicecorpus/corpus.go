package invoicecorpus

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

//go:embed vendors.json
var vendorsJSON []byte

// TenantID is the corpus tenant, as in vendors.json.
const TenantID = "corpus-tenant"

// VendorMaster returns the corpus tenant's vendor master (the
// invoicecheck master format).
func VendorMaster() []byte { return append([]byte(nil), vendorsJSON...) }

// AsOf is the day the corpus is judged on: clean invoices fall due after
// it, past-due traps before it.
func AsOf() time.Time { return time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC) }

// AutoApproveLimit is the corpus tenant's limit in every corpus currency.
const AutoApproveLimit = 10000

// Mode is how the renderer should produce an invoice.
type Mode string

const (
	ModeTextPDF   Mode = "text_pdf"   // a PDF with a text layer
	ModeScanPDF   Mode = "scan_pdf"   // an image-only PDF of a scan
	ModePhotoPNG  Mode = "photo_png"  // a phone photo, lossless
	ModePhotoJPEG Mode = "photo_jpeg" // a phone photo, JPEG
	ModeFaxTIFF   Mode = "fax_tiff"   // a bilevel fax, cover sheet first
)

// OCR reports whether the mode is read by OCR.
func (m Mode) OCR() bool { return m != ModeTextPDF }

// Render is the renderer's instructions for one invoice.
type Render struct {
	Mode Mode
	Scan *testdocs.Scan // nil for text PDFs
	// CoverSheet: page 1 of Doc is a fax cover sheet.
	CoverSheet bool
}

// Trap is a planted problem.
type Trap string

const (
	TrapBankChange       Trap = "bank_change"
	TrapHiddenWhite      Trap = "hidden_white"
	TrapHiddenNearWhite  Trap = "hidden_near_white"
	TrapHiddenTiny       Trap = "hidden_tiny"
	TrapHiddenOffPage    Trap = "hidden_off_page"
	TrapHiddenUnderImage Trap = "hidden_under_image"
	TrapVisibleInjection Trap = "visible_injection"
	TrapTotalMismatch    Trap = "total_mismatch"
	TrapDuplicate        Trap = "duplicate"
	TrapUnknownVendor    Trap = "unknown_vendor"
	TrapPastDue          Trap = "past_due"
	TrapHighValue        Trap = "high_value"
	TrapFaintAmount      Trap = "faint_amount" // "$9,000.00" printed faintly, rendered degraded
)

// Traps lists every trap in a fixed order.
func Traps() []Trap {
	return []Trap{TrapBankChange, TrapHiddenWhite, TrapHiddenNearWhite, TrapHiddenTiny, TrapHiddenOffPage,
		TrapHiddenUnderImage, TrapVisibleInjection, TrapTotalMismatch, TrapDuplicate, TrapUnknownVendor,
		TrapPastDue, TrapHighValue, TrapFaintAmount}
}

// hiddenTrap reports traps that live only in a text layer.
func hiddenTrap(t Trap) bool {
	switch t {
	case TrapHiddenWhite, TrapHiddenNearWhite, TrapHiddenTiny, TrapHiddenOffPage, TrapHiddenUnderImage:
		return true
	}
	return false
}

// ExpectedFlags is the invoicecheck flag a trap must raise. ocr says the
// invoice is read by OCR: hidden text is then not in what is read (the
// image shows none of it), and a faint amount is degraded.
func ExpectedFlags(t Trap, ocr bool) []string {
	switch {
	case t == TrapBankChange:
		return []string{"bank_details_changed"}
	case hiddenTrap(t) && !ocr, t == TrapVisibleInjection:
		return []string{"prompt_injection"}
	case t == TrapTotalMismatch:
		return []string{"total_mismatch"}
	case t == TrapDuplicate:
		return []string{"duplicate_invoice_number"}
	case t == TrapUnknownVendor:
		return []string{"unknown_vendor"}
	case t == TrapPastDue:
		return []string{"past_due"}
	case t == TrapHighValue:
		return []string{"high_value"}
	case t == TrapFaintAmount && ocr:
		// Read with low confidence, or not read at all: either way a
		// person looks. ("a|b" is satisfied by either flag.)
		return []string{"low_confidence|unreadable"}
	}
	return nil
}

// Case is one generated invoice.
type Case struct {
	ID       string
	Layout   string
	VendorID string // "" for an unknown vendor
	Doc      testdocs.Fixed
	Render   Render
	Truth    result.Fields
	Traps    []Trap
}

// Clean reports an invoice with no trap.
func (c *Case) Clean() bool { return len(c.Traps) == 0 }

// Corpus is a generated set of invoices, in the order they are to be
// checked (duplicates follow their originals).
type Corpus struct {
	Seed  int64
	Cases []Case
}

// Generate builds n invoices from seed; the same seed gives the same
// corpus.
func Generate(seed int64, n int) (*Corpus, error) {
	vs, err := loadVendors()
	if err != nil {
		return nil, err
	}
	g := &generator{rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed_1a7e)), vendors: vs, locales: locales()}
	c := &Corpus{Seed: seed}
	plan := g.plan(n)
	for i, trap := range plan {
		cs, err := g.invoiceCase(i, trap, c.Cases)
		if err != nil {
			return nil, fmt.Errorf("case %d: %w", i, err)
		}
		c.Cases = append(c.Cases, cs)
	}
	return c, nil
}

// plan spreads traps evenly: of every 21 invoices 8 are clean and 13 carry
// one trap each, shuffled.
func (g *generator) plan(n int) []Trap {
	var out []Trap
	for len(out) < n {
		block := make([]Trap, 8, 21)
		block = append(block, Traps()...)
		g.rng.Shuffle(len(block), func(i, j int) { block[i], block[j] = block[j], block[i] })
		out = append(out, block...)
	}
	return out[:n]
}

type vendorRec struct {
	VendorID string   `json:"vendor_id"`
	Name     string   `json:"name"`
	Aliases  []string `json:"aliases"`
	TaxID    string   `json:"tax_id"`
	Country  string   `json:"country"`
	Currency string   `json:"currency"`
	Address  string   `json:"address"`
	Bank     struct {
		IBAN          string `json:"iban"`
		BIC           string `json:"bic"`
		AccountNumber string `json:"account_number"`
		RoutingNumber string `json:"routing_number"`
		SortCode      string `json:"sort_code"`
	} `json:"bank"`
}

func loadVendors() ([]vendorRec, error) {
	var m struct {
		TenantID string      `json:"tenant_id"`
		Vendors  []vendorRec `json:"vendors"`
	}
	if err := json.Unmarshal(vendorsJSON, &m); err != nil {
		return nil, fmt.Errorf("corpus vendors.json: %w", err)
	}
	if m.TenantID != TenantID || len(m.Vendors) == 0 {
		return nil, fmt.Errorf("corpus vendors.json: tenant %q with %d vendors", m.TenantID, len(m.Vendors))
	}
	return m.Vendors, nil
}
