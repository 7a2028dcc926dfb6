package ocr

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer/pattern"
)

// A label vouches for the value after it on an OCR page: "Routing number:
// Q@52229800" is a routing number whatever its checksum says, since OCR
// may have changed a digit, dropped one or added one. The value is read
// by its shape alone: mostly digits (a number), capitals and digits (an
// IBAN), a numeric date, an address around a domain (an e-mail whose "@"
// OCR lost).

// labelRecognizer is the registry entry of kind "ocr_label". Its types
// are the ones a label may vouch for, in the order a label of several
// types ("account": IBAN and bank account) is read: a value that is
// mostly digits is an account number.
type labelRecognizer struct {
	name  string
	types []policy.Type
	score float64
	// minDigits is how many digits (look-alikes aside) a labelled value
	// of each number type needs: most of the shortest real one, so a
	// digit or two lost to OCR still counts, but a card's last four
	// ("card ending in 2118") or a short reference does not.
	minDigits map[policy.Type]int
	tb        *pattern.Tables
}

// NewLabel is the "ocr_label" kind's factory.
func NewLabel(spec *recognizer.Spec, env *recognizer.Env) (recognizer.Recognizer, error) {
	var s struct {
		recognizer.Common `yaml:",inline"`
		MinDigits         map[policy.Type]int `yaml:"min_digits"`
	}
	if err := spec.Decode(&s); err != nil {
		return nil, err
	}
	if s.Score <= 0 {
		return nil, fmt.Errorf("an ocr_label recognizer needs a score")
	}
	for _, t := range s.AllTypes() {
		switch t {
		case policy.IBAN, policy.DateOfBirth, policy.Email:
		default:
			if s.MinDigits[t] <= 0 {
				return nil, fmt.Errorf("no min_digits for %s", t)
			}
		}
	}
	tb, err := pattern.LoadTables(env)
	if err != nil {
		return nil, err
	}
	return &labelRecognizer{name: s.Name, types: s.AllTypes(), score: s.Score, minDigits: s.MinDigits, tb: tb}, nil
}

func (r *labelRecognizer) Name() string         { return r.name }
func (r *labelRecognizer) Types() []policy.Type { return r.types }

// Find returns, after each label of one of its types, the value that
// follows (see valueStart) when it has that type's shape: a date, an
// IBAN, an address (see the run functions), or for the number types
// mostly digits (look-alikes and separators aside), at most six chunks
// with minDigits of its type.
func (r *labelRecognizer) Find(w *nlp.Window, enabled func(policy.Type) bool) []recognizer.Span {
	text := w.Text
	var out []recognizer.Span
	for _, l := range w.Labels {
		typ := policy.Type("")
		for _, t := range r.types {
			if l.Has(t) && enabled(t) {
				typ = t
				break
			}
		}
		if typ == "" || l.EndTok >= len(w.Toks) {
			continue
		}
		start, ok := valueStart(w, l)
		if !ok {
			continue
		}
		var end int
		switch typ {
		case policy.IBAN:
			end = ibanRun(text, start)
		case policy.DateOfBirth:
			end = dateRun(text, start)
		case policy.Email:
			end = r.emailRun(text, start)
		default:
			end = digitRun(text, start, r.minDigits[typ])
		}
		if end > start {
			out = append(out, recognizer.Span{Start: start, End: end, Type: typ, Score: r.score, Detector: strings.ToLower(string(typ)) + "/ocr_label"})
		}
	}
	return out
}

// valueStart returns where the value after label l begins: the next
// token, past a colon, "#" or a stray sign OCR put there ("Card:
// $579-..."), at most two short lower-case words ("number as", "is") and
// at most one line break (a wrapped paragraph).
func valueStart(w *nlp.Window, l nlp.Label) (int, bool) {
	k, lines := l.EndTok, 0
	for skip := 0; k < len(w.Toks); k++ {
		t := w.Toks[k]
		g := w.Text[w.Toks[k-1].End:t.Start]
		if lines += strings.Count(g, "\n"); len(strings.TrimSpace(g)) > 3 || len(g) > 6 || lines > 1 {
			return 0, false
		}
		s := w.Text[t.Start:t.End]
		if t.Digits || skip == 2 || len(s) > 3 || strings.ToLower(s) != s {
			return t.Start, true
		}
		skip++
	}
	return 0, false
}

// digitRun returns the end of the mostly-digit chunks from start
// (trailing punctuation left out), or start when they hold fewer than
// need digits.
func digitRun(text string, start, need int) int {
	end, digits := start, 0
	for i, n := start, 0; i < len(text) && n < 6; n++ {
		j := i
		for j < len(text) && text[j] != ' ' && text[j] != '\n' && text[j] != '\t' {
			j++
		}
		d, like, other := chunkCounts(text[i:j])
		if d == 0 || 2*(like+other) > d {
			break
		}
		end, digits = j, digits+d
		// A value goes on past a space, or past a line break while it is
		// still too short to be whole ("798-05-" over "172").
		if j >= len(text) || text[j] != ' ' && (text[j] != '\n' || digits >= need) {
			break
		}
		i = j + 1
	}
	if digits < need {
		return start
	}
	return start + len(strings.TrimRight(text[start:end], ".,;:)"))
}

// ibanRun returns the end of an IBAN-shaped run from start on its line:
// groups of capitals, digits and digit look-alikes, 12 to 34 of them, at
// least half digits; or start.
func ibanRun(text string, start int) int {
	end, n, digits := start, 0, 0
	for i, groups := start, 0; i < len(text) && groups < 9; groups++ {
		j := i
		for j < len(text) && (text[j] >= 'A' && text[j] <= 'Z' || text[j] >= '0' && text[j] <= '9' || digitLike[text[j]] != 0) {
			j++
		}
		if j == i || n+j-i > 34 || j < len(text) && text[j] != ' ' && text[j] != '\n' && !strings.ContainsRune(".,;)", rune(text[j])) {
			break
		}
		d, _, _ := chunkCounts(text[i:j])
		end, n, digits = j, n+j-i, digits+d
		if j >= len(text) || text[j] != ' ' {
			break
		}
		i = j + 1
	}
	if n < 12 || 2*digits < n {
		return start
	}
	return end
}

// dateShape is a numeric date, look-alikes allowed ("99.12.1970" is a
// misread "09.12.1970": it need not be a valid date).
var dateShape = regexp.MustCompile(`^[0-9OoQDlISBZ@]{1,4}[./-][0-9OoQDlISBZ@]{1,2}[./-][0-9OoQDlISBZ@]{2,4}`)

// dateRun returns the end of a numeric date at start, or start.
func dateRun(text string, start int) int {
	if m := dateShape.FindStringIndex(text[start:]); m != nil {
		return start + m[1]
	}
	return start
}

// emailRun returns the end of an address at start: at most three chunks
// on the line, the last ending in a domain with a listed top-level
// domain ("tholath+billing outlook.com", where OCR lost the "@"); or
// start.
func (r *labelRecognizer) emailRun(text string, start int) int {
	for i, n := start, 0; i < len(text) && n < 3; n++ {
		j := i
		for j < len(text) && text[j] != ' ' && text[j] != '\n' && text[j] != '\t' {
			j++
		}
		chunk := strings.TrimRight(text[i:j], ".,;:)")
		if dot := strings.LastIndexByte(chunk, '.'); dot > 0 && dot > strings.LastIndexAny(chunk, "@«»©®") {
			if r.tb.KnownTLD(strings.ToLower(chunk[dot+1:])) && n > 0 || strings.ContainsAny(text[start:i+len(chunk)], "@«»©®") {
				return i + len(chunk)
			}
		}
		if j >= len(text) || text[j] != ' ' {
			break
		}
		i = j + 1
	}
	return start
}
