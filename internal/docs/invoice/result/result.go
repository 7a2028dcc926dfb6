package result

// Job is the job name in the docs envelope.
const Job = "invoice"

// Field names: the JSON names in Fields and the keys of
// Result.FieldSources. Part of the contract; never rename one.
const (
	FieldVendorName    = "vendor_name"
	FieldInvoiceNumber = "invoice_number"
	FieldInvoiceDate   = "invoice_date"
	FieldDueDate       = "due_date"
	FieldCurrency      = "currency"
	FieldSubtotal      = "subtotal"
	FieldTax           = "tax"
	FieldShipping      = "shipping"
	FieldTotal         = "total"
	FieldPONumber      = "po_number"
	FieldIBAN          = "iban"
	FieldBIC           = "bic"
	FieldAccountNumber = "account_number"
	FieldRoutingNumber = "routing_number"
	FieldSortCode      = "sort_code"
	FieldVendorTaxID   = "vendor_tax_id"
	FieldLineItems     = "line_items"
)

// ScalarFields lists every single-valued field, in output order. A fresh
// slice each call, so no caller can change another's view.
func ScalarFields() []string {
	return []string{
		FieldVendorName, FieldInvoiceNumber, FieldInvoiceDate, FieldDueDate,
		FieldCurrency, FieldSubtotal, FieldTax, FieldShipping, FieldTotal,
		FieldPONumber, FieldIBAN, FieldBIC, FieldAccountNumber,
		FieldRoutingNumber, FieldSortCode, FieldVendorTaxID,
	}
}

// AmountFields are the scalar fields holding money.
func AmountFields() []string {
	return []string{FieldSubtotal, FieldTax, FieldShipping, FieldTotal}
}

// Methods: how a field's value was found.
const (
	MethodTemplate = "template" // a vendor template's regex
	MethodLabel    = "label"    // a label next to or above the value
	MethodTable    = "table"    // a line-item table's columns
	MethodInferred = "inferred" // derived (currency from symbols, vendor from the letterhead, a repaired amount)
	// MethodModel: read by the tenant's model (through the egress proxy)
	// where the rules found nothing. Its confidence is below what the host
	// approves on its own: a model's reading is a suggestion for a person.
	MethodModel = "model"
)

// Methods lists the valid Method values.
func Methods() []string {
	return []string{MethodTemplate, MethodLabel, MethodTable, MethodInferred, MethodModel}
}

// Issues a field source may carry. They explain a lowered confidence; the
// host treats implausible_separators and checksum_failed on money and bank
// fields as never-approve.
const (
	IssueOCRCorrected          = "ocr_corrected"          // O/0, l/1, S/5, B/8 repaired in a numeric context
	IssueImplausibleSeparators = "implausible_separators" // 9.000.00, or 900000 where the rest says 9000.00
	IssueAmbiguousDate         = "ambiguous_date"         // 03/04/2026 read by the document's locale, not by the digits
	IssueChecksumFailed        = "checksum_failed"        // an IBAN that fails mod-97 as read
	IssueLineMismatch          = "line_mismatch"          // a line's quantity x unit price is not its amount
	IssueLowOCRConfidence      = "low_ocr_confidence"     // a word of the value has low tesseract confidence
	// IssueValueUnreadable marks a bank field whose label was found but
	// whose value could not be read: its source has no value beside it,
	// so the host knows bank details were printed and not checked.
	IssueValueUnreadable = "value_unreadable"
	// IssueModelDisagrees: the model read the field differently from the
	// rules. Two independent readings that differ need a person.
	IssueModelDisagrees = "model_disagrees"
)

// Issues lists the valid issue codes.
func Issues() []string {
	return []string{IssueOCRCorrected, IssueImplausibleSeparators, IssueAmbiguousDate,
		IssueChecksumFailed, IssueLineMismatch, IssueLowOCRConfidence, IssueValueUnreadable, IssueModelDisagrees}
}

// Hidden-text kinds: why text in the text layer is not visible.
const (
	HiddenOffPage     = "off_page"     // its box lies outside the page
	HiddenTiny        = "tiny"         // glyphs under ~2 pt tall
	HiddenWhite       = "white"        // draws no ink on a light background (white fill, invisible render mode)
	HiddenLowContrast = "low_contrast" // draws ink too close to the background to read (near-white)
	HiddenCovered     = "covered"      // draws no visible ink because something opaque is drawn over it
	// HiddenOverlapping is text printed over other text: ink is seen, but
	// not whose, so neither word is trusted.
	HiddenOverlapping = "overlapping"
)

// HiddenKinds lists the valid hidden-text kinds.
func HiddenKinds() []string {
	return []string{HiddenOffPage, HiddenTiny, HiddenWhite, HiddenLowContrast, HiddenCovered, HiddenOverlapping}
}

// Injection phrase codes: the families of instruction-like text.
const (
	PhrasePreApproved        = "pre_approved"
	PhraseApprovedForPayment = "approved_for_payment"
	PhraseSkipReview         = "skip_review"
	PhraseIgnoreAmount       = "ignore_amount"
	PhraseIgnoreInstructions = "ignore_instructions"
	PhraseSetField           = "set_field"
	PhraseNewBankAccount     = "new_bank_account"
	PhraseUrgentPayment      = "urgent_payment"
)

// PhraseCodes lists the valid phrase codes.
func PhraseCodes() []string {
	return []string{PhrasePreApproved, PhraseApprovedForPayment, PhraseSkipReview,
		PhraseIgnoreAmount, PhraseIgnoreInstructions, PhraseSetField,
		PhraseNewBankAccount, PhraseUrgentPayment}
}

// Limits the guest keeps and the host enforces.
const (
	MaxPages          = 500
	MaxLineItems      = 500
	MaxHiddenEntries  = 200
	MaxInjections     = 200
	MaxExcerptRunes   = 40
	MaxTextRunes      = 200 // vendor name, ids
	MaxDescRunes      = 300 // a line item's description
	MaxTemplateRunes  = 64
	MaxResultBytes    = 1 << 20
	MaxIssuesPerField = 8
	MaxCandidates     = 5 // per candidate field
)

// CandidateFields are the fields the result may offer further readings
// of: the ones the host can check against the tenant's vendor master.
func CandidateFields() []string { return []string{FieldVendorName, FieldVendorTaxID} }

// Result is the invoice job's result (the envelope's "result").
type Result struct {
	Fields Fields `json:"fields"`
	// FieldSources has one entry per non-null scalar field and one for
	// line_items (the weakest line), plus entries with the
	// value_unreadable issue (and confidence 0) for bank fields whose
	// label was printed but whose value could not be read.
	FieldSources map[string]FieldSource `json:"field_sources"`
	// HiddenText summarises text found in the text layer but not visible,
	// one entry per page and kind. None of it reached a field.
	HiddenText []HiddenText `json:"hidden_text"`
	// Injection lists instruction-like phrases, visible or not.
	Injection []Injection `json:"injection"`
	Pages     []PageInfo  `json:"pages"`
	// Template names the vendor template that matched, "" for the generic
	// extractor.
	Template string `json:"template"`
	// Candidates are further readings of the CandidateFields: what else
	// the document prints where a vendor's name or tax id is found (the
	// letterhead's other cells, a legal footer, a sender line, values of
	// other labels, ids found by their shape), best first, never the
	// field's own value. The host may prefer one that its vendor master
	// knows; a candidate is printed text, never a guess.
	Candidates map[string][]Candidate `json:"candidates"`
}

// Candidate is one further reading of a field.
type Candidate struct {
	Value      string  `json:"value"`
	Method     string  `json:"method"`
	Confidence float64 `json:"confidence"`
	Page       int     `json:"page"`
}

// Fields are the extracted values; null when not found. Amounts are
// decimal strings ("1234.56", never floats), dates ISO 8601 (YYYY-MM-DD),
// currency ISO 4217, bank numbers without spaces.
type Fields struct {
	VendorName    *string    `json:"vendor_name"`
	InvoiceNumber *string    `json:"invoice_number"`
	InvoiceDate   *string    `json:"invoice_date"`
	DueDate       *string    `json:"due_date"`
	Currency      *string    `json:"currency"`
	Subtotal      *string    `json:"subtotal"`
	Tax           *string    `json:"tax"`
	Shipping      *string    `json:"shipping"`
	Total         *string    `json:"total"`
	PONumber      *string    `json:"po_number"`
	IBAN          *string    `json:"iban"`
	BIC           *string    `json:"bic"`
	AccountNumber *string    `json:"account_number"`
	RoutingNumber *string    `json:"routing_number"`
	SortCode      *string    `json:"sort_code"`
	VendorTaxID   *string    `json:"vendor_tax_id"`
	LineItems     []LineItem `json:"line_items"`
}

// Ptr returns the address of the named scalar field, nil for an unknown
// name, so code can walk the fields by name without reflection.
func (f *Fields) Ptr(name string) **string {
	switch name {
	case FieldVendorName:
		return &f.VendorName
	case FieldInvoiceNumber:
		return &f.InvoiceNumber
	case FieldInvoiceDate:
		return &f.InvoiceDate
	case FieldDueDate:
		return &f.DueDate
	case FieldCurrency:
		return &f.Currency
	case FieldSubtotal:
		return &f.Subtotal
	case FieldTax:
		return &f.Tax
	case FieldShipping:
		return &f.Shipping
	case FieldTotal:
		return &f.Total
	case FieldPONumber:
		return &f.PONumber
	case FieldIBAN:
		return &f.IBAN
	case FieldBIC:
		return &f.BIC
	case FieldAccountNumber:
		return &f.AccountNumber
	case FieldRoutingNumber:
		return &f.RoutingNumber
	case FieldSortCode:
		return &f.SortCode
	case FieldVendorTaxID:
		return &f.VendorTaxID
	}
	return nil
}

// LineItem is one row of the line-item table.
type LineItem struct {
	Description string  `json:"description"`
	Quantity    *string `json:"quantity"`
	Unit        *string `json:"unit"`
	UnitPrice   *string `json:"unit_price"`
	Amount      *string `json:"amount"`
}

// FieldSource says how a field was found and how much to trust it.
type FieldSource struct {
	Method string `json:"method"`
	// Confidence is 0..1: the method's reliability times the weakest OCR
	// word confidence of the value, lowered by each issue.
	Confidence float64  `json:"confidence"`
	Page       int      `json:"page"`
	Issues     []string `json:"issues"`
}

// HiddenText is invisible text found on a page, summarised per kind.
type HiddenText struct {
	Page  int    `json:"page"`
	Kind  string `json:"kind"`
	Chars int    `json:"chars"`
	// Excerpt is at most MaxExcerptRunes of the first hidden run, with
	// digit runs of five or more masked, so no hidden account number
	// leaves the guest.
	Excerpt string `json:"excerpt"`
}

// Injection is one instruction-like phrase found on a page.
type Injection struct {
	Page       int    `json:"page"`
	PhraseCode string `json:"phrase_code"`
	Visible    bool   `json:"visible"`
	// HiddenKind is the kind of the hidden words it was found in, "" when
	// visible.
	HiddenKind string `json:"hidden_kind"`
}

// PageInfo is what the guest knows about how a page was read.
type PageInfo struct {
	Number        int     `json:"number"`
	Method        string  `json:"method"`         // "text" or "ocr"
	OCRConfidence float64 `json:"ocr_confidence"` // mean word confidence 0-100, -1 for text pages
	// InkChecked says the text layer was compared with rendered pixels, so
	// white and covered text could be found. Always false on OCR pages,
	// which have no hidden layer.
	InkChecked bool `json:"ink_checked"`
	// InvisibleLayer: most of the page's text layer draws no ink, as in a
	// scanned PDF with an OCR text layer. What the page shows is its
	// image; the driver should OCR it and extract again.
	InvisibleLayer bool `json:"invisible_layer"`
}
