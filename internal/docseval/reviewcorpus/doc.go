// Package reviewcorpus generates synthetic contracts with known review results,
// and scores review results against them.
//
// Generate builds contracts from a playbook (the default one unless told
// otherwise): each playbook clause is present verbatim, with trivial
// changes (case, quotes, serial comma, a dropped comma or hyphen, a
// paragraph break), with a changed key term (a period in words and digits,
// an amount or currency, a percentage, a multiplier, a jurisdiction), with
// a substantive rewording of similar length, or missing. Contracts vary
// heading styles (numbered, "Section 7 -", ARTICLE with "Section 7.01",
// all caps, run-in), heading synonyms and headings the playbook does not
// list, nest clauses in other articles, add filler clauses that are not in
// the playbook, break pages inside clauses and carry running headers and
// footers. Every contract comes as a testdocs.Flow (for the PDF and scan
// renderer), as the paragraphs extraction would produce, and with its
// ground truth. Noisy adds OCR-like errors to paragraphs. Eval scores
// review results against the truth.
//
// Everything is deterministic for a seed. The package only generates and
// scores text; it never reads a document, so it is safe on the host. The
// generator's own knowledge of numbers and places is independent of the
// review package's extractor, so the evaluation does not grade the
// analyser with its own code.
package reviewcorpus
