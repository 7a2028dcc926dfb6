package person

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
)

// notNames claims the words of listed places and organisations that read
// like names ("Lake Louise", "Philip Morris"), so no rule takes them, and
// marks one-word places that are also given names ("Charlotte"), which
// then need more than their look to be a person.
func (p *persons) notNames() {
	for _, l := range nlp.FindLabels(p.w.Text, p.w.Toks, p.lx.notNames) {
		if l.EndTok-l.FirstTok == 1 && l.Has(placeKind) && !l.Has(orgKind) {
			p.nt[l.FirstTok].place = true
			continue
		}
		for k := l.FirstTok; k < l.EndTok; k++ {
			p.claimed[k] = true
		}
	}
}

// beforeAmpersand: "Ernst & Young", "Marks & Spencer" name firms, on
// either side of the ampersand.
func (p *persons) beforeAmpersand(i int) bool {
	rest := strings.TrimLeft(p.w.Text[p.w.Toks[i].End:], " \t")
	before := strings.TrimRight(p.w.Text[:p.w.Toks[i].Start], " \t")
	return strings.HasPrefix(rest, "&") || strings.HasSuffix(before, "&")
}

// hasParticle reports a particle among tokens [from, to).
func (p *persons) hasParticle(from, to int) bool {
	for k := from; k < to; k++ {
		if p.nt[k].particle {
			return true
		}
	}
	return false
}

// surnameShaped reports whether token k looks like a family name by its
// form: an apostrophe, a hyphen or a letter outside ASCII inside it
// ("O'Sullivan", "Adeyemi-Bello", "Søndergaard"), or a family-name ending
// ("Kristiansen", "Popescu").
func (p *persons) surnameShaped(k int) bool {
	n := &p.nt[k]
	if !n.cap || n.allCaps || n.stop || n.title || utf8.RuneCountInString(n.fold) < 3 {
		return false
	}
	s := possessive(p.w.Text[p.w.Toks[k].Start:p.w.Toks[k].End])
	fold := possessive(n.fold)
	if p.lx.stop[fold] || len(fold) < 3 {
		return false // "Hope Street's"
	}
	if strings.ContainsAny(s, "'’-") || !nlp.IsASCII(s) {
		return true
	}
	for _, e := range p.lx.surnameEndings {
		if strings.HasSuffix(fold, e) && len(fold) > len(e)+2 {
			return true
		}
	}
	return false
}

// possessive drops an English possessive ending ("Street's").
func possessive(s string) string {
	for _, e := range []string{"'s", "’s", "'S", "’S"} {
		if strings.HasSuffix(s, e) {
			return strings.TrimSuffix(s, e)
		}
	}
	return s
}

// familyFirst: a family name written first ("Nguyễn Thị Mai", "Yamamoto
// Kenta", "Phạm Quốc Bảo") and one or two given names after it. A family
// name that is also an English word ("Park", "Long", "Do") needs a listed
// given name after it.
func (p *persons) familyFirst(i int) (int, int, float64, string) {
	n := &p.nt[i]
	if !n.cap || !p.lx.familyFirst[n.fold] || i+1 >= len(p.nt) || !p.nameGap(i+1) || p.claimed[i+1] {
		return 0, 0, 0, ""
	}
	g := &p.nt[i+1]
	if !g.cap || g.allCaps != n.allCaps || g.stop || g.title || g.place || p.startsLabel(i+1) {
		return 0, 0, 0, ""
	}
	given := g.first && !g.amb || p.hyphenGiven(i+1)
	if (n.amb || n.stop || n.particle) && !given {
		return 0, 0, 0, ""
	}
	if !given && !p.shaped(i+1, n.allCaps) {
		return 0, 0, 0, ""
	}
	to := i + 2
	if to < len(p.nt) && p.nameGap(to) && !p.claimed[to] && p.nt[to].cap && !p.nt[to].stop && p.nt[to].allCaps == n.allCaps &&
		(p.nt[to].first || !p.nt[to].sur) && p.shaped(to, n.allCaps) && utf8.RuneCountInString(p.nt[to].fold) <= 6 {
		to++
	}
	return i, to, 0.75, "family_first"
}

// saidName: a given name alone before a verb of saying ("Mark said",
// "As Faith confirmed", "Ivy emailed").
func (p *persons) saidName(i int) (int, int, float64, string) {
	n := &p.nt[i]
	if !n.cap || n.allCaps || !n.first || n.stop && !n.amb || n.place || i+1 >= len(p.nt) || !spaceGap(p.gap(i+1)) {
		return 0, 0, 0, ""
	}
	if !p.lx.saidVerbs[p.nt[i+1].fold] || p.nt[i+1].cap {
		return 0, 0, 0, ""
	}
	return i, i + 1, 0.7, "said"
}

// sameNames finds the words of the names found in the window wherever
// else they stand capitalised ("Tapelbren was seen by Dr ..." after
// "Patient name: DRAFENBRENBREN, Tapelbren"; "thanks Will" after "Will de
// Vries:"). A word that is also an ordinary one counts only where a name
// can stand: inside a sentence, or opening one before a verb or a colon
// ("Will will write", "Hope has been", but not "Will you", "Hope to").
func (p *persons) sameNames() {
	found := map[string]bool{}
	for _, t := range p.outTok {
		for k := t[0]; k < t[1]; k++ {
			n := &p.nt[k]
			if n.word && !n.particle && !n.initial && !n.title && !n.weakTitle && !n.suffix && (!n.stop || n.first) && !n.place &&
				utf8.RuneCountInString(n.fold) >= 2 {
				found[n.fold] = true
			}
		}
	}
	if len(found) == 0 {
		return
	}
	for k := range p.nt {
		n := &p.nt[k]
		if p.claimed[k] || !n.word || !found[n.fold] || !(n.cap || n.uncased) || n.allCaps && !p.allCapsFound(n.fold) || p.startsLabel(k) {
			continue
		}
		if (n.amb || n.stop) && !p.nameStandsHere(k) || p.monthHere(k) {
			continue
		}
		p.add(k, k+1, 0.7, "same_name")
	}
}

// allCapsFound: a word in capitals is taken again only when it was found
// in capitals (recitals, registers), not when a heading shouts it.
func (p *persons) allCapsFound(fold string) bool {
	for _, t := range p.outTok {
		for k := t[0]; k < t[1]; k++ {
			if p.nt[k].fold == fold && p.nt[k].allCaps {
				return true
			}
		}
	}
	return false
}

// nameStandsHere reports whether an ordinary word found elsewhere as a
// name is one at token k: not opening a sentence, or opening one before
// a colon, a comma, the line's end or a verb a subject takes.
func (p *persons) nameStandsHere(k int) bool {
	if k > 0 && p.nt[k-1].cap && !p.nt[k-1].stop && spaceGap(p.gap(k)) && !p.claimed[k-1] {
		return false // inside a capitalised phrase ("Amazing Grace")
	}
	if !p.sentenceStart(k) {
		return true
	}
	rest := strings.TrimLeft(p.w.Text[p.w.Toks[k].End:], " \t")
	if rest == "" || strings.ContainsRune(":,)\n", rune(rest[0])) {
		return true
	}
	return k+1 < len(p.nt) && spaceGap(p.gap(k+1)) && !p.nt[k+1].cap &&
		(p.lx.subjectWords[p.nt[k+1].fold] || p.lx.saidVerbs[p.nt[k+1].fold])
}

// sentenceStart reports whether token k opens a sentence, a line or a
// clause after a colon or a bracket.
func (p *persons) sentenceStart(k int) bool {
	before := strings.TrimRightFunc(p.w.Text[:p.w.Toks[k].Start], unicode.IsSpace)
	if before == "" || strings.Contains(p.w.Text[len(before):p.w.Toks[k].Start], "\n") {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	return strings.ContainsRune(".!?:;]\"“(", r)
}

// hyphenGiven reports a romanised Korean or Chinese given name written
// with a hyphen ("Ji-hoon", "Seo-yeon", "JI-HOON"): short syllables, the
// second not capitalised (unless all are).
var hyphenGivenShape = regexp.MustCompile(`^(?:\p{Lu}\p{Ll}{1,4}-\p{Ll}{2,5}|\p{Lu}{2,5}-\p{Lu}{2,5})$`)

func (p *persons) hyphenGiven(k int) bool {
	t := p.w.Toks[k]
	return hyphenGivenShape.MatchString(p.w.Text[t.Start:t.End])
}

// givenThenFamily: a hyphenated East Asian given name before a family
// name written second ("Ji-hoon Park", "JI-HOON PARK").
func (p *persons) givenThenFamily(i int) (int, int, float64, string) {
	if !p.hyphenGiven(i) || i+1 >= len(p.nt) || !p.nameGap(i+1) || p.claimed[i+1] {
		return 0, 0, 0, ""
	}
	f := &p.nt[i+1]
	if !f.cap || !p.lx.familyFirst[f.fold] || f.allCaps != p.nt[i].allCaps {
		return 0, 0, 0, ""
	}
	return i, i + 2, 0.75, "given_family"
}

// partyLine matches what opens a line of parties in an agreement before
// the name: "(1) ", "2. ", "(b) ".
var partyLine = regexp.MustCompile(`^[ \t]*(?:\(\w{1,3}\)|\w{1,3}[.)])[ \t]*$`)

// recitalParty: names in capitals in an agreement's list of parties:
// "(1) HOPE ACHTERBERG of ...", "(2) A B and C D of ... (the Tenant)".
func (p *persons) recitalParty(i int) (int, int, float64, string) {
	if !p.nt[i].allCaps || !p.partyStart(i) {
		return 0, 0, 0, ""
	}
	to := i
	for to < len(p.nt) && to-i < 5 && !p.claimed[to] && (p.nt[to].allCaps || p.nt[to].particle && p.nt[to].cap) &&
		!p.nt[to].stop && (to == i || p.nameGap(to)) {
		to++
	}
	if to-i < 2 {
		return 0, 0, 0, ""
	}
	rest := strings.TrimLeft(p.w.Text[p.w.Toks[to-1].End:], " \t")
	for _, next := range []string{"of ", "and ", ",", "(", "whose ", "residing ", "domiciled "} {
		if strings.HasPrefix(rest, next) {
			return i, to, 0.7, "recital_party"
		}
	}
	return 0, 0, 0, ""
}

// partyStart: token i follows "(1)" at the start of its line, or " and "
// after a party already found.
func (p *persons) partyStart(i int) bool {
	if lineAt := p.lineAt(i); p.w.Toks[i].Start-lineAt <= 8 && partyLine.MatchString(p.w.Text[lineAt:p.w.Toks[i].Start]) {
		return true
	}
	return i >= 2 && p.nt[i-1].fold == "and" && p.claimed[i-2] && p.nt[i-2].allCaps
}

// lineAt returns where token i's line starts, scanning back at most
// across the tokens before it on the line (each asked once per rule).
func (p *persons) lineAt(i int) int {
	start := p.w.Toks[i].Start
	lo := 0
	if i > 0 {
		lo = p.w.Toks[i-1].End
	}
	if nl := strings.LastIndexByte(p.w.Text[lo:start], '\n'); nl >= 0 {
		return lo + nl + 1
	}
	for k := i - 1; k >= 0; k-- {
		from := 0
		if k > 0 {
			from = p.w.Toks[k-1].End
		}
		if nl := strings.LastIndexByte(p.w.Text[from:p.w.Toks[k].Start], '\n'); nl >= 0 {
			return from + nl + 1
		}
		if start-p.w.Toks[k].Start > 32 {
			return p.w.Toks[k].Start // far enough: no short prefix
		}
	}
	return 0
}

// chatStamp matches a chat line's time before its speaker: "[09:41] ",
// "09:41 ", "(9:41 pm) ".
var chatStamp = regexp.MustCompile(`^[ \t]*[\[(]?\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]?[AaPp]\.?[Mm]\.?)?[\])]?[ \t]+$`)

// chatSpeaker: the speaker of a chat line, between its time and a colon
// ("[09:41] Sabbren Luquiswyldra: morning!").
func (p *persons) chatSpeaker(i int) (int, int, float64, string) {
	if !p.nt[i].cap || p.w.Toks[i].Start-p.lineAt(i) > 16 || !chatStamp.MatchString(p.w.Text[p.lineAt(i):p.w.Toks[i].Start]) {
		return 0, 0, 0, ""
	}
	to := i
	for to < len(p.nt) && to-i < 3 && !p.claimed[to] && (to == i || p.nameGap(to)) && (p.shaped(to, false) || p.nt[to].particle) {
		to++
	}
	if to == i || !strings.HasPrefix(p.w.Text[p.w.Toks[to-1].End:], ":") {
		return 0, 0, 0, ""
	}
	return i, to, 0.7, "chat_speaker"
}
