// Package redactworld is the second redaction corpus, written apart from
// the first (internal/docseval/redactcorpus) and from the detectors, the
// way documents arrive from outside: other drafting styles (recitals in
// capitals, e-mail threads with headers and signatures, minutes, chat
// logs, clinical notes, reference letters, footnotes), names from
// everywhere (diacritics, particles, family-name-first orders, given
// names that are also English words used as names), phone numbers in
// each country's own formats, dates of birth in every written form,
// postal addresses of Japan, Germany, France, the Netherlands, the UK,
// Canada, Australia and the US, JSON with an address's parts in separate
// fields, CSV exports, and page layouts with two columns, tables and
// footnotes. It plants near misses of its own: place names that are also
// names ("County of San Francisco", "Victoria Station"), the same words
// used as words ("we hope", "in good faith", "Mark the date"),
// organisations named after people, dates that are not birth dates.
//
// It has two splits drawn from disjoint value pools: Dev, which the
// detectors may be tuned on, and Test, held out, which also uses
// phrasings Dev never shows. Documents come out as redactcorpus.Doc, so
// the first corpus's writer, truth files and scoring serve both.
//
// Like redactcorpus it imports no detector and shares no pattern or list
// with internal/docs/redact or internal/docs/verify.
package redactworld
