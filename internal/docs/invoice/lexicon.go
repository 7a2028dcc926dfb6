package invoice

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/airlock-dev/airlock/internal/docs/invoice/datafile"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/textnorm"
)

//go:embed lexicon.yaml
var defaultLexicon []byte

// Value kinds: how a field's text is parsed.
const (
	kindID       = "id"
	kindDate     = "date"
	kindAmount   = "amount"
	kindCurrency = "currency"
	kindIBAN     = "iban"
	kindBIC      = "bic"
	kindAccount  = "account"
	kindRouting  = "routing"
	kindSortCode = "sortcode"
	kindTaxID    = "taxid"
	kindText     = "text"
)

// Table column kinds.
const (
	colDescription = "description"
	colQuantity    = "quantity"
	colUnit        = "unit"
	colUnitPrice   = "unit_price"
	colAmount      = "amount"
	colOther       = "other"
)

type lexiconFile struct {
	Fields map[string]struct {
		Labels []string `yaml:"labels"`
		Weak   []string `yaml:"weak"`
	} `yaml:"fields"`
	Ignore           []string            `yaml:"ignore"`
	CustomerPrefixes []string            `yaml:"customer_prefixes"`
	CustomerSuffixes []string            `yaml:"customer_suffixes"`
	CarryForward     []string            `yaml:"carry_forward"`
	Table            map[string][]string `yaml:"table"`
	Titles           []string            `yaml:"titles"`
	CoverTitles      []string            `yaml:"cover_titles"`
	CustomerBlocks   []string            `yaml:"customer_blocks"`
	DayFirstWords    []string            `yaml:"day_first_words"`
	MonthFirstWords  []string            `yaml:"month_first_words"`
	Months           map[int][]string    `yaml:"months"`
	CurrencySymbols  map[string]string   `yaml:"currency_symbols"`
	CurrencyCodes    []string            `yaml:"currency_codes"`
	ReverseCharge    []string            `yaml:"reverse_charge"`
	Units            []string            `yaml:"units"`
	IBANLengths      map[string]int      `yaml:"iban_lengths"`
	TaxIDFormats     []string            `yaml:"tax_id_formats"`
	LegalSuffixes    []string            `yaml:"legal_suffixes"`
}

// label is one compiled label.
type label struct {
	field string // "" for an ignore label
	kind  string
	weak  bool
	colon bool // must be followed by ':'
	size  int  // folded length, for the longest-match contest
	re    *regexp.Regexp
	last  rune // last folded rune, for the right-boundary rule
}

type symbol struct{ text, code string }

// header is one phrase of a table header.
type header struct {
	col     string
	compact string // textnorm.Compact of the phrase
}

// lexicon is the compiled lexicon.yaml. Immutable once built.
type lexicon struct {
	labels           []*label
	customerPrefixes []string
	customerSuffixes []string
	carryForward     []string
	headers          []header // longest first
	titles           []string
	coverTitles      []string
	customerBlocks   []string
	dayFirst         []string
	monthFirst       []string
	months           map[string]int
	monthAlt         string // regexp alternation of month names, longest first
	symbols          []symbol
	codes            map[string]bool
	reverseCharge    []string
	units            map[string]bool // lower case
	ibanLengths      map[string]int
	taxIDFormats     []*regexp.Regexp
	legalSuffixes    []string
}

func parseLexicon(name string, b []byte) (*lexicon, error) {
	var f lexiconFile
	root, err := datafile.Decode(name, b, &f)
	if err != nil {
		return nil, err
	}
	lx := &lexicon{months: map[string]int{}, codes: map[string]bool{}}
	if err := lx.compileFields(name, root, &f); err != nil {
		return nil, err
	}
	if err := lx.compileTable(name, root, f.Table); err != nil {
		return nil, err
	}
	if err := lx.compileMonths(name, root, f.Months); err != nil {
		return nil, err
	}
	if err := lx.compileCurrencies(name, root, &f); err != nil {
		return nil, err
	}
	lx.customerPrefixes = foldAll(f.CustomerPrefixes)
	lx.customerSuffixes = foldAll(f.CustomerSuffixes)
	lx.carryForward = foldAll(f.CarryForward)
	lx.titles = foldAll(f.Titles)
	lx.coverTitles = foldAll(f.CoverTitles)
	lx.legalSuffixes = foldAll(f.LegalSuffixes)
	lx.customerBlocks = foldAll(f.CustomerBlocks)
	lx.dayFirst = foldAll(f.DayFirstWords)
	lx.monthFirst = foldAll(f.MonthFirstWords)
	lx.reverseCharge = foldAll(f.ReverseCharge)
	lx.units = map[string]bool{}
	for _, u := range f.Units {
		lx.units[strings.ToLower(u)] = true
	}
	for cc, n := range f.IBANLengths {
		if len(cc) != 2 || strings.ToUpper(cc) != cc || n < 15 || n > 34 {
			return nil, datafile.Errorf(name, datafile.Lookup(root, "iban_lengths", cc), "bad IBAN length entry %s: %d", cc, n)
		}
	}
	lx.ibanLengths = f.IBANLengths
	for i, t := range f.TaxIDFormats {
		re, err := regexp.Compile(`^(?:` + t + `)$`)
		if err != nil {
			return nil, datafile.Errorf(name, datafile.Lookup(root, "tax_id_formats", i), "%v", err)
		}
		lx.taxIDFormats = append(lx.taxIDFormats, re)
	}
	return lx, nil
}

func foldAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = textnorm.Fold(s)
	}
	return out
}

// fieldKind is how a field's value is parsed.
func fieldKind(field string) string {
	switch field {
	case result.FieldInvoiceNumber, result.FieldPONumber:
		return kindID
	case result.FieldInvoiceDate, result.FieldDueDate:
		return kindDate
	case result.FieldSubtotal, result.FieldTax, result.FieldShipping, result.FieldTotal:
		return kindAmount
	case result.FieldCurrency:
		return kindCurrency
	case result.FieldIBAN:
		return kindIBAN
	case result.FieldBIC:
		return kindBIC
	case result.FieldAccountNumber:
		return kindAccount
	case result.FieldRoutingNumber:
		return kindRouting
	case result.FieldSortCode:
		return kindSortCode
	case result.FieldVendorTaxID:
		return kindTaxID
	case result.FieldVendorName:
		return kindText
	}
	return ""
}

func (lx *lexicon) compileFields(name string, root *yaml.Node, f *lexiconFile) error {
	scalars := result.ScalarFields()
	names := make([]string, 0, len(f.Fields))
	for k := range f.Fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, field := range names {
		spec := f.Fields[field]
		node := datafile.Lookup(root, "fields", field)
		if !slices.Contains(scalars, field) {
			return datafile.Errorf(name, node, "unknown field %q", field)
		}
		if len(spec.Labels) == 0 {
			return datafile.Errorf(name, node, "field %s: no labels", field)
		}
		kind := fieldKind(field)
		for _, set := range []struct {
			texts []string
			weak  bool
		}{{spec.Labels, false}, {spec.Weak, true}} {
			for _, t := range set.texts {
				l, err := compileLabel(field, kind, t, set.weak)
				if err != nil {
					return datafile.Errorf(name, node, "field %s: %v", field, err)
				}
				lx.labels = append(lx.labels, l)
			}
		}
	}
	for i, t := range f.Ignore {
		l, err := compileLabel("", "", t, false)
		if err != nil {
			return datafile.Errorf(name, datafile.Lookup(root, "ignore", i), "%v", err)
		}
		lx.labels = append(lx.labels, l)
	}
	return nil
}

// compileLabel turns a label into a pattern over folded text where spaces
// are optional (OCR loses them) and '.', '-', '/' may be missing.
func compileLabel(field, kind, text string, weak bool) (*label, error) {
	l := &label{field: field, kind: kind, weak: weak}
	folded := strings.TrimSpace(textnorm.Fold(text))
	if strings.HasSuffix(folded, ":") {
		l.colon = true
		folded = strings.TrimSpace(strings.TrimSuffix(folded, ":"))
	}
	if utf8.RuneCountInString(folded) < 2 {
		return nil, fmt.Errorf("label %q is too short", text)
	}
	var b strings.Builder
	for _, r := range folded {
		switch r {
		case ' ':
			// OCR bridges a space with a speck: "Account-No", "Account. Number".
			b.WriteString(`[\s\-.~_]*`)
		case '.':
			b.WriteString(`\.?`)
		case '-', '/':
			b.WriteString(`[-/\s]?`)
		case '\'':
			b.WriteString(`['’]?\s*`)
		case '°':
			b.WriteString(`[°o]?`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
		l.last = r
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("label %q: %w", text, err)
	}
	l.re, l.size = re, len(folded)
	return l, nil
}

func (lx *lexicon) compileTable(name string, root *yaml.Node, t map[string][]string) error {
	valid := []string{colDescription, colQuantity, colUnit, colUnitPrice, colAmount, colOther}
	for col, phrases := range t {
		if !slices.Contains(valid, col) {
			return datafile.Errorf(name, datafile.Lookup(root, "table", col), "unknown table column %q", col)
		}
		for _, p := range phrases {
			lx.headers = append(lx.headers, header{col: col, compact: textnorm.Compact(p)})
		}
	}
	for _, col := range []string{colDescription, colAmount} {
		if len(t[col]) == 0 {
			return datafile.Errorf(name, datafile.Lookup(root, "table"), "table: column %s has no header words", col)
		}
	}
	return nil
}

func (lx *lexicon) compileMonths(name string, root *yaml.Node, months map[int][]string) error {
	var all []string
	for m, names := range months {
		if m < 1 || m > 12 {
			return datafile.Errorf(name, datafile.Lookup(root, "months"), "month %d out of range", m)
		}
		for _, n := range names {
			f := textnorm.Fold(n)
			if prev, dup := lx.months[f]; dup && prev != m {
				return datafile.Errorf(name, datafile.Lookup(root, "months"), "month name %q is both %d and %d", n, prev, m)
			}
			lx.months[f] = m
			all = append(all, regexp.QuoteMeta(f))
		}
	}
	if len(lx.months) == 0 {
		return datafile.Errorf(name, root, "no month names")
	}
	sort.Slice(all, func(i, j int) bool { return len(all[i]) > len(all[j]) || len(all[i]) == len(all[j]) && all[i] < all[j] })
	lx.monthAlt = strings.Join(all, "|")
	return nil
}

func (lx *lexicon) compileCurrencies(name string, root *yaml.Node, f *lexiconFile) error {
	for i, c := range f.CurrencyCodes {
		if len(c) != 3 || strings.ToUpper(c) != c {
			return datafile.Errorf(name, datafile.Lookup(root, "currency_codes", i), "currency code %q is not three capital letters", c)
		}
		lx.codes[c] = true
	}
	for sym, code := range f.CurrencySymbols {
		if !lx.codes[code] {
			return datafile.Errorf(name, datafile.Lookup(root, "currency_symbols", sym), "symbol %q maps to %q, not in currency_codes", sym, code)
		}
		lx.symbols = append(lx.symbols, symbol{text: sym, code: code})
	}
	// Longest first: "US$" before "$".
	sort.Slice(lx.symbols, func(i, j int) bool {
		a, b := lx.symbols[i].text, lx.symbols[j].text
		return len(a) > len(b) || len(a) == len(b) && a < b
	})
	return nil
}

// isCurrencyToken reports a word that is only a currency marker.
func (lx *lexicon) isCurrencyToken(w string) bool {
	if lx.codes[w] {
		return true
	}
	for _, s := range lx.symbols {
		if w == s.text {
			return true
		}
	}
	return false
}

// currencyIn returns the ISO code of the first currency marker in w.
func (lx *lexicon) currencyIn(w string) string {
	for _, s := range lx.symbols {
		if strings.Contains(w, s.text) {
			return s.code
		}
	}
	for _, f := range strings.FieldsFunc(w, func(r rune) bool { return r < 'A' || r > 'Z' }) {
		if lx.codes[f] {
			return f
		}
	}
	return ""
}
