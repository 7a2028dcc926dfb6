// Package formats holds the redactor's same-format writers for text
// documents: plain text, JSON and CSV go back out as the bytes that came
// in with only the redacted values rewritten (by the job's operator), so
// encoding (UTF-8, or UTF-16 with its byte-order mark), a BOM, line
// endings, JSON whitespace, key order, number formatting and escapes, and
// the CSV dialect (delimiter, quoting, CRLF) are kept. JSON strings are
// analysed under their nearest key and CSV cells under their column's
// header. Findings carry code-point offsets into the decoded input,
// never the value.
//
// Undecodable input (invalid UTF-8, unpaired surrogates, NUL bytes,
// malformed JSON or CSV) is an unreadable error, never copied through
// unexamined; limits bound what one job reads (too_large). Page
// documents (PDFs, images) are the pages and raster packages' business.
package formats
