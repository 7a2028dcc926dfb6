// Package factseval scores the review job's facts extraction (package
// facts) against hand-written ground truth: fixtures of contract text
// (paragraphs separated by blank lines, "--- page N ---" starting page N)
// each with a STEM.truth.json beside it. It counts true and false
// positives and misses per field (parties, key dates, defined terms and
// their problems, obligations with their deadlines), so the same scoring
// serves the text fixtures (facts' own tests) and the same contracts
// written as scans and read back by the real extraction (poppler and
// tesseract, in reviewcorpus).
package factseval
