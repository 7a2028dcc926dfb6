// Package recognizer is the redactor's recognizer registry, in the
// spirit of Presidio's: every detector implements one interface
// (Recognizer: a name, the entity types it finds, and Find over a
// window of text), and which detectors run, for which types, with which
// context words, patterns and scores, is data: data/registry.yaml, read
// by Load, with each kind's own files beside it (name lists, address
// templates, IBAN and card tables).
//
// The kinds are implemented in the sub-packages (pattern, address,
// person, ocr) and handed to Load by the analyzer
// (internal/docs/redact/analyzer), which runs the registry; this package
// imports none of them, so a kind is added without touching the others.
//
// Like the rest of internal/docs/redact it runs only inside the guest.
// Its data is never shared with the independent verifier
// (internal/docs/verify), which keeps lists and rules of its own.
package recognizer
