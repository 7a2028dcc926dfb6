package pattern

import (
	"fmt"

	"github.com/nyaruka/phonenumbers"

	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
)

// Tables are the validators' data: IBAN formats, card IIN ranges,
// top-level domains and never-issued SSNs. Loaded once per registry and
// never modified.
type Tables struct {
	ibans         map[string]ibanSpec
	iins          []iinRange
	tlds, tldDeny map[string]bool
	invalidSSN    map[string]bool
	// phoneRegions are the countries a number in national form is
	// tried in, in order.
	phoneRegions []string
}

// LoadTables returns the registry's tables (shared by every recognizer
// that asks through the same env).
func LoadTables(env *recognizer.Env) (*Tables, error) {
	v, err := env.Cached("pattern.tables", func() (any, error) { return loadTables(env) })
	if err != nil {
		return nil, err
	}
	return v.(*Tables), nil
}

func loadTables(env *recognizer.Env) (*Tables, error) {
	tb := &Tables{}
	for _, s := range []struct {
		name string
		fn   func(*recognizer.Env) error
	}{
		{"iban.txt", tb.loadIBAN},
		{"iin.txt", tb.loadIIN},
		{"tlds.txt", tb.loadTLDs},
		{"invalid_ssn.txt", tb.loadInvalidSSN},
		{"phone_regions.txt", tb.loadPhoneRegions},
	} {
		if err := s.fn(env); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return tb, nil
}

// KnownTLD reports whether tld (lower case) is a listed top-level domain.
func (tb *Tables) KnownTLD(tld string) bool { return tb.tlds[tld] }

// ibanSpec is a country's IBAN length and BBAN structure.
type ibanSpec struct {
	length int
	bban   []bbanPart
}

type bbanPart struct {
	n    int
	kind byte // 'n' digits, 'a' upper-case letters, 'c' either
}

// fields returns the line's fields before any '#' comment.
func fields(line string) []string { return strings.Fields(strings.SplitN(line, "#", 2)[0]) }

func (tb *Tables) loadIBAN(env *recognizer.Env) error {
	b, err := env.ReadFile("iban.txt")
	if err != nil {
		return err
	}
	tb.ibans = map[string]ibanSpec{}
	for i, line := range strings.Split(string(b), "\n") {
		f := fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) > 3 || len(f) < 2 || len(f[0]) != 2 {
			return fmt.Errorf("line %d: want COUNTRY LENGTH [STRUCTURE]", i+1)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			return fmt.Errorf("line %d: want COUNTRY LENGTH [STRUCTURE]", i+1)
		}
		spec := ibanSpec{length: n}
		if len(f) == 3 {
			if spec.bban, err = parseBBAN(f[2], n-4); err != nil {
				return fmt.Errorf("line %d: %w", i+1, err)
			}
		}
		tb.ibans[f[0]] = spec
	}
	return nil
}

func parseBBAN(s string, want int) ([]bbanPart, error) {
	var parts []bbanPart
	total := 0
	for _, p := range strings.Split(s, ",") {
		if len(p) < 2 {
			return nil, fmt.Errorf("bad structure %q", s)
		}
		n, err := strconv.Atoi(p[:len(p)-1])
		k := p[len(p)-1]
		if err != nil || n <= 0 || (k != 'n' && k != 'a' && k != 'c') {
			return nil, fmt.Errorf("bad structure part %q", p)
		}
		parts = append(parts, bbanPart{n, k})
		total += n
	}
	if total != want {
		return nil, fmt.Errorf("structure %q is %d long, want %d", s, total, want)
	}
	return parts, nil
}

// iinRange is a card brand's prefix range and allowed lengths.
type iinRange struct {
	brand   string
	lo, hi  int
	digits  int
	lengths map[int]bool
}

func (tb *Tables) loadIIN(env *recognizer.Env) error {
	b, err := env.ReadFile("iin.txt")
	if err != nil {
		return err
	}
	for i, line := range strings.Split(string(b), "\n") {
		f := fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return fmt.Errorf("line %d: want BRAND PREFIX LENGTHS", i+1)
		}
		r, err := parseIIN(f)
		if err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
		tb.iins = append(tb.iins, r)
	}
	return nil
}

func parseIIN(f []string) (iinRange, error) {
	r := iinRange{brand: f[0], lengths: map[int]bool{}}
	lo, hi, _ := strings.Cut(f[1], "-")
	if hi == "" {
		hi = lo
	}
	var e1, e2 error
	r.lo, e1 = strconv.Atoi(lo)
	r.hi, e2 = strconv.Atoi(hi)
	r.digits = len(lo)
	if e1 != nil || e2 != nil || len(hi) != len(lo) || r.lo > r.hi {
		return r, fmt.Errorf("bad prefix range %q", f[1])
	}
	for _, l := range strings.Split(f[2], ",") {
		n, err := strconv.Atoi(l)
		if err != nil || n < 12 || n > 19 {
			return r, fmt.Errorf("bad length %q", l)
		}
		r.lengths[n] = true
	}
	return r, nil
}

func (tb *Tables) loadTLDs(env *recognizer.Env) error {
	w, err := env.WordList("tlds.txt")
	if err != nil {
		return err
	}
	tb.tlds, tb.tldDeny = map[string]bool{}, map[string]bool{}
	dst := tb.tlds
	for _, t := range w {
		if t == "deny:" {
			dst = tb.tldDeny
			continue
		}
		dst[strings.ToLower(t)] = true
	}
	return nil
}

func (tb *Tables) loadInvalidSSN(env *recognizer.Env) error {
	w, err := env.WordList("invalid_ssn.txt")
	if err != nil {
		return err
	}
	tb.invalidSSN = map[string]bool{}
	for _, s := range w {
		if len(s) != 9 {
			return fmt.Errorf("%q is not nine digits", s)
		}
		tb.invalidSSN[s] = true
	}
	return nil
}

func (tb *Tables) loadPhoneRegions(env *recognizer.Env) error {
	w, err := env.WordList("phone_regions.txt")
	if err != nil {
		return err
	}
	for _, r := range w {
		if phonenumbers.GetCountryCodeForRegion(r) == 0 {
			return fmt.Errorf("%q is no region libphonenumber knows", r)
		}
	}
	tb.phoneRegions = w
	return nil
}
