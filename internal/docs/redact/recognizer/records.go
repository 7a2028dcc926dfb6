package recognizer

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

// Records knows, for structured documents (a JSON object, a CSV header
// and its rows), which fields hold parts of one entity whatever their
// values look like: a postal address split into street, number, postcode
// and town, a name split into given and family names. A record is of a
// rule's type when it sits under one of the rule's parent keys or has
// one of its anchor keys; then every field under one of its keys is that
// type. The rules are the registry's "records" (data/registry.yaml).
type Records struct {
	rules []recordRule
}

type recordRule struct {
	typ                   Type
	parents, anchors, key []string // normalised keys
}

type recordEntry struct {
	Type    Type     `yaml:"type"`
	Parents []string `yaml:"parents"`
	Anchors []string `yaml:"anchors"`
	Keys    []string `yaml:"keys"`
}

func newRecords(entries []recordEntry) (*Records, error) {
	rs := &Records{}
	for _, e := range entries {
		if !policy.Known(e.Type) || len(e.Keys) == 0 {
			return nil, fmt.Errorf("record rule: unknown type %q or no keys", e.Type)
		}
		rule := recordRule{typ: e.Type}
		for _, set := range []struct {
			in  []string
			out *[]string
		}{{e.Parents, &rule.parents}, {e.Anchors, &rule.anchors}, {e.Keys, &rule.key}} {
			for _, k := range set.in {
				*set.out = append(*set.out, NormalizeKey(k))
			}
		}
		rs.rules = append(rs.rules, rule)
	}
	return rs, nil
}

// Types returns, for each of a record's keys, the type its value is part
// of ("" for none), given the key the record sits under ("" at the top
// or for a CSV header).
func (rs *Records) Types(parent string, keys []string) []Type {
	out := make([]Type, len(keys))
	norm := make([]string, len(keys))
	for i, k := range keys {
		norm[i] = NormalizeKey(k)
	}
	p := NormalizeKey(parent)
	for _, r := range rs.rules {
		if !r.applies(p, norm) {
			continue
		}
		for i, k := range norm {
			if out[i] == "" && keyIn(k, r.key) {
				out[i] = r.typ
			}
		}
	}
	return out
}

func (r *recordRule) applies(parent string, keys []string) bool {
	if parent != "" && keyIn(parent, r.parents) {
		return true
	}
	for _, k := range keys {
		if keyIn(k, r.anchors) {
			return true
		}
	}
	return false
}

// keyIn reports whether k is one of list, or ends with one after a word
// that qualifies it ("home street", "billing postal code").
func keyIn(k string, list []string) bool {
	for _, l := range list {
		if k == l || strings.HasSuffix(k, " "+l) && strings.Count(k, " ")-strings.Count(l, " ") == 1 {
			return true
		}
	}
	return false
}

// NormalizeKey turns a field name into lower-case words: "addressLine1",
// "address_line_1" and "Address Line 1" are all "address line 1".
func NormalizeKey(k string) string {
	var b strings.Builder
	var prev rune
	for _, r := range k {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			r = ' '
		case unicode.IsUpper(r) && unicode.IsLower(prev),
			unicode.IsDigit(r) && unicode.IsLetter(prev),
			unicode.IsLetter(r) && unicode.IsDigit(prev):
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
