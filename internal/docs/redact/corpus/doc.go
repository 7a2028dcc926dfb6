// Package corpus generates the redaction corpus: synthetic documents with
// span-level ground truth, deterministic for a seed, in every input shape
// the redactor handles (plain text, JSON with PII in keys, nested strings
// and numbers, CSV with BOM, CRLF and quoted multi-line cells, and page
// documents as testdocs.Fixed pages with every word's box recorded, for
// text PDFs and scans). Each document mixes personal data with the near
// misses that must stay (invalid SSNs, Luhn-invalid cards, transaction
// ids, checksum-invalid IBANs and routing numbers, ISBNs, order and
// tracking numbers, timestamps, versions, dates that are not birth dates,
// names that are also words used as words).
//
// Eval scores a detector's spans against the ground truth: precision,
// recall and F2 per type under the overlap rules stated on Eval.
//
// The package only generates and scores: it imports no detector and
// shares no pattern or list with internal/docs/redact or
// internal/docs/verify, so it can judge both.
package corpus
