// Package verify is the independent check a redacted document must pass
// before it is released. It runs in a second, fresh sandbox on the
// redactor's OUTPUT (text, JSON and CSV as written; PDFs and images after
// the lead's re-extraction) and looks for personal data that is still
// there, by its own means.
//
// What it owns: canonical-form checks over every number-ish run and token
// (separators stripped, then Luhn with a card-industry digit, SSA area,
// group and serial rules, ABA checksums next to bank words, IBAN mod-97
// with arbitrary precision), its own e-mail scanner, phone numbers through
// libphonenumber (international, with the home trunk "(0)", and national
// forms of the countries it lists), IP addresses through the standard
// library, and name, birth-date and address heuristics of its own
// (titles, labels, role labels followed by what reads like a name, cue
// words; its own given-name and family-first lists, particles, verbs of
// saying, chat speakers and parties in capitals; birth words before
// dates in seven languages' month names; street words, postal codes of
// Japan, Canada, Australia, the Netherlands and Germany and France;
// address and name parts in JSON fields and CSV columns by their keys
// and headers). Pages read by OCR are also checked with
// digit look-alikes read as digits and for e-mail addresses and IBANs
// OCR bent; short words OCR read with low confidence (a black box's
// edge) are left out. Text files with a UTF-16 byte-order mark are
// decoded first. It returns findings (type, offsets, page, rule; never
// values) and a verdict: clean or suspicious with reasons.
//
// What it must never do: import internal/docs/redact or share its
// patterns, lists or logic (a bug shared by both would let the same leak
// through twice); print or return document text; treat the redactor's
// placeholders ("<EMAIL>", "<EMAIL_2>", "<PERSON:1a2b...>") or masks
// ("***-**-1234") as findings. It errs towards "suspicious": a held
// document costs a human look, a released leak costs a disclosure.
package verify
