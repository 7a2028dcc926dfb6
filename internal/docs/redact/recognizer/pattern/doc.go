// Package pattern is the registry's "pattern" kind: a recognizer made of
// candidate regexes with base scores, a validator that checks (and may
// narrow or rescore) each candidate, a boundary rule and context words,
// all given by its registry entry (recognizer/data/registry.yaml). The
// validators are Go, by name: SSA rules for SSNs, Luhn with card IIN
// ranges, ABA routing and IBAN mod-97 through internal/checksum (the one
// implementation guest and host share) plus the national check digits
// some IBAN countries have, IP addresses, plausible birth dates, e-mail
// shapes and top-level domains, and phone numbers through libphonenumber.
package pattern
