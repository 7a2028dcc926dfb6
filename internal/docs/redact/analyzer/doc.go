// Package analyzer orchestrates the redactor's detection, as Presidio's
// AnalyzerEngine does: it loads the recognizer registry
// (internal/docs/redact/recognizer, data/registry.yaml) with the kinds
// implemented beside it, cuts long texts into overlapping windows, runs
// every recognizer whose types the job's policy enables, drops what
// scores under its type's threshold, and settles overlaps (higher score
// first, then the longer span; a span that contains what it overlaps
// replaces it unless it scores much lower). It also analyses a value
// under its field name (a JSON key, a CSV or table header) and the text
// of OCR pages (look-alike digits, labels vouching for misread values).
//
// It returns spans and findings with offsets only, never values. Like
// the rest of internal/docs/redact it runs only inside the guest.
package analyzer
