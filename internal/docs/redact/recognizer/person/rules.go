package person

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
)

var (
	labelColon = regexp.MustCompile(`^[ \t]*[:：=\-–][ \t]*(?:\r?\n[ \t]*)?$`)
	// closingGap: a letter's closing and the signature under it
	// ("Sincerely,\n\nAma Owusu").
	closingGap = regexp.MustCompile(`^,?[ \t]*(?:\r?\n[ \t]*){1,3}$`)
	labelEOL   = regexp.MustCompile(`^[ \t]*\r?\n[ \t]*$`)
	openerGap  = regexp.MustCompile(`^[ \t]+$`)
	// cueGap: a cue may end a wrapped line ("your case officer\nAma Owusu").
	cueGap = regexp.MustCompile(`^[ \t]+$|^[ \t]*\r?\n[ \t]*$`)
	// Words before a month name that make it a month ("in April").
	monthPreps = map[string]bool{"in": true, "on": true, "by": true, "since": true, "until": true,
		"till": true, "from": true, "during": true, "of": true, "early": true, "late": true,
		"mid": true, "through": true, "before": true, "after": true, "next": true, "last": true,
		"this": true, "every": true, "each": true, "per": true, "until.": true, "between": true}
	monthNamesAmb = map[string]bool{"april": true, "may": true, "june": true, "august": true,
		"jan": true, "mar": true, "apr": true, "jun": true, "jul": true, "aug": true, "sep": true,
		"oct": true, "nov": true, "dec": true}
)

// fromLabel: "Name: Иван Петров", "Patient: Grace Kim", "Dear Priya,",
// "your case officer Tavi Rennick". A label may be of several kinds
// ("contact" is a role label before a colon and a cue in running text);
// each is tried in turn.
func (p *persons) fromLabel(l *nlp.Label) {
	if l.Has(nlp.NonPerson) {
		return
	}
	for _, kind := range []nlp.Type{nlp.PersonLabel, nlp.PersonRole, nlp.PersonOpener, nlp.PersonCue} {
		if l.Has(kind) && p.labelName(l, kind) {
			return
		}
	}
}

// labelName takes the name after l, read as a label of the given kind,
// and reports whether it found one.
func (p *persons) labelName(l *nlp.Label, kind nlp.Type) bool {
	j := l.EndTok
	if j >= len(p.nt) || p.claimed[j] {
		return false
	}
	g := p.w.Text[l.End:p.w.Toks[j].Start]
	if kind == nlp.PersonOpener && closingGap.MatchString(g) {
		return p.signature(j)
	}
	switch kind {
	case nlp.PersonOpener:
		if !openerGap.MatchString(g) || !p.nt[j].cap || p.nt[j].title {
			return false
		}
	case nlp.PersonCue:
		if !cueGap.MatchString(g) || !p.nt[j].cap || p.nt[j].title {
			return false
		}
	default:
		if !labelColon.MatchString(g) && !(labelEOL.MatchString(g) && nlp.LineStart(p.w.Text, l.Start)) {
			return false
		}
	}
	if p.nt[j].cjk {
		p.cjkName(j, 0.85, "label_cjk")
		return true
	}
	to := p.extend(j, 5, kind == nlp.PersonLabel)
	if to == j || allTitles(p.nt[j:to]) {
		return false
	}
	to = p.nameTail(j, to, kind != nlp.PersonOpener && kind != nlp.PersonCue)
	from, to, score, det := p.scoreLabelName(j, to, kind)
	if score == 0 {
		return false
	}
	p.add(from, to, score, det)
	return true
}

// nameTail continues a name found after a label: "Kim, Grace" (a listed
// first name after a comma, or after a colon label any name-shaped word
// that ends the line), and a two-part name wrapped onto the next line
// ("officer Tavi\nRennick", a narrow table cell).
func (p *persons) nameTail(j, to int, colon bool) int {
	if to < len(p.nt) && (p.gap(to) == ", " || p.gap(to) == ",") && !p.claimed[to] && p.nt[to].cap {
		switch {
		case p.nt[to].first:
			return max(p.extend(to, 3, false), to+1)
		case colon && to == j+1 && p.shaped(to, p.nt[j].allCaps) && p.endsLine(to+1):
			return to + 1
		}
	}
	if to == j+1 && to < len(p.nt) && labelEOL.MatchString(p.gap(to)) && !p.claimed[to] && p.shaped(to, p.nt[j].allCaps) {
		return p.extend(to, 3, false)
	}
	return to
}

// signature: the line under a closing ("Sincerely,") is a name when it
// holds nothing else and the lists back it or it is name-shaped.
func (p *persons) signature(j int) bool {
	if p.claimed[j] || !p.nt[j].cap {
		return false
	}
	to := p.extend(j, 4, false)
	if to == j || !p.endsLine(to) || !(p.listBacked(j, to) || p.unlisted(j, to, false)) {
		return false
	}
	p.add(j, to, 0.7, "signature")
	return true
}

// endsLine reports whether token k starts a new line or is past the end
// (what follows a name that ends its line).
func (p *persons) endsLine(k int) bool {
	return k >= len(p.nt) || strings.Contains(p.gap(k), "\n")
}

// scoreLabelName decides whether tokens [j, to) after a label of kind
// are a name, and how surely.
func (p *persons) scoreLabelName(j, to int, kind nlp.Type) (int, int, float64, string) {
	switch kind {
	case nlp.PersonLabel:
		return j, to, 0.85, "label"
	case nlp.PersonRole:
		if p.listBacked(j, to) {
			return j, to, 0.8, "role_label"
		}
		if p.unlisted(j, to, true) {
			return j, to, 0.7, "role_label_shape"
		}
	case nlp.PersonOpener:
		// "Dear Siobhan," names one person even off the lists; longer
		// runs ("Dear Hiring Manager,") need the lists.
		single := to == j+1 && strings.HasPrefix(p.w.Text[p.w.Toks[j].End:], ",")
		if p.listBacked(j, to) || single {
			return j, to, 0.75, "opener"
		}
	case nlp.PersonCue:
		if to < len(p.nt) && p.nt[to].cap && !p.nt[to].allCaps && spaceGap(p.gap(to)) {
			break // the run goes on: a title or an organisation
		}
		if p.unlisted(j, to, false) {
			return j, to, 0.65, "cue"
		}
	}
	return 0, 0, 0, ""
}

// unlisted reports whether tokens [from, to) read as a name no list
// knows: two or more name-shaped words (or one and an initial), nothing
// else but particles and suffixes; in capitals only after a colon label
// ("PATIENT: TAVI RENNICK").
func (p *persons) unlisted(from, to int, caps bool) bool {
	shaped, initials := 0, 0
	for k := from; k < to; k++ {
		n := &p.nt[k]
		switch {
		case p.shaped(k, caps && p.nt[from].allCaps):
			shaped++
		case n.initial:
			initials++
		case n.particle || n.suffix:
		default:
			return false
		}
	}
	return shaped >= 2 || shaped == 1 && initials > 0
}

// shaped reports whether token k looks like a name by itself: a
// capitalised word (all capitals only when caps) of two or more letters
// with a vowel, that is no stop word, title or label, nor the plural of
// a stop word ("Managers").
func (p *persons) shaped(k int, caps bool) bool {
	n := &p.nt[k]
	if !n.word || !(n.cap || n.uncased) || n.stop || n.title || n.weakTitle || n.initial || p.startsLabel(k) {
		return false
	}
	if n.allCaps && !caps {
		return false
	}
	if strings.HasSuffix(n.fold, "s") && p.lx.stop[strings.TrimSuffix(n.fold, "s")] {
		return false
	}
	if n.uncased {
		return true
	}
	return utf8.RuneCountInString(n.fold) >= 2 && strings.ContainsAny(n.fold, "aeiouy")
}

// allTitles: no token is more than a title or a non-name word ("Dear
// Sir", "To: All").
func allTitles(ns []ntok) bool {
	for _, n := range ns {
		if !n.title && !n.weakTitle && !(n.stop && !n.first && !n.sur) {
			return false
		}
	}
	return true
}

// cjkName takes a CJK run (and one more run after a space, "山田 太郎") as
// a name, without a trailing honorific.
func (p *persons) cjkName(j int, score float64, det string) {
	to := j + 1
	if to < len(p.nt) && p.nt[to].cjk && spaceGap(p.gap(to)) && !p.claimed[to] {
		to++
	}
	start, end := p.w.Toks[j].Start, p.w.Toks[to-1].End
	run := p.w.Text[start:end]
	for _, suf := range p.lx.cjkSuffixes {
		if strings.HasSuffix(run, suf) && utf8.RuneCountInString(run) > utf8.RuneCountInString(suf)+1 {
			end -= len(suf)
			break
		}
	}
	if n := utf8.RuneCountInString(p.w.Text[start:end]); n < 2 || n > 8 {
		return
	}
	for k := j; k < to; k++ {
		p.claimed[k] = true
	}
	p.out = append(p.out, recognizer.Span{Start: start, End: end, Type: policy.Person, Score: score, Detector: "person/" + det})
	p.outTok = append(p.outTok, [2]int{j, to})
}

// title: "Dr. Okafor", "Ms Grace Kim"; weak titles ("General", "Judge")
// only before listed names.
func (p *persons) title(i int) (int, int, float64, string) {
	n := &p.nt[i]
	if !(n.title || n.weakTitle) || !n.cap || i+1 >= len(p.nt) || !p.nameGap(i+1) {
		return 0, 0, 0, ""
	}
	to := p.extend(i+1, 4, false)
	if to == i+1 || allTitles(p.nt[i+1:to]) {
		return 0, 0, 0, ""
	}
	if n.title {
		return i + 1, to, 0.9, "title"
	}
	if p.listBacked(i+1, to) {
		return i + 1, to, 0.8, "weak_title"
	}
	return 0, 0, 0, ""
}

// lastFirst: "Kim, Grace", "KIM, Grace H.", "bin Rashid, Tanvir",
// "Nguyễn, Thị Mai".
func (p *persons) lastFirst(i int) (int, int, float64, string) {
	n := &p.nt[i]
	if !n.cap || !n.sur || n.stop || i+1 >= len(p.nt) {
		return 0, 0, 0, ""
	}
	g := p.gap(i + 1)
	f := &p.nt[i+1]
	if !(g == ", " || g == ",") || !f.cap || !(f.first || p.lx.familyFirst[n.fold] && p.hyphenGiven(i+1)) || f.allCaps && !n.allCaps {
		return 0, 0, 0, ""
	}
	to := i + 2
	for to < len(p.nt) && to < i+4 && p.nameGap(to) && (p.nt[to].initial || p.nt[to].first && !p.nt[to].stop) && !p.claimed[to] {
		to++
	}
	from := p.particlesBefore(i)
	switch {
	case !n.amb && !f.amb:
		return from, to, 0.85, "last_first"
	case !n.amb || !f.amb:
		return from, to, 0.7, "last_first"
	}
	return from, to, 0.5, "last_first"
}

// particlesBefore returns where a family name at token i starts when
// particles stand before it ("bin Rashid", "van der Berg").
func (p *persons) particlesBefore(i int) int {
	from := i
	for from > 0 && i-from < 3 && p.nt[from-1].particle && !p.claimed[from-1] && p.nameGap(from) {
		from--
	}
	return from
}

// firstLast: a listed first name and what follows it. An ambiguous first
// name ("Grace", "Will", "April") needs a listed surname that is not an
// ordinary word; a month name right after "in"/"by"/... or before a
// number is a month.
func (p *persons) firstLast(i int) (int, int, float64, string) {
	n := &p.nt[i]
	if !n.cap || !n.first || n.particle || n.stop && !n.amb || p.monthHere(i) {
		return 0, 0, 0, ""
	}
	to, det := i+1, "first_last"
	switch {
	case i+1 < len(p.nt) && p.nameGap(i+1):
		to = p.extend(i+1, 4, false)
	case i+1 < len(p.nt) && labelEOL.MatchString(p.gap(i+1)) && !p.claimed[i+1] && !n.place &&
		p.nt[i+1].cap && p.nt[i+1].sur && !p.nt[i+1].amb && !p.nt[i+1].stop && !p.nt[i+1].place:
		to, det = i+2, "first_last_wrapped" // a name wrapped in a narrow cell
	}
	if to == i+1 {
		if !n.amb && !n.allCaps && !n.place && !p.beforeAmpersand(i) && utf8.RuneCountInString(n.fold) > 2 {
			return i, i + 1, 0.6, "first_only"
		}
		return 0, 0, 0, ""
	}
	if n.amb && to-i >= 3 && p.nt[i+1].first && !p.nt[i+1].amb {
		return 0, 0, 0, "" // "Will Grace Kim attend": the name starts at Grace
	}
	last := to - 1
	for last > i+1 && p.nt[last].suffix {
		last--
	}
	return p.scoreFirstLast(i, last, to, det)
}

func (p *persons) scoreFirstLast(i, last, to int, det string) (int, int, float64, string) {
	n, l := &p.nt[i], &p.nt[last]
	if n.allCaps {
		for k := i; k < to; k++ {
			if !p.nt[k].allCaps && !p.nt[k].initial {
				return 0, 0, 0, ""
			}
		}
		if !n.amb && (l.sur || p.hasParticle(i+1, last)) || l.sur && !l.amb {
			return i, to, 0.75, det + "_caps"
		}
		return 0, 0, 0, ""
	}
	surKnown, surAmb := l.sur && !l.amb, l.sur && l.amb
	switch {
	case l.initial && !n.amb:
		return i, to, 0.65, det
	case l.initial:
		return 0, 0, 0, ""
	case !n.amb && surKnown:
		return i, to, 0.9, det
	case !n.amb && surAmb:
		return i, to, 0.8, det
	case !n.amb:
		return i, to, 0.7, det
	case surKnown:
		return i, to, 0.85, det
	case p.listBacked(i+1, last):
		return i, to, 0.75, det
	case p.hasParticle(i+1, last):
		return i, to, 0.75, det + "_particle" // "Rich zu Lynar"
	case p.surnameShaped(last):
		return i, to, 0.7, det + "_shape" // "Sky O'Sullivan", "Hope Achterberg"
	case surAmb:
		return i, to, 0.55, det
	}
	return 0, 0, 0, ""
}

func (p *persons) monthHere(i int) bool {
	n := &p.nt[i]
	if !n.amb || !monthNamesAmb[n.fold] {
		return false
	}
	if i > 0 && monthPreps[p.nt[i-1].fold] && spaceGap(p.gap(i)) {
		return true
	}
	if i+1 < len(p.w.Toks) && p.w.Toks[i+1].Digits && !p.w.Toks[i+1].Letters {
		return true
	}
	return false
}

// unknownFirst: an unlisted capitalised word before a listed surname
// that is not an ordinary word ("Oluchukwu Okafor"), when it does not
// continue a longer capitalised phrase (organisations, places).
func (p *persons) unknownFirst(i int) (int, int, float64, string) {
	n := &p.nt[i]
	if !n.cap || n.allCaps || n.first || n.sur || n.stop || n.amb || n.title || n.weakTitle || n.place || p.startsLabel(i) ||
		utf8.RuneCountInString(n.fold) < 3 || i+1 >= len(p.nt) || !p.nameGap(i+1) || p.claimed[i+1] {
		return 0, 0, 0, ""
	}
	s := &p.nt[i+1]
	if !s.cap || s.allCaps || !s.sur || s.amb || s.stop || s.first || p.startsLabel(i+1) {
		return 0, 0, 0, ""
	}
	if i > 0 && p.nt[i-1].cap && !p.nt[i-1].stop && spaceGap(p.gap(i)) {
		return 0, 0, 0, ""
	}
	return i, i + 2, 0.55, "unknown_first"
}

// cjkSuffix: "王伟先生", "山田さん".
func (p *persons) cjkSuffix(i int) (int, int, float64, string) {
	if !p.nt[i].cjk {
		return 0, 0, 0, ""
	}
	run := p.w.Text[p.w.Toks[i].Start:p.w.Toks[i].End]
	for _, suf := range p.lx.cjkSuffixes {
		if strings.HasSuffix(run, suf) && utf8.RuneCountInString(run) > utf8.RuneCountInString(suf)+1 {
			p.cjkName(i, 0.8, "cjk_honorific")
			break
		}
	}
	return 0, 0, 0, ""
}
