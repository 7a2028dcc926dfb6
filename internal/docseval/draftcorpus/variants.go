package draftcorpus

import (
	"math/rand/v2"
	"regexp"
	"strings"

	reviewresult "github.com/airlock-dev/airlock/internal/docs/review/result"
)

// Variant kinds recorded in the truth (the edits follow a colon).
const (
	VariantVerbatim        = "verbatim"
	VariantTrivial         = "trivial"
	VariantNumeric         = "numeric"
	VariantReworded        = "reworded"
	VariantRewordedNumeric = "reworded_numeric"
	VariantAddition        = "addition"
	VariantMissing         = "missing"
	VariantLookalike       = "missing+lookalike"
)

// variant is one clause as this drafter's contract words it.
type variant struct {
	status  string
	numeric bool
	name    string
	paras   []string
	found   []string
	// addition is a sentence added to the clause ("" if none); set apart
	// so a layout may give it a paragraph of its own.
	addition string
}

// drawVariant draws a status for a clause and words the clause to match.
// The shares: missing 14%, verbatim 14%, trivially changed 16%, a key
// term edited 16%, own wording 18%, own wording with a key term changed
// 10%, standard text with a sentence added 12%.
func drawVariant(rng *rand.Rand, split, std string, cm clauseMaterial) variant {
	v := variant{paras: []string{std}, found: cm.Terms}
	edits := cm.Numeric.of(split)
	r := rng.Float64()
	switch {
	case r < 0.14:
		v = variant{status: reviewresult.StatusMissing, name: VariantMissing}
		if rng.Float64() < 0.6 {
			v.name = VariantLookalike
		}
	case r < 0.28:
		v.status, v.name = reviewresult.StatusMatch, VariantVerbatim
	case r < 0.44:
		v.status = reviewresult.StatusMatch
		v.paras, v.name = trivialEdits(rng, std)
	case r < 0.60 && len(edits) > 0:
		e := edits[rng.IntN(len(edits))]
		text, found := std, []string{}
		for _, pair := range e {
			text = strings.Replace(text, pair[0], pair[1], 1)
			found = append(found, pair[1])
		}
		v.status, v.numeric, v.name, v.paras, v.found = reviewresult.StatusDeviation, true, VariantNumeric, []string{text}, found
	case r >= 0.60 && r < 0.78:
		ws := cm.Reworded.of(split)
		v.status, v.name, v.paras = reviewresult.StatusDeviation, VariantReworded, []string{ws[rng.IntN(len(ws))]}
	case r < 0.88: // and a clause with no key term to edit
		ws := cm.RewordedNumeric.of(split)
		v.status, v.numeric, v.name = reviewresult.StatusDeviation, true, VariantRewordedNumeric
		v.paras, v.found = []string{ws[rng.IntN(len(ws))]}, []string{}
	default:
		as := cm.Additions.of(split)
		a := as[rng.IntN(len(as))]
		v.status, v.numeric, v.name, v.addition = reviewresult.StatusDeviation, a.Numeric, VariantAddition, a.Text
	}
	return v
}

var (
	reSerialComma = regexp.MustCompile(`, (and|or) `)
	reLetterDash  = regexp.MustCompile(`([a-z])-([a-z])`)
	reDashable    = regexp.MustCompile(`, (except that|provided that|other than) `)
)

// trivialEdits applies one or two of this drafter's trivial edits: the
// clause in capitals (as limitation clauses often are), typographic
// quotes, a serial comma dropped, a hyphen dropped from a compound word,
// a comma set as a dash, or a paragraph break at a sentence.
func trivialEdits(rng *rand.Rand, s string) ([]string, string) {
	kinds := []string{"capitals", "typographic_quotes", "serial_comma", "hyphen", "dash", "paragraph_break"}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	var applied []string
	paras := []string{s}
	for _, k := range kinds {
		if len(applied) == 2 || len(applied) == 1 && rng.Float64() < 0.5 {
			break
		}
		before := strings.Join(paras, "\n")
		switch k {
		case "paragraph_break":
			if len(paras) == 1 {
				paras = splitAtSentence(paras[0])
			}
		default:
			for i := range paras {
				paras[i] = trivialEdit(k, paras[i])
			}
		}
		if strings.Join(paras, "\n") != before {
			applied = append(applied, k)
		}
	}
	if len(applied) == 0 {
		return paras, VariantVerbatim
	}
	return paras, VariantTrivial + ":" + strings.Join(applied, "+")
}

func trivialEdit(kind, s string) string {
	switch kind {
	case "capitals":
		return strings.ToUpper(s)
	case "typographic_quotes":
		return typographic(s)
	case "serial_comma":
		if loc := reSerialComma.FindStringSubmatchIndex(s); loc != nil {
			return s[:loc[0]] + " " + s[loc[2]:]
		}
	case "hyphen":
		if loc := reLetterDash.FindStringSubmatchIndex(s); loc != nil {
			return s[:loc[3]] + s[loc[4]:]
		}
	case "dash":
		if loc := reDashable.FindStringSubmatchIndex(s); loc != nil {
			return s[:loc[0]] + " \u2013 " + s[loc[2]:]
		}
	}
	return s
}

// typographic sets apostrophes and quotes as a word processor does.
func typographic(s string) string {
	var b strings.Builder
	open := true
	for _, r := range s {
		switch r {
		case '\'':
			b.WriteRune('\u2019')
		case '"':
			if open {
				b.WriteRune('\u201c')
			} else {
				b.WriteRune('\u201d')
			}
			open = !open
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sentences splits a text at its sentence ends: a full stop, then a space
// and a capital, where the stop does not end an abbreviation (A.M. Best).
func sentences(s string) []string {
	var out []string
	start := 0
	for i := 1; i+2 < len(s); i++ {
		if s[i] != '.' || s[i+1] != ' ' || !isUpper(s[i+2]) && s[i+2] != '"' {
			continue
		}
		if p := s[i-1]; !(p >= 'a' && p <= 'z' || p == ')' || p >= '0' && p <= '9') {
			continue
		}
		out = append(out, s[start:i+1])
		start = i + 2
	}
	return append(out, s[start:])
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// splitAtSentence breaks a paragraph in two at the sentence end nearest
// its middle.
func splitAtSentence(s string) []string {
	ss := sentences(s)
	if len(ss) < 2 {
		return []string{s}
	}
	best, at := len(s), 1
	n := 0
	for i := 1; i < len(ss); i++ {
		n += len(ss[i-1]) + 1
		if d := abs(n - len(s)/2); d < best {
			best, at = d, i
		}
	}
	return []string{strings.Join(ss[:at], " "), strings.Join(ss[at:], " ")}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
