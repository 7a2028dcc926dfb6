// Package conflicts is the review job's conflicts check on the host: it
// matches the party names a guest extracted (already validated, never a
// document) against the firm's list of clients and adverse parties, with
// their aliases, and flags a contract that names an adverse party.
//
// Matching is on normalised names: case, accents and look-alike letters
// folded (internal/textnorm), German umlaut spellings (ue, oe, ae) and ß
// unified, punctuation and "&"/"and" ignored, a leading "the" and the
// legal-form words (Inc., LLC, GmbH, Ltd, plc, S.A., ...) dropped. Equal
// normalised names match; nothing fuzzier, so a false hit needs two
// names the firm itself would call the same.
package conflicts

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/airlock-dev/airlock/internal/textnorm"
)

// Kinds of entry in the firm's list.
const (
	KindClient  = "client"
	KindAdverse = "adverse"
)

// Limits on the list the operator gives.
const (
	MaxEntries   = 200000
	MaxNameBytes = 500
)

// Entry is one party the firm knows, with its aliases.
type Entry struct {
	Kind    string
	Name    string
	Aliases []string
}

// Hit is one extracted party name that matched an entry.
type Hit struct {
	Party   string `json:"party"`   // as the contract names it
	Kind    string `json:"kind"`    // client or adverse
	Entry   string `json:"entry"`   // the list's name for it
	Matched string `json:"matched"` // the name or alias that matched
}

// List is a parsed parties file, indexed by normalised name.
type List struct {
	Entries []Entry
	byKey   map[string][]match
}

type match struct {
	entry   int
	matched string
}

// Parse reads a parties file: CSV rows "kind,name[,alias...]" with kind
// client or adverse; blank lines and lines starting with # are skipped.
func Parse(r io.Reader) (*List, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	l := &List{byKey: map[string][]match{}}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) < 2 {
			return nil, fmt.Errorf("line %d: want kind,name[,alias...]", line)
		}
		kind := strings.ToLower(strings.TrimSpace(rec[0]))
		if kind != KindClient && kind != KindAdverse {
			return nil, fmt.Errorf("line %d: kind %q is not client or adverse", line, rec[0])
		}
		if len(l.Entries) >= MaxEntries {
			return nil, fmt.Errorf("more than %d entries", MaxEntries)
		}
		e := Entry{Kind: kind, Name: strings.TrimSpace(rec[1])}
		for _, a := range rec[2:] {
			if a = strings.TrimSpace(a); a != "" {
				e.Aliases = append(e.Aliases, a)
			}
		}
		for _, n := range append([]string{e.Name}, e.Aliases...) {
			if len(n) > MaxNameBytes {
				return nil, fmt.Errorf("line %d: a name of %d bytes, limit %d", line, len(n), MaxNameBytes)
			}
			k := Normalize(n)
			if k == "" {
				return nil, fmt.Errorf("line %d: %q has no name left once normalised", line, n)
			}
			l.byKey[k] = append(l.byKey[k], match{entry: len(l.Entries), matched: n})
		}
		l.Entries = append(l.Entries, e)
	}
	return l, nil
}

// Check matches names (a contract's parties' names and short names)
// against the list; each entry is reported once per contract.
func (l *List) Check(names []string) []Hit {
	var hits []Hit
	seen := map[int]bool{}
	for _, n := range names {
		for _, m := range l.byKey[Normalize(n)] {
			if seen[m.entry] {
				continue
			}
			seen[m.entry] = true
			e := l.Entries[m.entry]
			hits = append(hits, Hit{Party: n, Kind: e.Kind, Entry: e.Name, Matched: m.matched})
		}
	}
	return hits
}

// legalForms are the words of company forms, dropped from names. Dotted
// forms (S.A., N.V.) arrive here as their letters joined ("sa", "nv").
var legalForms = map[string]bool{
	"inc": true, "incorporated": true, "llc": true, "ltd": true, "limited": true, "gmbh": true, "ag": true,
	"sa": true, "sas": true, "sarl": true, "srl": true, "spa": true, "bv": true, "nv": true, "plc": true,
	"corp": true, "corporation": true, "co": true, "company": true, "lp": true, "llp": true, "pty": true,
	"kg": true, "kgaa": true, "ab": true, "oy": true, "as": true, "aps": true, "se": true, "pllc": true,
	"pc": true, "lc": true, "ug": true, "mbh": true, "sl": true, "sau": true,
}

// Normalize is a name's matching key.
func Normalize(s string) string {
	// Letters Unicode does not decompose into a base letter and an accent.
	s = strings.NewReplacer("ß", "ss", "ø", "o", "Ø", "O", "æ", "ae", "Æ", "Ae", "œ", "oe", "Œ", "Oe",
		"ł", "l", "Ł", "L", "đ", "d", "Đ", "D", "þ", "th", "ı", "i").Replace(s)
	s = strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "Ä", "Ae", "Ö", "Oe", "Ü", "Ue").Replace(s)
	s = textnorm.Fold(s)
	s = strings.NewReplacer("ae", "a", "oe", "o", "ue", "u", "&", " and ", "+", " and ").Replace(s)
	// Dots, slashes and apostrophes join letters ("S.A.", "A/S", "O'Neil");
	// every other non-alphanumeric separates words.
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '.' || r == '\'' || r == '’' || r == '/':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	words := strings.Fields(b.String())
	if len(words) > 1 && words[0] == "the" {
		words = words[1:]
	}
	for len(words) > 1 && legalForms[words[len(words)-1]] {
		words = words[:len(words)-1]
	}
	// "GmbH & Co. KG" leaves "and" at the end once its forms are gone.
	for len(words) > 1 && words[len(words)-1] == "and" {
		words = words[:len(words)-1]
		for len(words) > 1 && legalForms[words[len(words)-1]] {
			words = words[:len(words)-1]
		}
	}
	return strings.Join(words, " ")
}
