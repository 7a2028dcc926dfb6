// Package imagewrite writes gray page images as PNG (with its pHYs
// resolution), JPEG (with a JFIF density) or multi-page TIFF (Deflate
// gray, or CCITT G4 black and white as a fax): how the redaction job
// writes a redacted scan back in its input's format, and how the test
// generators (internal/docseval/testdocs) write scans.
//
// It only writes: it never decodes an image, so it needs none of the
// limits a reader of untrusted files does. It carries no fonts and draws
// nothing.
package imagewrite
