// Package facts extracts a contract's facts for the review job, inside
// the guest: the parties (legal name, role, short name, address,
// signatory), the defined terms (definition, every use, and the problems:
// used but never defined, defined but never used, defined twice
// differently), the obligations (who must do what, by when, with the
// sentence) and the key dates (effective and expiration dates, renewal,
// notice deadlines), resolving relative deadlines ("within 30 days after
// the Effective Date") when their trigger date is in the contract.
//
// It reads the same paragraphs the clause analysis reads (package review)
// and writes the stdlib-only result types, so the host validates and
// renders what it finds without linking it. It is pattern-based: it knows
// the common drafting forms (a "by and between" preamble or a numbered
// PARTIES list, quoted definitions in parentheses or "X" means ...,
// modal-verb obligations of a named party) and leaves a field empty rather
// than guess.
//
// What it must never do: read files, run tools, touch the network, or
// trust the document. Every string it emits is bounded to the result
// package's limits.
package facts
