// Package redact finds personal data (PII) in a document and writes the
// document back in the same format with that data replaced, masked,
// hashed or removed, as a job's policy says. It is the front of the
// redaction job: Redactor wires the parts below together, split the way
// Presidio is.
//
//   - recognizer: the Recognizer interface and the registry, which is
//     data (recognizer/data/registry.yaml: which recognizers run, for
//     which types, with which context words, patterns and scores; name
//     lists, address templates, IBAN and card tables beside it). The
//     kinds: recognizer/pattern (regex + validator + context; IBAN and
//     ABA checks through internal/checksum), recognizer/address,
//     recognizer/person, recognizer/ocr (what only OCR pages need).
//   - nlp: tokens, folding, context phrases and windows, which
//     recognizers read.
//   - analyzer: runs the registry over a text, a field's value or an
//     OCR page under the policy's types and thresholds, and settles
//     overlaps.
//   - operator: replace with "<TYPE>", mask, salted hash, remove.
//   - formats: text, JSON and CSV written back as they came (structure,
//     dialect, BOM and line endings kept).
//   - pages and raster: findings mapped to word boxes on extracted pages
//     (table cells read under their column's header and with the cell
//     below), opaque boxes painted on page images, and PDFs rebuilt from
//     those images alone ("rasterise and rebuild").
//   - policy and result: the contract packages the host links (the
//     operator configuration, and the job's result).
//
// Types: PERSON, EMAIL, PHONE, US_SSN, CREDIT_CARD, IBAN, IP_ADDRESS,
// DATE_OF_BIRTH, STREET_ADDRESS, US_BANK_ACCOUNT, US_BANK_ROUTING,
// US_PASSPORT, US_DRIVER_LICENSE. Findings are code-point offsets (text,
// JSON, CSV) or pages and boxes (PDFs, images).
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
//     guest; only the contract sub-packages are imported by the host.
//
// The analysis is pure Go; only raster.CheckPDF (a test and audit
// helper) runs poppler's tools.
package redact
