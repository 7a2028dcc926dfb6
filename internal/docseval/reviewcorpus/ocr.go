package reviewcorpus

import (
	"math/rand/v2"
	"strings"
	"unicode"
)

// ocrSwaps are the misreadings of tesseract on 150-200 dpi scans of
// 10-11 pt text, most common first within each source.
var ocrSwaps = map[string][]string{
	"l": {"1", "I", "|"}, "I": {"l", "1"}, "i": {"l", "1"}, "1": {"l", "I"},
	"O": {"0"}, "o": {"0", "a"}, "0": {"O", "o"}, "rn": {"m"}, "m": {"rn"},
	"e": {"c", "o"}, "c": {"e"}, "h": {"b", "n"}, "n": {"u", "ri"}, "u": {"n", "v"},
	"a": {"o", "e"}, "S": {"5"}, "s": {"5"}, "5": {"S"}, ",": {"."}, ".": {","},
	"'": {"", "`"}, "t": {"f", "l"}, "f": {"t"}, "d": {"cl"}, "cl": {"d"}, "w": {"vv"},
	"y": {"v"}, "g": {"q"}, "B": {"8"}, "8": {"B"}, "E": {"F"}, "fi": {"ﬁ"},
}

// Noisy returns a copy of paras with OCR-like errors: per character with
// probability rate a typical misreading (l/1/I, O/0, rn/m, e/c, a dropped
// apostrophe, ...), or in one error out of ten a letter no table predicts
// or a lost letter; per space with probability rate/2 a lost space (two
// words run together) and per word with probability rate/4 an extra one.
// Deterministic for seed.
func Noisy(paras []Paragraph, seed int64, rate float64) []Paragraph {
	out := make([]Paragraph, len(paras))
	for i, p := range paras {
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)+1<<32))
		out[i] = Paragraph{Text: noisyText(rng, p.Text, rate), Pages: p.Pages}
	}
	return out
}

func noisyText(rng *rand.Rand, s string, rate float64) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == ' ' {
			if rng.Float64() < rate/2 {
				continue // lost space
			}
			b.WriteRune(r)
			continue
		}
		if unicode.IsLetter(r) && i > 0 && rs[i-1] != ' ' && rng.Float64() < rate/4 {
			b.WriteRune(' ') // a word read as two
		}
		if rng.Float64() >= rate {
			b.WriteRune(r)
			continue
		}
		if rng.Float64() < 0.1 {
			if rng.Float64() < 0.5 && unicode.IsLetter(r) {
				b.WriteRune(rune('a' + rng.IntN(26))) // a letter no table predicts
			}
			continue // or a lost one
		}
		if i+1 < len(rs) {
			if alts, ok := ocrSwaps[string(rs[i:i+2])]; ok {
				b.WriteString(alts[rng.IntN(len(alts))])
				i++
				continue
			}
		}
		if alts, ok := ocrSwaps[string(r)]; ok {
			b.WriteString(alts[rng.IntN(len(alts))])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// SplitAcrossPages returns a copy of paras in which every paragraph
// printed on two pages is cut in two at the page turn (estimated from its
// length), as an extraction that does not re-join paragraphs across a
// page break would give it. Deterministic.
func SplitAcrossPages(paras []Paragraph) []Paragraph {
	var out []Paragraph
	for _, p := range paras {
		words := strings.Fields(p.Text)
		if len(p.Pages) != 2 || len(words) < 4 {
			out = append(out, p)
			continue
		}
		cut := len(words) / 2
		out = append(out,
			Paragraph{Text: strings.Join(words[:cut], " "), Pages: p.Pages[:1]},
			Paragraph{Text: strings.Join(words[cut:], " "), Pages: p.Pages[1:]})
	}
	return out
}
