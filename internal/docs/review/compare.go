package review

import (
	"math"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// compare builds the finding for a located clause.
//
// The status rules, in order:
//  1. a key term differs (a number, amount, percentage, duration,
//     multiplier or jurisdiction of the standard text is changed, added or
//     gone, or a pinned key term is not found): DEVIATION with
//     numeric_change, whatever the similarity;
//  2. the letters and digits are the same in the same order (so only
//     case, quotes, punctuation such as a serial or dropped comma, a
//     dropped hyphen, spacing or paragraph breaks differ): MATCH;
//  3. the similarity reaches the clause threshold and every difference is
//     an OCR slip: a split or joined word, or a word misread into
//     something that is no word (a few confusable letters, or one other
//     letter); never a real word replaced by another real word
//     (then/than), a protected word ("not", "shall", "may") added or
//     changed, or a word's ending or prefix changed: MATCH;
//  4. otherwise DEVIATION.
func (an *analyzer) compare(cs *clauseSpec, loc location) Finding {
	f := baseFinding(cs)
	f.LocatedBy = loc.by
	f.Heading, _ = truncateRunes(loc.heading, result.MaxHeadingBytes)
	text, cut := truncateRunes(an.display(loc.ta, loc.tb), result.MaxTextBytes)
	f.Text, f.Truncated = text, cut
	f.Pages = an.pages(loc.ta, loc.tb)
	if len(f.Pages) > result.MaxPages {
		f.Pages = f.Pages[:result.MaxPages]
	}
	f.Location = an.where(loc)

	found := an.gtoks[loc.ta:loc.tb]
	if len(found) > maxCompareWords {
		found = found[:maxCompareWords]
	}
	m := difflib.NewMatcherWithJunk(cs.stdKeys, keys(found), false, nil)
	ops := m.GetOpCodes()
	f.Similarity = math.Round(m.Ratio()*10000) / 10000
	// One text, not per paragraph: a page turn may have cut "thirty (30)"
	// from "days".
	foundTerms := extractTerms(rawText(found))
	var changed bool
	f.ExpectedValues, f.FoundValues, f.TermChanges, changed = compareTerms(cs, foundTerms, found)
	changed = changed || an.sentenceTermsDiffer(cs, found, ops)

	switch {
	case changed:
		f.Status, f.NumericChange = StatusDeviation, true
	case samePlain(cs.std, found):
		f.Status = StatusMatch
	case f.Similarity >= cs.clause.Threshold && an.noiseOnly(cs.std, found, ops):
		f.Status = StatusMatch
	default:
		f.Status = StatusDeviation
	}
	if !f.NumericChange {
		f.TermChanges = []TermChange{}
	}
	var rcut bool
	f.Redline, rcut = redline(cs.std, found, ops)
	f.Truncated = f.Truncated || rcut
	return f
}

// rawText is tokens as written, one space apart.
func rawText(toks []token) string {
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = t.Raw
	}
	return strings.Join(parts, " ")
}

// samePlain reports whether two token lists have the same letters and
// digits in the same order, spaces and punctuation aside.
func samePlain(a, b []token) bool {
	var x, y strings.Builder
	for _, t := range a {
		x.WriteString(t.Plain)
	}
	for _, t := range b {
		y.WriteString(t.Plain)
	}
	return x.String() == y.String()
}

// noiseOnly reports whether every difference between the standard and
// the found tokens is the size of an OCR slip.
func (an *analyzer) noiseOnly(std, found []token, ops []difflib.OpCode) bool {
	for _, op := range ops {
		if op.Tag == 'e' {
			continue
		}
		if !an.noiseOp(std[op.I1:op.I2], found[op.J1:op.J2]) {
			return false
		}
	}
	return true
}

func (an *analyzer) noiseOp(a, b []token) bool {
	if joinKeys(a) == joinKeys(b) {
		return true // a word split or joined: "non exclusive", "shallnot"
	}
	if len(a) == 0 || len(b) == 0 {
		// Only a speck read as a one-letter word may appear or vanish.
		t := a
		if len(t) == 0 {
			t = b
		}
		return len(t) == 1 && len([]rune(t[0].Key)) == 1 && !hasDigit(t[0].Key) && !an.t.protected[t[0].Key]
	}
	return an.alignNoise(keys(a), keys(b))
}

// alignNoise reports whether the words b can be the words a misread:
// word for word, or with words split ("pa rty") or run together
// ("orpayable") on the way, each piece passing noiseWord.
func (an *analyzer) alignNoise(a, b []string) bool {
	if len(a)+len(b) > 24 {
		return false
	}
	steps := [][2]int{{1, 1}, {1, 2}, {2, 1}, {1, 3}, {3, 1}}
	memo := map[[2]int]bool{}
	var fit func(i, j int) bool
	fit = func(i, j int) bool {
		if i == len(a) && j == len(b) {
			return true
		}
		if v, ok := memo[[2]int{i, j}]; ok {
			return v
		}
		ok := false
		for _, st := range steps {
			if i+st[0] > len(a) || j+st[1] > len(b) {
				continue
			}
			x, y := strings.Join(a[i:i+st[0]], ""), strings.Join(b[j:j+st[1]], "")
			if an.noiseWord(x, y) && fit(i+st[0], j+st[1]) {
				ok = true
				break
			}
		}
		memo[[2]int{i, j}] = ok
		return ok
	}
	return fit(0, 0)
}

// noiseWord reports whether y can be an OCR misreading of x: y is not a
// word at all, and differs from x by up to two confusable letters (e/c,
// h/b, u/n, rn/m, ...) or one other wrong, lost or extra letter. y is a
// word when it is a common English word, a word of the playbook's
// standard texts, or appears elsewhere in the document: OCR garbage is
// none of these, while a drafter's substitution (then/than,
// employer/employee) is. A change of ending or prefix between forms of
// one word (Licensor/Licensee, Provider/Providers) is never noise.
func (an *analyzer) noiseWord(x, y string) bool {
	if x == y {
		return true
	}
	if an.t.protected[y] || an.isWord(y) {
		return false // then/than, sale/sole: confusable letters, but a real word
	}
	d := an.t.distance(x, y)
	switch {
	case d <= 0.5:
		return true
	case d > 1.25:
		return false
	}
	return !morphological(x, y)
}

// isWord reports a word (a fold key) known to be a real one.
func (an *analyzer) isWord(w string) bool {
	return an.t.common[w] || an.vocab[w] || an.docCount[w] >= 2
}

var (
	suffixForms = foldedSet("", "s", "es", "ed", "d", "er", "or", "ee", "ing", "ly", "al", "ion", "ions", "ive")
	prefixForms = foldedSet("", "un", "in", "non", "dis", "re", "im", "ir", "il", "sub", "co", "a")
)

func foldedSet(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[foldPlain(w)] = true
	}
	return m
}

// morphological reports two forms of one word: the same stem with
// different endings or prefixes from a short list.
func morphological(x, y string) bool {
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	for back := 0; back <= 2 && back <= p; back++ {
		if suffixForms[x[p-back:]] && suffixForms[y[p-back:]] {
			return true
		}
	}
	q := 0
	for q < len(x) && q < len(y) && x[len(x)-1-q] == y[len(y)-1-q] {
		q++
	}
	for back := 0; back <= 2 && back <= q; back++ {
		if prefixForms[x[:len(x)-q+back]] && prefixForms[y[:len(y)-q+back]] {
			return true
		}
	}
	return false
}

// joinKeys is the key of the tokens written as one word.
func joinKeys(ts []token) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString(t.Key)
	}
	return b.String()
}

// sentenceTermsDiffer compares key terms sentence by sentence: the
// standard's sentences and the clause's are grouped by the words difflib
// aligns between them (a sentence read as two, or two as one, stay in one
// group), and each group's terms must be the same on both sides. A
// sentence of the clause aligned to none brings its terms as added; a
// standard sentence aligned to none loses its terms.
func (an *analyzer) sentenceTermsDiffer(cs *clauseSpec, found []token, ops []difflib.OpCode) bool {
	fs := splitSentences(found, func(int) bool { return false })
	// Nodes: the standard's sentences, then the clause's.
	n := len(cs.stdSents)
	parent := make([]int, n+len(fs))
	for i := range parent {
		parent[i] = i
	}
	root := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	stdOf := sentenceIndex(cs.stdSents, len(cs.std))
	foundOf := sentenceIndex(fs, len(found))
	links := map[[2]int]int{}
	for _, op := range ops {
		if op.Tag != 'e' && op.Tag != 'r' {
			continue
		}
		for k := 0; k < min(op.I2-op.I1, op.J2-op.J1); k++ {
			links[[2]int{stdOf[op.I1+k], foundOf[op.J1+k]}]++
		}
	}
	linked := make([]bool, n+len(fs))
	for l, c := range links {
		if c >= 3 {
			parent[root(l[0])] = root(n + l[1])
			linked[l[0]], linked[n+l[1]] = true, true
		}
	}
	terms := make([][]term, n+len(fs))
	for i, s := range cs.stdSents {
		terms[i] = extractTerms(rawText(cs.std[s.a:s.b]))
	}
	for i, s := range fs {
		terms[n+i] = extractTerms(rawText(found[s.a:s.b]))
	}
	// A sentence reworded so far that no words align ("New York law ...
	// applies to this Agreement" for "This Agreement shall be governed by
	// ... the laws of the State of New York") joins the sentences on the
	// other side that have one of its terms, rather than bring them as
	// added or gone.
	for i := range n {
		for j := range fs {
			if (!linked[i] || !linked[n+j]) && sharesTerm(terms[i], terms[n+j]) {
				parent[root(i)] = root(n + j)
			}
		}
	}
	type side struct{ std, found []term }
	groups := map[int]*side{}
	group := func(i int) *side {
		r := root(i)
		if groups[r] == nil {
			groups[r] = &side{}
		}
		return groups[r]
	}
	for i := range cs.stdSents {
		g := group(i)
		g.std = append(g.std, terms[i]...)
	}
	for i := range fs {
		g := group(n + i)
		g.found = append(g.found, terms[n+i]...)
	}
	for _, g := range groups {
		if !sameTerms(g.std, g.found) {
			return true
		}
	}
	return false
}

// sharesTerm reports whether two lists of terms have a term of the same
// kind and value.
func sharesTerm(a, b []term) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Kind == y.Kind && x.Value == y.Value {
				return true
			}
		}
	}
	return false
}

// sentenceIndex maps each token to its sentence.
func sentenceIndex(ss []sentence, n int) []int {
	out := make([]int, n)
	for i, s := range ss {
		for t := s.a; t < s.b && t < n; t++ {
			out[t] = i
		}
	}
	return out
}
