// Package address is the registry's "address" kind: postal addresses
// matched as one span, from the house number (or the street word) through
// the unit, town, region and postal code, across line breaks. The forms
// are templates in the kind's data file (recognizer/data/address.yaml):
// a regex built from word lists and macros, a score, and an anchor (a
// street word, a postal code) that seeds a bounded search, so the regexes
// only ever run on short slices of text.
package address
