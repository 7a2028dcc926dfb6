// Package invoicesim stands in for the renderer and the extractor on the
// invoice corpus: it turns a case's pages into the words-with-boxes
// extract would produce and the ink renders the hidden-text check would
// see, with OCR's noise when asked. It imports the guest's extract and
// hidden types, so only tests link it; the host's corpus and eval
// commands never do.
package invoicesim
