package invoicecheck

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

//go:embed data/*.txt
var dataFS embed.FS

// refData is the reference data the checks need, parsed once per Checker.
type refData struct {
	minorUnits  map[string]int // ISO 4217 code -> minor units
	ibanLengths map[string]int // country -> IBAN length
	suffixes    map[string]bool
}

func loadRefData() (*refData, error) {
	r := &refData{minorUnits: map[string]int{}, ibanLengths: map[string]int{}, suffixes: map[string]bool{}}
	code3 := regexp.MustCompile(`^[A-Z]{3}$`)
	cc2 := regexp.MustCompile(`^[A-Z]{2}$`)
	err := eachLine("data/iso4217.txt", 2, func(f []string) error {
		n, err := strconv.Atoi(f[1])
		if !code3.MatchString(f[0]) || err != nil || n < 0 || n > 4 {
			return fmt.Errorf("want CODE DIGITS, got %q", strings.Join(f, " "))
		}
		r.minorUnits[f[0]] = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachLine("data/iban_lengths.txt", 2, func(f []string) error {
		n, err := strconv.Atoi(f[1])
		if !cc2.MatchString(f[0]) || err != nil || n < 15 || n > 34 {
			return fmt.Errorf("want CC LENGTH, got %q", strings.Join(f, " "))
		}
		r.ibanLengths[f[0]] = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachLine("data/legal_suffixes.txt", 1, func(f []string) error {
		r.suffixes[f[0]] = true
		return nil
	})
	return r, err
}

// eachLine calls fn with the fields of every non-comment line, which must
// have exactly n fields; errors read "file:line: ...".
func eachLine(name string, n int, fn func([]string) error) error {
	b, err := dataFS.ReadFile(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for ln := 1; sc.Scan(); ln++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		f := strings.Fields(t)
		if len(f) != n {
			return fmt.Errorf("%s:%d: want %d fields, got %d", name, ln, n, len(f))
		}
		if err := fn(f); err != nil {
			return fmt.Errorf("%s:%d: %w", name, ln, err)
		}
	}
	return sc.Err()
}
