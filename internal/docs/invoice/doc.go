// Package invoice extracts an invoice's fields inside the guest, from the
// pages of words package extract produced: vendor, numbers, dates,
// currency, amounts, bank details, tax id and line items, each with the
// method that found it (template, label, table, inferred) and a confidence
// that combines that method with the OCR confidence of the words and the
// problems seen (OCR repairs, ambiguous dates, implausible separators).
//
// An invoice is hostile three ways: as a file (package extract and the VM
// deal with that), as text aimed at whoever reads it, and as another
// tenant's banking data. So before any field is read, every word of the
// text layer is screened (package hidden): off-page, tiny, white,
// near-white and covered text is counted, excerpted (short, digits masked)
// and dropped; instruction-like phrases (package inject) are reported with
// their page and layer, and the rows holding them are dropped too. Nothing
// hidden and nothing instruction-like can reach a field.
//
// Vendor templates (templates/*.yml, invoice2data-style keywords, field
// regexes and formats) take precedence; the generic extractor reads labels
// (lexicon.yaml) to the left of or above their values using word boxes,
// and line-item tables by their header columns.
//
// What it must never do: decide. The Result has no approval, status or
// decision; the host (internal/jobs/invoicecheck) validates every value
// and decides. It must never guess silently either: an amount whose
// separators make no sense is reported with implausible_separators and a
// confidence the host will not approve, even when the rest of the invoice
// says what it should be. An OCR digit is repaired only where two
// independent equations confirm the one look-alike that fits (repair.go),
// never in the total or shipping, and always marked ocr_corrected.
//
// Driver sketch (cmd/airlock-docs):
//
//	doc, _ := extract...(path)                                      // pages of words
//	renders, _ := hidden.RenderPages(ctx, hidden.RenderConfig{}, path, 1, n) // text PDFs
//	off, _ := hidden.OffPageWords(ctx, hidden.RenderConfig{}, path, 1, n, sizes)
//	res, err := invoice.Extract(doc, invoice.Options{Renders: renders, OffPage: off})
//	// pages with res.Pages[i].InvisibleLayer: OCR them, extract again
//	// marshal res into the envelope's "result"
package invoice
