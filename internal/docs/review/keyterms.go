package review

import (
	"slices"
	"strconv"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"
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
func compareTerms(cs *clauseSpec, found []term, foundToks []token) (expected, got map[string]string, changes []TermChange, changed bool) {
	expected, names := expectedValues(cs)
	defer func() {
		if changed {
			changes = termChanges(cs, names, found, foundToks)
		}
	}()
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
	return expected, got, nil, changed
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

// expectedTerm is a key term of the standard under its finding name.
type expectedTerm struct {
	name, text string
	t          *term    // nil for a pin with no number or place in it
	keys       []string // such a pin's words
	worseIf    string
}

// termChanges pairs the standard's key terms with the clause's: equal
// values first, then, for each term left, the next unpaired term of its
// kind (a change), else none (gone); terms of the clause left over are
// added. A change of two comparable values is higher or lower, judged
// worse or better by the pin's worse_if.
func termChanges(cs *clauseSpec, names []termName, found []term, foundToks []token) []TermChange {
	var exp []expectedTerm
	for _, p := range cs.pins {
		e := expectedTerm{name: p.name, text: p.text, keys: p.keys, worseIf: p.worseIf}
		if len(p.terms) > 0 {
			e.t = &p.terms[0]
		}
		exp = append(exp, e)
	}
	for _, n := range names {
		for i := range cs.stdTerms {
			if t := &cs.stdTerms[i]; t.Kind == n.kind && t.Value == n.value {
				exp = append(exp, expectedTerm{name: n.name, text: t.Text, t: t})
				break
			}
		}
	}
	used := make([]bool, len(found))
	paired := make([]int, len(exp))
	for i, e := range exp {
		paired[i] = -1
		if e.t == nil {
			continue
		}
		for j, f := range found {
			if !used[j] && f.Kind == e.t.Kind && f.Value == e.t.Value {
				used[j], paired[i] = true, j
				break
			}
		}
	}
	var out []TermChange
	for i, e := range exp {
		switch {
		case e.t == nil:
			if !containsRun(keys(foundToks), e.keys) {
				out = append(out, TermChange{Name: e.name, Expected: bound(e.text), Change: result.ChangeGone})
			}
		case paired[i] >= 0:
		default:
			j := slices.IndexFunc(found, func(f term) bool { return f.Kind == e.t.Kind })
			for j >= 0 && used[j] {
				k := slices.IndexFunc(found[j+1:], func(f term) bool { return f.Kind == e.t.Kind })
				if k < 0 {
					j = -1
					break
				}
				j += 1 + k
			}
			if j < 0 {
				out = append(out, TermChange{Name: e.name, Expected: bound(e.text), Change: result.ChangeGone})
				continue
			}
			used[j] = true
			out = append(out, judged(e, found[j]))
		}
	}
	count := map[string]int{}
	for _, n := range names {
		count[n.kind]++
	}
	for j, f := range found {
		if used[j] || f.Kind == KindJurisdiction && hasTerm(usedTerms(found, used), f) || hasTerm(cs.stdTerms, f) {
			continue
		}
		used[j] = true
		count[f.Kind]++
		out = append(out, TermChange{Name: f.Kind + "_" + strconv.Itoa(count[f.Kind]), Found: bound(f.Text), Change: result.ChangeAdded})
	}
	if len(out) > result.MaxTermChanges {
		out = out[:result.MaxTermChanges]
	}
	return out
}

// judged is the change from an expected term to the found term of its
// kind that replaced it.
func judged(e expectedTerm, f term) TermChange {
	c := TermChange{Name: e.name, Expected: bound(e.text), Found: bound(f.Text), Change: result.ChangeDifferent}
	if !e.t.comparable || !f.comparable || e.t.scale != f.scale {
		return c
	}
	a, b := e.t.magnitude(), f.magnitude()
	switch {
	case b > a*1.0001:
		c.Change = result.ChangeHigher
	case b < a*0.9999:
		c.Change = result.ChangeLower
	}
	switch {
	case c.Change == result.ChangeDifferent || e.worseIf == "":
	case (c.Change == result.ChangeHigher) == (e.worseIf == playbook.WorseHigher):
		c.Verdict = result.VerdictWorse
	default:
		c.Verdict = result.VerdictBetter
	}
	return c
}

// bound cuts a value to the result's limit.
func bound(s string) string {
	s, _ = truncateRunes(s, result.MaxValueBytes)
	return s
}
