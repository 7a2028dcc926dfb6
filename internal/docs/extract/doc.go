// Package extract turns a document (PDF, PNG, JPEG, TIFF) into pages of
// lines and words with boxes, inside the guest: the PDF text layer through
// poppler (pdfinfo, pdftotext -bbox-layout), pages with too little text
// rasterised (pdftoppm, gray; a scanned page at its own image's
// resolution, from pdfimages -list) and read by tesseract (TSV) after
// deskew, with two second passes where the first found no word over ink:
// faint print read with its contrast stretched, and blocks of ordinary
// print tesseract's layout analysis dropped read again as one block. It
// records per page the method used and the OCR mean confidence, enforces
// page, pixel, byte and time limits before any tool gets a hostile input,
// and classifies failures with the docs error codes (encrypted, unreadable,
// too_large, timeout).
//
// Reflow then rebuilds running text for the jobs that read prose
// (contract review): running headers, footers and page numbers removed
// (as OCR misreads them too), hyphenated line ends re-joined, wrapped
// lines joined into paragraphs, each paragraph keeping the pages and lines
// it came from. On a deskewed scan the layout is read from the lines as
// they were set, not from their boxes turned back onto the page.
//
// What this package must never do:
//   - run on the host: it parses and renders untrusted documents, and is
//     only ever called inside a sandbox;
//   - decode pixels or start a renderer before the declared size has been
//     checked (page count from pdfinfo, page box against the pixel limit,
//     every TIFF directory, PNG/JPEG headers);
//   - run a tool without a deadline that kills its whole process group and
//     a cap on what it may write;
//   - execute anything a document carries (JavaScript, actions, forms):
//     poppler and tesseract only read and render;
//   - put document text into an error message: messages go to the host.
package extract
