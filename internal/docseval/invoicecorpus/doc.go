// Package invoicecorpus generates synthetic invoices for evaluating the invoice
// job end to end: deterministic by seed, several layouts (US, UK, DE, FR,
// NL, minimal, multi-page, two vendors with their own templates),
// currencies and date styles, each invoice as testdocs.Fixed pages with its
// ground truth and the rendering mode the testdocs renderer should use
// (text PDF, scanned PDF, photo PNG/JPEG, fax TIFF with a cover sheet).
//
// Invoices carry planted traps (changed bank details, hidden instructions
// of every hidden kind, visible instructions, total mismatches, duplicate
// numbers, unknown vendors, past-due and high-value invoices, a faint
// "$9,000.00") or none. vendors.json is the vendor master of the corpus
// tenant. Simulate is a stand-in for rendering + extraction (words with
// boxes, optional OCR noise, ink renders), and Eval scores outcomes:
// per-field accuracy, per-trap recall, flags on clean invoices and
// approvals of misread amounts.
//
// It only writes documents and scores; it never reads a real document and
// is not used in production.
package invoicecorpus
