package operator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

// Type is an entity type.
type Type = policy.Type

// Operator turns one finding's original text into its replacement, as
// the policy says for the finding's type. It holds the job's salt and
// never keeps values.
type Operator struct {
	pol  *policy.Policy
	salt []byte
}

// New returns the operator for a policy and a job's salt (the hash
// operator's key; random per job, 16 bytes or more, when the policy
// hashes any type).
func New(pol *policy.Policy, salt []byte) *Operator { return &Operator{pol: pol, salt: salt} }

// Hashes reports whether findings of type t carry a hash.
func (o *Operator) Hashes(t Type) bool { return o.pol.Operator(t) == policy.OpHash }

// Apply returns the replacement for orig (of type t) and, for the hash
// operator, the hash that the finding may carry.
func (o *Operator) Apply(t Type, orig string) (repl, hash string) {
	switch o.pol.Operator(t) {
	case policy.OpMask:
		return o.mask(t, orig), ""
	case policy.OpHash:
		h := o.Hash(t, orig)
		return "<" + string(t) + ":" + h + ">", h
	case policy.OpRemove:
		return "", ""
	}
	return "<" + string(t) + ">", ""
}

// mask replaces every letter and digit with the mask character except the
// last KeepLast of them; separators, spaces and line breaks stay, so
// layout (and a table cell's width) is kept.
func (o *Operator) mask(t Type, orig string) string {
	tp := o.pol.Types[t]
	keep := 0
	if numeric(t) {
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
		if nlp.IsWordRune(r) {
			alnum++
		}
	}
	// Never keep so much that most of the value shows.
	keep = min(keep, alnum/2)
	seen := 0
	var b strings.Builder
	for _, r := range rs {
		if nlp.IsWordRune(r) {
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

// Hash is HMAC-SHA256(salt, type NUL NFC(value)) in lower-case hex,
// truncated: equal values in one job hash equally (so a reader can tell
// the same person apart from another), across jobs they do not.
func (o *Operator) Hash(t Type, orig string) string {
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

// numeric: types whose mask keeps the last four characters by default.
func numeric(t Type) bool {
	switch t {
	case policy.SSN, policy.CreditCard, policy.Phone, policy.BankAccount, policy.BankRouting, policy.IBAN, policy.Passport, policy.DriverLicense:
		return true
	}
	return false
}
