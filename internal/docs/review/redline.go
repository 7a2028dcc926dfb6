package review

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// elideEqual is the longest unchanged run a redline keeps whole; longer
// runs keep their first and last words around an ellipsis, so a redline
// shows the changes, not the clause again.
const elideEqual = 240

// redline turns difflib opcodes over word tokens into segments from the
// standard text to the found text, showing words as written. It reports
// whether it had to cut the redline to the result's size limits.
func redline(std, found []token, ops []difflib.OpCode) ([]Segment, bool) {
	var segs []Segment
	add := func(op string, ts []token) {
		if len(ts) == 0 {
			return
		}
		raw := make([]string, len(ts))
		for i, t := range ts {
			raw[i] = t.Raw
		}
		text := strings.Join(raw, " ")
		if n := len(segs); n > 0 && segs[n-1].Op == op {
			segs[n-1].Text += " " + text
			return
		}
		segs = append(segs, Segment{Op: op, Text: text})
	}
	for _, op := range ops {
		switch op.Tag {
		case 'e':
			add(result.OpEqual, found[op.J1:op.J2])
		case 'd':
			add(result.OpDelete, std[op.I1:op.I2])
		case 'i':
			add(result.OpInsert, found[op.J1:op.J2])
		case 'r':
			add(result.OpDelete, std[op.I1:op.I2])
			add(result.OpInsert, found[op.J1:op.J2])
		}
	}
	for i := range segs {
		if segs[i].Op == result.OpEqual {
			segs[i].Text = elide(segs[i].Text, i == 0, i == len(segs)-1)
		}
	}
	return boundSegments(segs)
}

// elide shortens a long unchanged run, keeping the words next to the
// changes on each side.
func elide(s string, first, last bool) string {
	if len(s) <= elideEqual {
		return s
	}
	keep := elideEqual / 2
	words := strings.Fields(s)
	head, tail := takeWords(words, keep), takeWordsFromEnd(words, keep)
	switch {
	case first && last:
		return head + " … " + tail
	case first:
		return "… " + takeWordsFromEnd(words, elideEqual-10)
	case last:
		return takeWords(words, elideEqual-10) + " …"
	}
	return head + " … " + tail
}

func takeWords(words []string, n int) string {
	var b strings.Builder
	for _, w := range words {
		if b.Len()+len(w)+1 > n {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

func takeWordsFromEnd(words []string, n int) string {
	total, i := 0, len(words)
	for i > 0 && total+len(words[i-1])+1 <= n {
		total += len(words[i-1]) + 1
		i--
	}
	return strings.Join(words[i:], " ")
}

// boundSegments cuts the redline to the result's limits.
func boundSegments(segs []Segment) ([]Segment, bool) {
	total, cut := 0, false
	out := make([]Segment, 0, len(segs))
	for _, s := range segs {
		if len(out) == result.MaxRedlineSegments-1 || total+len(s.Text) > result.MaxRedlineBytes-8 {
			cut = true
			break
		}
		total += len(s.Text)
		out = append(out, s)
	}
	if cut {
		out = append(out, Segment{Op: result.OpEqual, Text: "…"})
	}
	return out, cut
}
