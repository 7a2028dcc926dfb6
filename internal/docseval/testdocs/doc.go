// Package testdocs renders the project's own synthetic documents for
// corpora, evals and tests: text PDFs (with running headers and footers,
// hidden-text traps, encryption), scans (rasterised, skewed, noisy, blurred
// pages as PNG, JPEG, TIFF or image-only PDFs) and hostile inputs
// (truncated, zero-byte, page and pixel bombs). It only ever writes files;
// it never reads a document, so using it on the host is safe.
//
// Text is set in the embedded Go fonts (Latin with European accents, Greek,
// Cyrillic); text they cannot draw is an error, never a row of empty boxes.
// Every output is deterministic: fixed PDF dates and owner password, and
// scan noise drawn from Scan.Seed.
//
// How the hidden-text kinds behave in poppler (pinned by TestHiddenText):
// White, NearWhite, Tiny and UnderImage are in pdftotext's output but not
// (or, Tiny, barely) visible when rendered; OffPage text lies wholly
// outside the page box, where pdftotext drops it.
package testdocs
