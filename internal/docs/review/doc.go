// Package review is the analysis core of the contract-review job: it
// takes a contract as paragraphs of text (reading order, running headers
// and footers already stripped) and a playbook of standard clauses, and
// says for each clause whether the contract has it verbatim (MATCH),
// changed (DEVIATION, with numeric_change when a key term such as a
// period, an amount, a percentage or a jurisdiction differs) or not at all
// (MISSING), with the located text, the key terms and a word-level
// redline.
//
// What it owns:
//   - Reading an extracted contract for review (FromExtract): footnotes
//     and their markers left out, two-column pages read column by column,
//     then extraction's reflow.
//   - Heading parsing into a section tree (numbered, "Section 7 -",
//     "Clause 7 - ", "ARTICLE VII" with "Section 7.01", all caps, run-in
//     headings, headings wrapped in a narrow cell) and sentences.
//   - Locating each clause as a run of sentences: under a heading that
//     names it (its title or a synonym, alone or as one subject of "X and
//     Y", at any depth), else by its text anywhere, including inside
//     combined sections ("Term and Termination") and paragraphs that run
//     several provisions together; what stands next to it joins it only
//     when it reads as part of it (attach.go). Each sentence belongs to at
//     most one clause; the surest locations are taken first.
//   - Comparison: normalisation, difflib similarity over word tokens,
//     key-term extraction (numbers in digits and words, durations, money,
//     percentages, multipliers, jurisdictions) compared sentence by
//     sentence within the located clause, the status rules, which way each
//     changed term moved, the redline, and where the clause is (section,
//     page, sentences) for a person to check.
//
// The playbook (types, parsing, the default) is the sub-package
// playbook, the output contract (Result, Finding, Decode, Validate) the
// stdlib-only sub-package result, and the HTML and Markdown renderers the
// sub-package report (stdlib and result only), so the host can check a
// playbook and check and render a guest's output without importing this
// package; the result types are aliased here. The sub-package corpus generates contracts with known
// results and scores the analysis on them.
//
// What it must never do: read files other than the playbook it is handed,
// run tools, touch the network, or trust the document. Document text is
// hostile: it is bounded before it goes into a result and never quoted in
// an error. Package-level tables (number words, jurisdictions, common
// words, OCR confusions) are built once from embedded files and only read
// afterwards.
package review
