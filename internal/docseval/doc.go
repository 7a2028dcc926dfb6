// Package docseval is the root of the evaluation tree: the generators,
// test documents and scoring the document jobs are measured with. None of
// it is product: the guest tool (cmd/airlock-docs) never links it, and the
// host links only the parts that write documents and score results, never
// the parts that read one (see internal/hostimports).
//
//   - testdocs renders synthetic documents: text PDFs, scans, hostile files.
//   - reviewcorpus, invoicecorpus and redactcorpus generate each job's
//     corpus with its ground truth and score results against it.
//   - invoicecorpus/invoicesim and redactcorpus/redactsim simulate the
//     extraction step on the host for fast evals; they import the guest's
//     extractor and so are test-and-eval only.
package docseval
