package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

// operator turns one finding's original text into its replacement. It
// holds the job's salt and never keeps values.
type operator struct {
	pol  *policy.Policy
	salt []byte
}

// apply returns the replacement for orig (of type t) and, for the hash
// operator, the hash that the finding may carry.
func (o *operator) apply(t Type, orig string) (repl, hash string) {
	switch o.pol.Operator(t) {
	case policy.OpMask:
		return o.mask(t, orig), ""
	case policy.OpHash:
		h := o.hash(t, orig)
		return "<" + string(t) + ":" + h + ">", h
	case policy.OpRemove:
		return "", ""
	}
	return "<" + string(t) + ">", ""
}

// mask replaces every letter and digit with the mask character except the
// last KeepLast of them; separators, spaces and line breaks stay, so
// layout (and a table cell's width) is kept.
func (o *operator) mask(t Type, orig string) string {
	tp := o.pol.Types[t]
	keep := 0
	if lxNumeric(t) {
		keep = 4
	}
	if tp.KeepLast != nil {
		keep = *tp.KeepLast
	}
	ch := o.pol.MaskChar
	if tp.MaskChar != 0 {
		ch = tp.MaskChar
	}
	if ch == 0 {
		ch = '*'
	}
	rs := []rune(orig)
	alnum := 0
	for _, r := range rs {
		if isWordRune(r) {
			alnum++
		}
	}
	// Never keep so much that most of the value shows.
	keep = min(keep, alnum/2)
	seen := 0
	var b strings.Builder
	for _, r := range rs {
		if isWordRune(r) {
			seen++
			if seen <= alnum-keep {
				b.WriteRune(ch)
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hash is HMAC-SHA256(salt, type NUL NFC(value)) in lower-case hex,
// truncated: equal values in one job hash equally (so a reader can tell
// the same person apart from another), across jobs they do not.
func (o *operator) hash(t Type, orig string) string {
	m := hmac.New(sha256.New, o.salt)
	m.Write([]byte(t))
	m.Write([]byte{0})
	m.Write([]byte(norm.NFC.String(orig)))
	n := o.pol.HashLength
	if n < 8 || n > 64 {
		n = 16
	}
	return hex.EncodeToString(m.Sum(nil))[:n]
}

// lxNumeric: types whose mask keeps the last four characters by default.
func lxNumeric(t Type) bool {
	switch t {
	case SSN, CreditCard, Phone, BankAccount, BankRouting, IBAN, Passport, DriverLicense:
		return true
	}
	return false
}
