package nlp

import "github.com/airlock-dev/airlock/internal/docs/redact/policy"

// Type is an entity type (policy.Type), or one of the label kinds below.
type Type = policy.Type

// Label kinds besides the entity types: context phrases that are never
// findings themselves.
const (
	NegativeLabel Type = "negative"        // order, tracking, ISBN, ...: lowers a nearby candidate
	PersonLabel   Type = "person_label"    // "Name:", any name-ish words follow
	PersonRole    Type = "person_role"     // "Patient:", list-backed names follow
	PersonOpener  Type = "person_opener"   // "Dear", capitalised names follow
	PersonCue     Type = "person_cue"      // "please contact", "case officer": name-shaped words follow
	NonPerson     Type = "non_person_name" // "Company Name:", nothing follows
)

// LabelKinds are the label kinds a registry's context may list besides
// entity types.
var LabelKinds = []Type{NegativeLabel, PersonLabel, PersonRole, PersonOpener, PersonCue, NonPerson}

// PhraseTrie maps folded word sequences ("date of birth") to types.
type PhraseTrie struct {
	root *trieNode
}

type trieNode struct {
	next  map[string]*trieNode
	types []Type
}

// NewPhraseTrie returns an empty trie.
func NewPhraseTrie() *PhraseTrie { return &PhraseTrie{root: &trieNode{}} }

// Add files phrase under typ.
func (t *PhraseTrie) Add(phrase string, typ Type) {
	words := phraseWords(phrase)
	if len(words) == 0 {
		return
	}
	n := t.root
	for _, w := range words {
		if n.next == nil {
			n.next = map[string]*trieNode{}
		}
		c := n.next[w]
		if c == nil {
			c = &trieNode{}
			n.next[w] = c
		}
		n = c
	}
	for _, x := range n.types {
		if x == typ {
			return
		}
	}
	n.types = append(n.types, typ)
}

// phraseWords splits a phrase the way text is tokenised and folds it.
func phraseWords(p string) []string {
	var out []string
	for _, t := range Tokenize(p) {
		out = append(out, FoldWord(p[t.Start:t.End]))
	}
	return out
}

// Label is one context phrase found in the text.
type Label struct {
	Start, End       int // bytes
	FirstTok, EndTok int // token index range [FirstTok, EndTok)
	Types            []Type
}

// Has reports whether the label is of type t.
func (l *Label) Has(t Type) bool {
	for _, x := range l.Types {
		if x == t {
			return true
		}
	}
	return false
}

// HasContextType reports whether the label names an entity type (person
// labels and openers do not compete with numeric context).
func (l *Label) HasContextType() bool {
	for _, t := range l.Types {
		if policy.Known(t) {
			return true
		}
	}
	return false
}

// softGap reports whether two tokens of one phrase may be separated by
// text: spaces, or one of . / - ' (as in "d.o.b", "a/c"), or one line
// break where a paragraph wrapped ("Social\nSecurity number"); never a
// colon, which ends a label.
func softGap(g string) bool {
	if len(g) > 4 {
		return false
	}
	nl := 0
	for _, r := range g {
		switch {
		case r == '\n':
			nl++
		case !(r == ' ' || r == '\t' || r == '\r' || r == '.' || r == '/' || r == '-' || r == '\'' || r == '’' || r == 0xA0):
			return false
		}
	}
	return nl <= 1
}

// FindLabels returns the longest context phrase starting at each token,
// without overlaps, in text order.
func FindLabels(s string, toks []Token, trie *PhraseTrie) []Label {
	var out []Label
	for i := 0; i < len(toks); i++ {
		if !toks[i].Letters {
			continue
		}
		n := trie.root.next[FoldWord(s[toks[i].Start:toks[i].End])]
		if n == nil {
			continue
		}
		best, bestEnd := n, i+1
		for j := i + 1; j < len(toks) && j < i+7 && n.next != nil; j++ {
			if !softGap(s[toks[j-1].End:toks[j].Start]) {
				break
			}
			if n = n.next[FoldWord(s[toks[j].Start:toks[j].End])]; n == nil {
				break
			}
			if len(n.types) > 0 {
				best, bestEnd = n, j+1
			}
		}
		if len(best.types) == 0 {
			continue
		}
		out = append(out, Label{Start: toks[i].Start, End: toks[bestEnd-1].End,
			FirstTok: i, EndTok: bestEnd, Types: best.types})
		i = bestEnd - 1
	}
	return out
}
