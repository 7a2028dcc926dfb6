// Package redact finds personal data (PII) in a document and writes the
// document back in the same format with that data replaced, masked,
// hashed or removed, as a job's policy says.
//
// What it owns:
//
//   - Detectors in the spirit of Presidio's recognisers: candidate
//     patterns, context words and validators, driven by the embedded data
//     files under data/ (patterns.yaml, address.yaml, context.yaml, name
//     lists, IBAN and card tables). Types: PERSON, EMAIL, PHONE, US_SSN,
//     CREDIT_CARD, IBAN, IP_ADDRESS, DATE_OF_BIRTH, STREET_ADDRESS,
//     US_BANK_ACCOUNT, US_BANK_ROUTING, US_PASSPORT, US_DRIVER_LICENSE.
//   - Operators (replace with "<TYPE>", mask, salted hash, remove) and the
//     policy file that picks them per type.
//   - Same-format redaction of text, JSON and CSV (structure, dialect,
//     BOM and line endings kept), and of pages: findings mapped to word
//     boxes, opaque boxes painted on page images, and PDFs rebuilt from
//     those images alone ("rasterise and rebuild"). On pages, table cells
//     are read under their column's header and with the cell below
//     (cells.go), and OCR text is also read with digit look-alikes as
//     digits and with labels vouching for misread values (ocr.go,
//     ocr_labels.go).
//   - Findings as code-point offsets (text, JSON, CSV) or pages and boxes
//     (PDFs, images); see the contract sub-package.
//
// What it must never do:
//
//   - Put an original value anywhere but the redacted output's untouched
//     parts: not in findings, errors, logs or metadata (a salted hash only
//     when the policy asks for it).
//   - Pass undecodable input through: invalid UTF-8 is an unreadable
//     error, never copied to the output unexamined.
//   - Be the last word on what is released: its findings are a hint; the
//     independent checker in internal/docs/verify decides, in a second
//     sandbox, on the output.
//   - Run on the host: like the rest of internal/docs it runs inside the
//     guest; only the contract sub-package is imported by the host.
//
// The analyser is pure Go; only CheckPDF (a test and audit helper) runs
// poppler's tools.
package redact
