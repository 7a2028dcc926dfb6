package invoice

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/airlock-dev/airlock/internal/docs/invoice/datafile"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/textnorm"
)

//go:embed templates/*.yml
var shippedTemplates embed.FS

// templateFile is a vendor template in the spirit of invoice2data: the
// keywords that identify the vendor, a regex per field (one capture group
// holding the value) and the vendor's formats.
type templateFile struct {
	Name            string            `yaml:"name"`
	Issuer          string            `yaml:"issuer"`
	Keywords        []string          `yaml:"keywords"`
	ExcludeKeywords []string          `yaml:"exclude_keywords"`
	Fields          map[string]string `yaml:"fields"`
	Options         struct {
		Currency         string `yaml:"currency"`
		DateOrder        string `yaml:"date_order"`
		DecimalSeparator string `yaml:"decimal_separator"`
	} `yaml:"options"`
}

// Template is a compiled vendor template. Immutable once built.
type Template struct {
	Name     string
	issuer   string
	keywords []string // textnorm.Compact
	exclude  []string // textnorm.Compact
	currency string
	order    DateOrder
	decimal  rune
	fields   []tplField
}

type tplField struct {
	name string
	re   *regexp.Regexp
}

var templateName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ParseTemplate compiles one template file, strictly: unknown keys,
// unknown fields, regexes without exactly one capture group and bad
// options are errors at file:line.
func ParseTemplate(file string, b []byte) (*Template, error) {
	var f templateFile
	root, err := datafile.Decode(file, b, &f)
	if err != nil {
		return nil, err
	}
	t := &Template{Name: f.Name, issuer: strings.TrimSpace(f.Issuer)}
	switch {
	case !templateName.MatchString(f.Name):
		return nil, datafile.Errorf(file, datafile.Lookup(root, "name"), "name %q: want lower-case letters, digits, '-' or '_'", f.Name)
	case t.issuer == "" || len([]rune(t.issuer)) > result.MaxTextRunes:
		return nil, datafile.Errorf(file, datafile.Lookup(root, "issuer"), "issuer is required (at most %d characters)", result.MaxTextRunes)
	case len(f.Keywords) == 0:
		return nil, datafile.Errorf(file, datafile.Lookup(root, "keywords"), "at least one keyword is required")
	case len(f.Fields) == 0:
		return nil, datafile.Errorf(file, datafile.Lookup(root, "fields"), "at least one field is required")
	}
	for i, k := range f.Keywords {
		if strings.TrimSpace(k) == "" {
			return nil, datafile.Errorf(file, datafile.Lookup(root, "keywords", i), "empty keyword")
		}
		c := textnorm.Compact(k)
		if len(c) < 3 {
			return nil, datafile.Errorf(file, datafile.Lookup(root, "keywords", i), "keyword %q is too short", k)
		}
		t.keywords = append(t.keywords, c)
	}
	for _, k := range f.ExcludeKeywords {
		t.exclude = append(t.exclude, textnorm.Compact(k))
	}
	if err := t.compileOptions(file, root, f.Options.Currency, f.Options.DateOrder, f.Options.DecimalSeparator); err != nil {
		return nil, err
	}
	if err := t.compileFields(file, root, f.Fields); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Template) compileOptions(file string, root *yaml.Node, currency, order, dec string) error {
	node := datafile.Lookup(root, "options")
	if currency != "" && (len(currency) != 3 || strings.ToUpper(currency) != currency) {
		return datafile.Errorf(file, datafile.Lookup(node, "currency"), "currency %q is not an ISO 4217 code", currency)
	}
	t.currency = currency
	switch order {
	case "":
	case "dmy":
		t.order = OrderDMY
	case "mdy":
		t.order = OrderMDY
	default:
		return datafile.Errorf(file, datafile.Lookup(node, "date_order"), "date_order %q: want dmy or mdy", order)
	}
	switch dec {
	case "":
	case ".", ",":
		t.decimal = rune(dec[0])
	default:
		return datafile.Errorf(file, datafile.Lookup(node, "decimal_separator"), "decimal_separator %q: want \".\" or \",\"", dec)
	}
	return nil
}

func (t *Template) compileFields(file string, root *yaml.Node, fields map[string]string) error {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		node := datafile.Lookup(root, "fields", name)
		if !slices.Contains(result.ScalarFields(), name) {
			return datafile.Errorf(file, node, "unknown field %q", name)
		}
		re, err := regexp.Compile(fields[name])
		if err != nil {
			return datafile.Errorf(file, node, "field %s: %v", name, err)
		}
		if re.NumSubexp() != 1 {
			return datafile.Errorf(file, node, "field %s: regex has %d capture groups, want exactly 1", name, re.NumSubexp())
		}
		t.fields = append(t.fields, tplField{name: name, re: re})
	}
	return nil
}

// matches reports whether every keyword and no excluded keyword appears
// in the document text, compared without spaces or punctuation (OCR loses
// spaces; "GlobexGmbH" is still Globex GmbH).
func (t *Template) matches(compact string) bool {
	for _, k := range t.keywords {
		if !strings.Contains(compact, k) {
			return false
		}
	}
	for _, k := range t.exclude {
		if strings.Contains(compact, k) {
			return false
		}
	}
	return true
}

// LoadTemplates compiles every *.yml file in dir of fsys, sorted by name.
func LoadTemplates(fsys fs.FS, dir string) ([]*Template, error) {
	paths, err := fs.Glob(fsys, path.Join(dir, "*.yml"))
	if err != nil {
		return nil, fmt.Errorf("list templates: %w", err)
	}
	sort.Strings(paths)
	var out []*Template
	seen := map[string]string{}
	for _, p := range paths {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("read template: %w", err)
		}
		t, err := ParseTemplate(p, b)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[t.Name]; dup {
			return nil, fmt.Errorf("%s: template name %q already used by %s", p, t.Name, prev)
		}
		seen[t.Name] = p
		out = append(out, t)
	}
	return out, nil
}

// ShippedTemplates returns the templates built into the tool.
func ShippedTemplates() ([]*Template, error) { return LoadTemplates(shippedTemplates, "templates") }

// applyTemplate reads the template's fields from the document text; each
// capture maps back to the words it came from (for page and confidence).
func (x *run) applyTemplate(t *Template) {
	x.add(result.FieldVendorName, candidate{value: t.issuer, method: result.MethodTemplate, pos: -1})
	if t.currency != "" {
		x.add(result.FieldCurrency, candidate{value: t.currency, method: result.MethodTemplate, pos: -1})
	}
	text, spans := x.templateText()
	for _, f := range t.fields {
		m := f.re.FindStringSubmatchIndex(text)
		if m == nil || m[2] < 0 {
			continue
		}
		ws := wordsIn(spans, m[2], m[3])
		if p, ok := x.parseValue(fieldKind(f.name), ws); ok {
			x.add(f.name, candidate{value: p.value, method: result.MethodTemplate, words: p.words, issues: p.issues, amt: p.amt, pos: -1})
		}
	}
}

// rowSpan places a row's text in the template text.
type rowSpan struct {
	r     *row
	start int
}

func (x *run) templateText() (string, []rowSpan) {
	var b strings.Builder
	var spans []rowSpan
	for _, pg := range x.pages {
		for _, r := range pg.rows {
			spans = append(spans, rowSpan{r: r, start: b.Len()})
			b.WriteString(r.text)
			b.WriteByte('\n')
		}
	}
	return b.String(), spans
}

func wordsIn(spans []rowSpan, from, to int) []word {
	var out []word
	for _, s := range spans {
		end := s.start + len(s.r.text)
		if to <= s.start || from >= end {
			continue
		}
		out = append(out, s.r.slice(max(from, s.start)-s.start, min(to, end)-s.start)...)
	}
	return out
}
