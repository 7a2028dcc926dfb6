// Package pages finds PII on extracted pages (PDFs, scans, images) and
// says where to paint: page text is built from extraction's lines and
// words, analysed whole (OCR pages with look-alike digits and labels
// vouching for misread values), and, because forms and tables put their
// context in headers and wrap values in narrow cells, each table cell is
// also analysed under its column's header and with the cell below it.
// Findings carry the page, offsets into the page text and the padded
// boxes of every word they touch (a word partly in a finding is boxed
// whole). Painting and rebuilding is the raster package's business.
package pages
