package reviewcorpus

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"

	reviewresult "github.com/airlock-dev/airlock/internal/docs/review/result"
)

// Variant kinds recorded in the truth.
const (
	VariantVerbatim    = "verbatim"
	VariantTrivial     = "trivial"
	VariantNumeric     = "numeric"
	VariantSubstantive = "substantive"
	VariantMissing     = "missing"
)

// variant is one clause as a contract words it.
type variant struct {
	status  string
	numeric bool
	name    string   // kind, with the edits applied: "trivial:upper+quotes"
	paras   []string // the clause body as paragraphs
	// expected and found are the key terms the generator knows of (as
	// written) in the standard text and in this variant.
	expected, found []string
}

// makeVariant draws a status for a clause and words the clause to match.
func makeVariant(rng *rand.Rand, c *playbook.Clause, cm clauseMaterial) variant {
	std := strings.Join(strings.Fields(c.StandardText), " ")
	terms := knownTerms(std, cm)
	v := variant{paras: []string{std}, expected: terms, found: terms}
	r := rng.Float64()
	canNumeric := len(numericSpots(std)) > 0 || len(cm.Places) > 0
	switch {
	case r < 0.15:
		return variant{status: reviewresult.StatusMissing, name: VariantMissing, expected: terms}
	case r < 0.30:
		v.status, v.name = reviewresult.StatusMatch, VariantVerbatim
	case r < 0.50:
		v.status = reviewresult.StatusMatch
		v.paras, v.name = trivialEdits(rng, std)
	case r < 0.75 && canNumeric:
		v.status, v.numeric = reviewresult.StatusDeviation, true
		var text, how string
		text, how, v.found = numericEdit(rng, std, cm)
		v.paras, v.name = []string{text}, VariantNumeric+":"+how
		if rng.Float64() < 0.2 { // a numeric change inside a reworded clause
			text, _ = substantiveEdit(rng, text, cm)
			v.paras, v.name = []string{text}, v.name+"+reworded"
		}
	default:
		v.status = reviewresult.StatusDeviation
		text, n := substantiveEdit(rng, std, cm)
		v.paras, v.name = []string{text}, VariantSubstantive+":"+n
	}
	if len(v.paras) == 1 && rng.Float64() < 0.15 {
		v.paras = splitParagraph(v.paras[0])
	}
	return v
}

// knownTerms lists what the generator knows to be key terms of a text:
// counted numbers, dollar amounts and the places of its jurisdiction
// changes.
func knownTerms(s string, cm clauseMaterial) []string {
	var out []string
	for _, sp := range numericSpots(s) {
		out = append(out, sp.text)
	}
	for _, alt := range cm.Places {
		for _, pair := range alt {
			if strings.Contains(s, pair[0]) && !slices.Contains(out, pair[0]) {
				out = append(out, pair[0])
			}
		}
	}
	return out
}

// numericEdit changes one key term of s: a counted number (words and
// digits together, or only one of them), a dollar amount (or its
// currency), or the jurisdiction. It returns the text, how it changed it
// and the key terms of the result.
func numericEdit(rng *rand.Rand, s string, cm clauseMaterial) (string, string, []string) {
	spots := numericSpots(s)
	if len(cm.Places) > 0 && (len(spots) == 0 || rng.Float64() < 0.6) {
		alt := cm.Places[rng.IntN(len(cm.Places))]
		found := knownTerms(s, cm)
		for _, pair := range alt {
			s = strings.Replace(s, pair[0], pair[1], 1)
			found = slices.DeleteFunc(found, func(t string) bool { return strings.Contains(t, pair[0]) || strings.Contains(pair[0], t) })
			found = append(found, pair[1])
		}
		return s, "jurisdiction", found
	}
	sp := spots[rng.IntN(len(spots))]
	var repl, how string
	if sp.kind == "money" {
		repl, how = changeMoney(rng, sp)
	} else {
		repl, how = changeCounted(rng, sp)
	}
	out := s[:sp.start] + repl + s[sp.end:]
	var found []string
	for _, t := range numericSpots(out) {
		found = append(found, t.text)
	}
	if sp.kind == "money" && !strings.HasPrefix(repl, "$") {
		found = append(found, repl)
	}
	return out, how, found
}

func changeCounted(rng *rand.Rand, sp numericSpot) (string, string) {
	var pool []float64
	switch sp.suffix {
	case "%":
		pool = []float64{0.5, 1.5, 2, 3, 5}
	case "x":
		pool = []float64{1.5, 3, 4}
	default:
		pool = []float64{1, 2, 3, 5, 7, 10, 14, 15, 18, 20, 24, 30, 45, 60, 90, 120, 180}
	}
	pool = slices.DeleteFunc(pool, func(v float64) bool { return v == sp.value })
	nv := pool[rng.IntN(len(pool))]
	words := spell(nv)
	if sp.words != "" && strings.ToUpper(sp.words[:1]) == sp.words[:1] {
		words = strings.ToUpper(words[:1]) + words[1:]
	}
	if sp.period != "" && rng.Float64() < 0.2 {
		// Same number, another period: days and business days, months and years.
		swap := map[string]string{" days": " business days", " business days": " days", " business day": " day",
			" day": " business day", " months": " years", " years": " months"}
		if np, ok := swap[strings.ToLower(sp.period)]; ok {
			return sp.words + " (" + digits(sp.value) + ")" + np, "period_unit"
		}
	}
	switch r := rng.Float64(); {
	case r < 0.6:
		return words + sp.unit + " (" + digits(nv) + sp.suffix + ")" + sp.period, "words_and_digits"
	case r < 0.8:
		return sp.words + sp.unit + " (" + digits(nv) + sp.suffix + ")" + sp.period, "digits_only"
	default:
		return words + sp.unit + " (" + digits(sp.value) + sp.suffix + ")" + sp.period, "words_only"
	}
}

func changeMoney(rng *rand.Rand, sp numericSpot) (string, string) {
	factors := []float64{0.5, 2, 3}
	nv := sp.value * factors[rng.IntN(len(factors))]
	switch r := rng.Float64(); {
	case r < 0.5:
		return "$" + commas(int64(nv)), "amount"
	case r < 0.75:
		return "USD " + digits(nv/1e6) + " million", "amount_in_words"
	default:
		cur := []string{"€", "£"}[rng.IntN(2)]
		return cur + commas(int64(sp.value)), "currency"
	}
}

// substantiveEdit applies one or two of the clause's rewrites.
func substantiveEdit(rng *rand.Rand, s string, cm clauseMaterial) (string, string) {
	var usable [][2]string
	for _, rw := range cm.Rewrites {
		if strings.Contains(s, rw[0]) {
			usable = append(usable, rw)
		}
	}
	if len(usable) == 0 {
		return "Intentionally omitted; the parties shall agree on this matter separately.", "omitted"
	}
	rng.Shuffle(len(usable), func(i, j int) { usable[i], usable[j] = usable[j], usable[i] })
	n := 1 + rng.IntN(min(2, len(usable)))
	for _, rw := range usable[:n] {
		s = strings.Replace(s, rw[0], rw[1], 1)
	}
	if n == 1 {
		return s, "one_rewrite"
	}
	return s, "two_rewrites"
}

var (
	reSerial   = regexp.MustCompile(`, (and|or) `)
	reWordDash = regexp.MustCompile(`([a-z])-([a-z])`)
	reComma    = regexp.MustCompile(`([A-Za-z\)]), `)
)

// trivialEdits applies one to three trivial edits and returns the
// paragraphs and their names.
func trivialEdits(rng *rand.Rand, s string) ([]string, string) {
	edits := []string{"upper", "quotes", "serial_comma", "drop_comma", "drop_hyphen", "paragraph_break", "nbsp"}
	rng.Shuffle(len(edits), func(i, j int) { edits[i], edits[j] = edits[j], edits[i] })
	var applied []string
	paras := []string{s}
	for _, e := range edits[:1+rng.IntN(3)] {
		before := strings.Join(paras, "\n")
		for i := range paras {
			paras[i] = trivialEdit(rng, e, paras[i])
		}
		if e == "paragraph_break" && len(paras) == 1 {
			paras = splitParagraph(paras[0])
		}
		if strings.Join(paras, "\n") != before {
			applied = append(applied, e)
		}
	}
	if len(applied) == 0 {
		return paras, VariantVerbatim
	}
	return paras, VariantTrivial + ":" + strings.Join(applied, "+")
}

func trivialEdit(rng *rand.Rand, e, s string) string {
	switch e {
	case "upper":
		return strings.ToUpper(s)
	case "quotes":
		return curlyQuotes(s)
	case "serial_comma":
		if loc := reSerial.FindStringSubmatchIndex(s); loc != nil {
			return s[:loc[0]] + " " + s[loc[2]:loc[3]] + " " + s[loc[1]:]
		}
	case "drop_comma":
		all := reComma.FindAllStringSubmatchIndex(s, -1)
		if len(all) > 0 {
			m := all[rng.IntN(len(all))]
			return s[:m[3]] + " " + s[m[1]:]
		}
	case "drop_hyphen":
		if loc := reWordDash.FindStringSubmatchIndex(s); loc != nil {
			sep := []string{"", " "}[rng.IntN(2)]
			return s[:loc[3]] + sep + s[loc[4]:]
		}
	case "nbsp":
		if i := strings.Index(s[len(s)/2:], " "); i >= 0 {
			i += len(s) / 2
			return s[:i] + "\u00a0" + s[i+1:]
		}
	}
	return s
}

// curlyQuotes turns straight quotes and apostrophes typographic.
func curlyQuotes(s string) string {
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

// splitParagraph breaks a paragraph in two at the sentence end nearest
// its middle (not after an abbreviation such as "A.M.").
func splitParagraph(s string) []string {
	best := -1
	for i := 1; i+2 < len(s); i++ {
		if s[i] != '.' || s[i+1] != ' ' {
			continue
		}
		if i >= 2 && isLetter(s[i-1]) && isLetter(s[i-2]) || s[i-1] == ')' {
			if best < 0 || abs(i-len(s)/2) < abs(best-len(s)/2) {
				best = i
			}
		}
	}
	if best < 0 {
		return []string{s}
	}
	return []string{s[:best+1], s[best+2:]}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
