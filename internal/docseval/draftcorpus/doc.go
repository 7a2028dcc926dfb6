// Package draftcorpus is the second contract-review corpus: contracts
// as a second drafter writes them, generated from hand-written material
// (data/drafts.yaml) that shares nothing with reviewcorpus's generator
// but the default playbook whose standard texts some clauses quote.
//
// What differs from reviewcorpus, on purpose: this drafter's own wordings
// of every clause (same key terms, other words), its own key-term edits,
// sentences it adds to a standard clause, headings the playbook does not
// list, combined sections ("Term and Termination", "Liability and
// Indemnities") that hold a clause beside provisions on other subjects,
// clauses run into one paragraph with such a provision, a general section
// of short provisions with and without run-in headings, sections on a
// neighbouring subject where a clause is missing, and real-world layouts:
// two justified columns of small type, side headings in ruled table
// cells, "Clause 7 - Liability" headings with a key terms table and
// footnotes, a signature block the analysis has no pattern for, and
// parties and signatories with German, Nordic, Polish, French, Turkish,
// Greek, Spanish, Irish, Nigerian, Japanese and Vietnamese names.
//
// The material comes in two halves, tune and heldout: a contract draws
// every piece of text from one half. The analysis may be tuned on the
// tune half; the heldout half is only ever measured and reported.
//
// The truth, per playbook clause:
//   - MATCH: the standard text, verbatim or trivially changed (capitals,
//     typographic quotes, a serial comma or a hyphen dropped, a comma set
//     as a dash, a paragraph break, a footnote marker, and whatever the
//     layout does to it: columns, cells, page turns), wherever it sits;
//   - DEVIATION with numeric_change: a key term of the standard edited, or
//     the drafter's own wording with a key term changed, added or gone, or
//     a sentence added to the clause that brings a key term of its own;
//   - DEVIATION: the drafter's own wording with the same key terms, or a
//     sentence added to the standard text (in its paragraph, or as the
//     paragraph right after it);
//   - MISSING: nothing on the subject, or only a section on a neighbouring
//     one (termination for cause where termination for convenience is
//     missing).
//
// A companion (a provision a combined section holds beside a clause) is on
// a subject other than the clause's and never changes its status, even
// run into the clause's paragraph.
//
// Like reviewcorpus, the package only writes documents and truth; it never
// reads a document, so it is safe on the host. Its truth files are in
// reviewcorpus's format, so airlock eval review and reviewcorpus.Eval
// score it.
package draftcorpus
