package policy

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/airlock-dev/airlock/internal/docs"
)

// Operators a policy may choose per type.
const (
	OpReplace = "replace" // "<TYPE>"
	OpMask    = "mask"    // every letter and digit masked, the last KeepLast kept
	OpHash    = "hash"    // "<TYPE:hex>", HMAC-SHA256 with the job's salt, truncated
	OpRemove  = "remove"  // deleted
)

// DefaultThreshold is the score a finding needs unless the policy says
// otherwise.
const DefaultThreshold = 0.5

// MaxPolicyBytes bounds a policy file.
const MaxPolicyBytes = 64 << 10

// Policy chooses, per entity type, whether it is detected, the score it
// needs and how it is redacted. Zero values mean defaults; build one with
// Default or Parse.
type Policy struct {
	DefaultOperator  string
	DefaultThreshold float64 // 0 = DefaultThreshold
	MaskChar         rune
	HashLength       int // hex characters of the HMAC kept, 8..64
	Types            map[Type]TypePolicy
}

// TypePolicy is one type's settings.
type TypePolicy struct {
	Disabled  bool
	Operator  string  // "" = the policy's default operator
	Threshold float64 // 0 = DefaultThreshold
	KeepLast  *int    // for mask; nil = the type's default (4 for numbers, 0 otherwise)
	MaskChar  rune    // 0 = the policy's mask char
}

// Default enables every type, replaces with "<TYPE>", threshold 0.5.
func Default() *Policy {
	return &Policy{DefaultOperator: OpReplace, MaskChar: '*', HashLength: 16, Types: map[Type]TypePolicy{}}
}

// Enabled reports whether type t is detected.
func (p *Policy) Enabled(t Type) bool { return !p.Types[t].Disabled }

// Threshold is the score a finding of type t needs.
func (p *Policy) Threshold(t Type) float64 {
	if th := p.Types[t].Threshold; th > 0 {
		return th
	}
	if p.DefaultThreshold > 0 {
		return p.DefaultThreshold
	}
	return DefaultThreshold
}

// Operator is how type t is redacted.
func (p *Policy) Operator(t Type) string {
	if op := p.Types[t].Operator; op != "" {
		return op
	}
	return p.DefaultOperator
}

// UsesHash reports whether any enabled type is hashed (a salt is needed).
func (p *Policy) UsesHash() bool {
	if p.DefaultOperator == OpHash {
		return true
	}
	for t, tp := range p.Types {
		if tp.Operator == OpHash && p.Enabled(t) {
			return true
		}
	}
	return false
}

// Parse reads a policy in YAML or JSON (JSON is read as YAML, so
// the same strictness and line numbers apply). Unknown keys, duplicate
// keys, unknown types or operators and out-of-range values are errors of
// class invalid_input naming name:line.
//
//	version: 1
//	default: {operator: replace, threshold: 0.5}
//	mask: {char: "*"}
//	hash: {length: 16}
//	types:
//	  US_SSN: {operator: mask, keep_last: 4}
//	  PERSON: {enabled: true, operator: hash, threshold: 0.6}
//	  IP_ADDRESS: {enabled: false}
func Parse(name string, b []byte) (*Policy, error) {
	if len(b) > MaxPolicyBytes {
		return nil, docs.Errorf(docs.CodeInvalidArg, "%s: policy over %d bytes", name, MaxPolicyBytes)
	}
	if !utf8.Valid(b) {
		return nil, docs.Errorf(docs.CodeInvalidArg, "%s: policy is not UTF-8", name)
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&root); err != nil {
		return nil, docs.Errorf(docs.CodeInvalidArg, "%s: %v", name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, docs.Errorf(docs.CodeInvalidArg, "%s:%d: more than one document", name, extra.Line)
	}
	pp := &policyParser{name: name, p: Default()}
	if len(root.Content) != 1 {
		return nil, pp.errf(&root, "empty policy")
	}
	if err := pp.top(root.Content[0]); err != nil {
		return nil, err
	}
	return pp.p, nil
}

type policyParser struct {
	name string
	p    *Policy
}

func (pp *policyParser) errf(n *yaml.Node, format string, args ...any) error {
	return docs.Errorf(docs.CodeInvalidArg, "%s:%d: %s", pp.name, n.Line, fmt.Sprintf(format, args...))
}

// fields walks a mapping, rejecting duplicate and unknown keys.
func (pp *policyParser) fields(n *yaml.Node, what string, known map[string]func(*yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return pp.errf(n, "%s must be a mapping", what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return pp.errf(k, "duplicate key %q in %s", k.Value, what)
		}
		seen[k.Value] = true
		fn, ok := known[k.Value]
		if !ok {
			return pp.errf(k, "unknown key %q in %s", k.Value, what)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

func (pp *policyParser) top(n *yaml.Node) error {
	version := 0
	err := pp.fields(n, "policy", map[string]func(*yaml.Node) error{
		"version": func(v *yaml.Node) error { return pp.intIn(v, &version, 1, 1) },
		"default": func(v *yaml.Node) error {
			var tp TypePolicy
			if err := pp.typeFields(v, "default", &tp, false); err != nil {
				return err
			}
			if tp.Operator != "" {
				pp.p.DefaultOperator = tp.Operator
			}
			pp.p.DefaultThreshold = tp.Threshold
			return nil
		},
		"mask": func(v *yaml.Node) error {
			return pp.fields(v, "mask", map[string]func(*yaml.Node) error{
				"char": func(v *yaml.Node) error { return pp.char(v, &pp.p.MaskChar) },
			})
		},
		"hash": func(v *yaml.Node) error {
			return pp.fields(v, "hash", map[string]func(*yaml.Node) error{
				"length": func(v *yaml.Node) error { return pp.intIn(v, &pp.p.HashLength, 8, 64) },
			})
		},
		"types": pp.types,
	})
	if err != nil {
		return err
	}
	if version != 1 {
		return pp.errf(n, "version: 1 is required")
	}
	return nil
}

func (pp *policyParser) types(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return pp.errf(n, "types must be a mapping of TYPE: settings")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		t := Type(k.Value)
		if !Known(t) {
			return pp.errf(k, "unknown type %q", k.Value)
		}
		if seen[k.Value] {
			return pp.errf(k, "duplicate type %q", k.Value)
		}
		seen[k.Value] = true
		tp := pp.p.Types[t]
		if err := pp.typeFields(v, k.Value, &tp, true); err != nil {
			return err
		}
		pp.p.Types[t] = tp
	}
	return nil
}

func (pp *policyParser) typeFields(n *yaml.Node, what string, tp *TypePolicy, perType bool) error {
	known := map[string]func(*yaml.Node) error{
		"operator": func(v *yaml.Node) error {
			switch v.Value {
			case OpReplace, OpMask, OpHash, OpRemove:
				if v.Kind == yaml.ScalarNode {
					tp.Operator = v.Value
					return nil
				}
			}
			return pp.errf(v, "operator must be replace, mask, hash or remove")
		},
		"threshold": func(v *yaml.Node) error {
			f, err := strconv.ParseFloat(v.Value, 64)
			if v.Kind != yaml.ScalarNode || err != nil || f <= 0 || f > 1 {
				return pp.errf(v, "threshold must be a number in (0, 1]")
			}
			tp.Threshold = f
			return nil
		},
	}
	if perType {
		known["enabled"] = func(v *yaml.Node) error {
			var b bool
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
				return pp.errf(v, "enabled must be true or false")
			}
			tp.Disabled = !b
			return nil
		}
		known["keep_last"] = func(v *yaml.Node) error {
			n := 0
			if err := pp.intIn(v, &n, 0, 8); err != nil {
				return err
			}
			tp.KeepLast = &n
			return nil
		}
		known["mask_char"] = func(v *yaml.Node) error { return pp.char(v, &tp.MaskChar) }
	}
	return pp.fields(n, what, known)
}

func (pp *policyParser) intIn(v *yaml.Node, dst *int, lo, hi int) error {
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil || n < lo || n > hi {
		return pp.errf(v, "want an integer in [%d, %d]", lo, hi)
	}
	*dst = n
	return nil
}

// char accepts one printable character that cannot be read as a digit or
// a letter (a mask of letters could be taken for data, and would trip the
// verifier), and not '<' or '>' (placeholders).
func (pp *policyParser) char(v *yaml.Node, dst *rune) error {
	r, n := utf8.DecodeRuneInString(v.Value)
	if v.Kind != yaml.ScalarNode || n == 0 || n != len(v.Value) || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r) || r == '<' || r == '>' || r < ' ' {
		return pp.errf(v, "mask char must be one non-alphanumeric character")
	}
	*dst = r
	return nil
}
