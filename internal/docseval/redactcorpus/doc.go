// Package redactcorpus generates the redaction corpus: synthetic documents with
// ground truth, deterministic for a seed, in every input shape the
// redactor handles (plain text, JSON with PII in keys, nested strings
// and numbers, CSV with BOM, CRLF and quoted multi-line cells, and page
// documents as testdocs.Fixed pages with every word's box recorded:
// forms, letters that wrap entities across lines, memos and statements
// with tables, as text PDFs and as scans). Each document mixes personal
// data with the near misses that must stay (invalid SSNs, Luhn-invalid
// cards, transaction ids, checksum-invalid IBANs and routing numbers,
// ISBNs, order and tracking numbers, timestamps, versions, dates that are
// not birth dates, names that are also words used as words, labels
// followed by departments rather than people). A few canary strings are
// planted as entities (see Canaries).
//
// WriteFiles writes a corpus to disk with a truth file beside each
// document; Score scores a redactor's findings against the truths:
// precision, recall and F2 per type and per format, under the overlap
// rules stated on Score.
//
// The package only generates and scores: it imports no detector and
// shares no pattern or list with internal/docs/redact or
// internal/docs/verify, so it can judge both.
package redactcorpus
