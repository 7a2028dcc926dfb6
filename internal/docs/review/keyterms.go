package review

import (
	"slices"
	"strconv"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// compareTerms compares the key terms of the standard text with those
// found, and names them for the finding.
//
// A change is any difference between the two multisets of (kind, value)
// (jurisdictions as sets: naming New York twice or once is the same
// choice of law), or a pinned key term whose value is not among the found
// terms (or, for a pin with no number or place in it, whose words are not
// in the found text).
func compareTerms(cs *clauseSpec, found []term, foundToks []token) (expected, got map[string]string, changed bool) {
	expected, names := expectedValues(cs)
	got = map[string]string{}
	changed = !sameTerms(cs.stdTerms, found)
	used := make([]bool, len(found))
	take := func(kind, value string) (string, bool) {
		for _, exact := range []bool{true, false} {
			for i, t := range found {
				if !used[i] && t.Kind == kind && (!exact || t.Value == value) {
					used[i] = true
					return t.Text, true
				}
			}
		}
		return "", false
	}
	for _, p := range cs.pins {
		if len(p.terms) == 0 {
			if containsRun(keys(foundToks), p.keys) {
				got[p.name] = p.text
			} else {
				changed = true
			}
			continue
		}
		for _, pt := range p.terms {
			if !hasTerm(found, pt) {
				changed = true
			}
		}
		if txt, ok := take(p.terms[0].Kind, p.terms[0].Value); ok {
			got[p.name] = txt
		}
	}
	for _, n := range names {
		if txt, ok := take(n.kind, n.value); ok {
			got[n.name] = txt
		}
	}
	count := map[string]int{}
	for _, n := range names {
		count[n.kind]++
	}
	for i, t := range found {
		if used[i] || len(got) >= result.MaxValues {
			continue
		}
		if t.Kind == KindJurisdiction && hasTerm(usedTerms(found, used), t) {
			continue // another mention of a place already reported
		}
		used[i] = true
		count[t.Kind]++
		got[t.Kind+"_"+strconv.Itoa(count[t.Kind])] = t.Text
	}
	return expected, got, changed
}

func usedTerms(ts []term, used []bool) []term {
	var out []term
	for i, t := range ts {
		if used[i] {
			out = append(out, t)
		}
	}
	return out
}

type termName struct{ name, kind, value string }

// expectedValues names the standard text's key terms: a pinned term by
// its playbook name, any other as kind_n in order of appearance.
func expectedValues(cs *clauseSpec) (map[string]string, []termName) {
	expected := map[string]string{}
	for _, p := range cs.pins {
		expected[p.name] = p.text
	}
	var names []termName
	count := map[string]int{}
	for _, t := range dedupePlaces(cs.stdTerms) {
		if cs.pinned(t) {
			continue
		}
		count[t.Kind]++
		n := termName{name: t.Kind + "_" + strconv.Itoa(count[t.Kind]), kind: t.Kind, value: t.Value}
		if len(expected) < result.MaxValues {
			expected[n.name] = t.Text
			names = append(names, n)
		}
	}
	return expected, names
}

func (cs *clauseSpec) pinned(t term) bool {
	for _, p := range cs.pins {
		if hasTerm(p.terms, t) {
			return true
		}
	}
	return false
}

func hasTerm(ts []term, t term) bool {
	return slices.ContainsFunc(ts, func(x term) bool { return x.Kind == t.Kind && x.Value == t.Value })
}

// dedupePlaces keeps the first mention of each jurisdiction.
func dedupePlaces(ts []term) []term {
	var out []term
	for _, t := range ts {
		if t.Kind == KindJurisdiction && hasTerm(out, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

func sameTerms(a, b []term) bool {
	key := func(ts []term) []string {
		var out []string
		for _, t := range dedupePlaces(ts) {
			out = append(out, t.Kind+"\x00"+t.Value)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}
