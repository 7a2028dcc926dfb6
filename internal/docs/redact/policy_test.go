package redact

import (
	"errors"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs"
)

func TestParsePolicy(t *testing.T) {
	good := "version: 1\ndefault: {operator: mask, threshold: 0.6}\nmask: {char: \"#\"}\nhash: {length: 12}\n" +
		"types:\n  US_SSN: {operator: replace}\n  PERSON: {operator: hash, threshold: 0.7}\n  IP_ADDRESS: {enabled: false}\n  CREDIT_CARD: {keep_last: 2}\n"
	p, err := ParsePolicy("p.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if p.DefaultOperator != OpMask || p.MaskChar != '#' || p.HashLength != 12 || p.threshold(Email) != 0.6 ||
		p.threshold(Person) != 0.7 || p.operator(SSN) != OpReplace || p.enabled(IPAddress) || !p.enabled(Email) ||
		*p.Types[CreditCard].KeepLast != 2 {
		t.Fatalf("parsed %+v", p)
	}
	asJSON := `{"version": 1, "types": {"EMAIL": {"operator": "remove"}}}`
	if p, err := ParsePolicy("p.json", []byte(asJSON)); err != nil || p.operator(Email) != OpRemove {
		t.Fatalf("json policy: %v", err)
	}
	bad := []struct{ name, src, want string }{
		{"unknown key", "version: 1\ncolour: red\n", "p.yaml:2: unknown key \"colour\""},
		{"unknown type", "version: 1\ntypes:\n  SSN: {operator: mask}\n", "p.yaml:3: unknown type \"SSN\""},
		{"bad operator", "version: 1\ntypes:\n  EMAIL:\n    operator: shred\n", "p.yaml:4: operator"},
		{"threshold range", "version: 1\ndefault: {threshold: 1.5}\n", "p.yaml:2: threshold"},
		{"duplicate key", "version: 1\nversion: 1\n", "p.yaml:2: duplicate key"},
		{"duplicate type", "version: 1\ntypes:\n  EMAIL: {}\n  EMAIL: {}\n", "p.yaml:4: duplicate type"},
		{"no version", "types: {}\n", "version: 1 is required"},
		{"mask char letter", "version: 1\nmask: {char: x}\n", "p.yaml:2: mask char"},
		{"enabled not bool", "version: 1\ntypes:\n  EMAIL: {enabled: \"yes\"}\n", "p.yaml:3: enabled"},
		{"keep_last range", "version: 1\ntypes:\n  EMAIL: {keep_last: 99}\n", "p.yaml:3: want an integer"},
		{"syntax", "version: [1\n", "p.yaml"},
		{"two docs", "version: 1\n---\nversion: 1\n", "more than one document"},
	}
	for _, c := range bad {
		_, err := ParsePolicy("p.yaml", []byte(c.src))
		var de *docs.Error
		if err == nil || !errors.As(err, &de) || de.Code != docs.CodeInvalidArg || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want invalid_input containing %q", c.name, err, c.want)
		}
	}
}

func TestHashNeedsSalt(t *testing.T) {
	p := DefaultPolicy()
	p.Types[Email] = TypePolicy{Operator: OpHash}
	if _, err := New(Options{Policy: p}); err == nil {
		t.Fatal("hash without a salt accepted")
	}
	if _, err := New(Options{Policy: p, Salt: []byte("0123456789abcdef")}); err != nil {
		t.Fatal(err)
	}
}

func TestOperators(t *testing.T) {
	in := "SSN 219-45-6789, mail grace@example.com, card 4111 1111 1111 1111."
	cases := []struct {
		op, want string
	}{
		{OpReplace, "SSN <US_SSN>, mail <EMAIL>, card <CREDIT_CARD>."},
		{OpMask, "SSN ***-**-6789, mail *****@*******.***, card **** **** **** 1111."},
		{OpRemove, "SSN , mail , card ."},
	}
	for _, c := range cases {
		p := DefaultPolicy()
		p.DefaultOperator = c.op
		r, err := New(Options{Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.Text([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if string(out.Data) != c.want {
			t.Errorf("%s: got %q, want %q", c.op, out.Data, c.want)
		}
		for _, f := range out.Findings {
			if f.Hash != "" {
				t.Errorf("%s: finding carries a hash", c.op)
			}
		}
	}
}

func TestHashOperator(t *testing.T) {
	p := DefaultPolicy()
	p.DefaultOperator = OpHash
	in := []byte("mail grace@example.com and grace@example.com, not mark@example.com")
	hashes := func(salt string) []string {
		r, err := New(Options{Policy: p, Salt: []byte(salt)})
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.Text(in)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out.Data), "example") {
			t.Fatalf("value left in output: %s", out.Data)
		}
		var hs []string
		for _, f := range out.Findings {
			if len(f.Hash) != 16 || !strings.Contains(string(out.Data), "<EMAIL:"+f.Hash+">") {
				t.Fatalf("finding hash %q not in output %s", f.Hash, out.Data)
			}
			hs = append(hs, f.Hash)
		}
		return hs
	}
	a, b := hashes("salt-one-0123456789"), hashes("salt-two-0123456789")
	if a[0] != a[1] || a[0] == a[2] {
		t.Errorf("equal values must hash equal, different ones differently: %v", a)
	}
	if a[0] == b[0] {
		t.Errorf("different salts gave the same hash")
	}
}
