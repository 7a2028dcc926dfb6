package redact

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

func TestHashNeedsSalt(t *testing.T) {
	p := policy.Default()
	p.Types[Email] = policy.TypePolicy{Operator: policy.OpHash}
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
		{policy.OpReplace, "SSN <US_SSN>, mail <EMAIL>, card <CREDIT_CARD>."},
		{policy.OpMask, "SSN ***-**-6789, mail *****@*******.***, card **** **** **** 1111."},
		{policy.OpRemove, "SSN , mail , card ."},
	}
	for _, c := range cases {
		p := policy.Default()
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
	p := policy.Default()
	p.DefaultOperator = policy.OpHash
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
