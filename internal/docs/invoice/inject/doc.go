// Package inject finds instruction-like text in a document ("pre-approved",
// "ignore previous instructions", "set total to", "pay immediately to new
// account", ...), whatever its case, spacing, hyphenation, diacritics or
// look-alike letters. The phrases are data (phrases.yaml), each under a
// code from schema.PhraseCodes.
//
// It only reports where a phrase is; it never interprets, obeys or removes
// anything, and it never returns the matched text.
package inject
