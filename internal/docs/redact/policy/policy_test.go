package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

func TestParse(t *testing.T) {
	good := "version: 1\ndefault: {operator: mask, threshold: 0.6}\nmask: {char: \"#\"}\nhash: {length: 12}\n" +
		"types:\n  US_SSN: {operator: replace}\n  PERSON: {operator: hash, threshold: 0.7}\n  IP_ADDRESS: {enabled: false}\n  CREDIT_CARD: {keep_last: 2}\n"
	p, err := Parse("p.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if p.DefaultOperator != OpMask || p.MaskChar != '#' || p.HashLength != 12 || p.Threshold(Email) != 0.6 ||
		p.Threshold(Person) != 0.7 || p.Operator(SSN) != OpReplace || p.Enabled(IPAddress) || !p.Enabled(Email) ||
		*p.Types[CreditCard].KeepLast != 2 {
		t.Fatalf("parsed %+v", p)
	}
	asJSON := `{"version": 1, "types": {"EMAIL": {"operator": "remove"}}}`
	if p, err := Parse("p.json", []byte(asJSON)); err != nil || p.Operator(Email) != OpRemove {
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
		_, err := Parse("p.yaml", []byte(c.src))
		var de *docs.Error
		if err == nil || !errors.As(err, &de) || de.Code != docs.CodeInvalidArg || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want invalid_input containing %q", c.name, err, c.want)
		}
	}
}

func TestKnownTypes(t *testing.T) {
	if !Known(Email) || Known("negative") || Known("") {
		t.Fatal("Known must accept exactly the public types")
	}
	if got := AllTypes(); len(got) != 13 || got[0] != Person {
		t.Fatalf("AllTypes = %v", got)
	}
}

func TestUsesHash(t *testing.T) {
	p := Default()
	if p.UsesHash() {
		t.Fatal("default policy hashes")
	}
	p.Types[Email] = TypePolicy{Operator: OpHash}
	if !p.UsesHash() {
		t.Fatal("a hashed type not seen")
	}
	p.Types[Email] = TypePolicy{Operator: OpHash, Disabled: true}
	if p.UsesHash() {
		t.Fatal("a disabled hashed type needs no salt")
	}
}

func TestTypesMatchTheContract(t *testing.T) {
	consts := []Type{Person, Email, Phone, SSN, CreditCard, IBAN, IPAddress, DateOfBirth,
		StreetAddress, BankAccount, BankRouting, Passport, DriverLicense}
	if len(consts) != len(result.Types) {
		t.Fatalf("%d constants, %d contract types", len(consts), len(result.Types))
	}
	for _, c := range consts {
		if !Known(c) {
			t.Errorf("%s is not in result.Types", c)
		}
	}
}
