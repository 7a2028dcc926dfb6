// Package raster writes redacted page documents: it paints opaque boxes
// over the findings' word boxes on page images (DrawBoxes, PageBoxes) and
// rebuilds a PDF from those images alone ("rasterise and rebuild":
// RebuildPDF, no text layer, fonts, metadata, annotations, forms or
// attachments), or re-encodes an input image in its own format without
// its metadata (RedactImage). CheckPDF, for tests and audits, re-reads a
// rebuilt PDF with poppler and qpdf and reports every way an original
// value could have survived; the job itself runs no external tool.
package raster
