// Package pipeline holds the host-side harness for redaction (tests
// only): it writes the redaction corpus to disk and runs the real guest
// pipeline natively on it, step for step as cmd/airlock-docs's redact and
// verify commands do (extraction with poppler and tesseract, the page
// pipeline, rasterise and rebuild at 150 dpi, then a fresh re-extraction
// with OCR for the verifier), and scores the result: redaction precision
// and recall per type and format, verifier false holds and misses, canary
// leaks, and CheckPDF on every rebuilt PDF.
//
// It is behind AIRLOCK_REDACT_PIPELINE (see pipeline_test.go) because OCR
// is slow; nothing here runs in a VM or reaches the host's jobs code.
package pipeline
