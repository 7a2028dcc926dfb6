package factseval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/review/facts"
	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// Truth is the hand-written ground truth of one fixture contract.
type Truth struct {
	Parties  []result.Party `json:"parties"`
	KeyDates struct {
		EffectiveDate   string `json:"effective_date"`
		ExpirationDate  string `json:"expiration_date"`
		Renewal         bool   `json:"renewal"`
		NoticeDeadlines []struct {
			Event string `json:"event"`
			Date  string `json:"date"`
		} `json:"notice_deadlines"`
	} `json:"key_dates"`
	DefinedTerms []struct {
		Term     string   `json:"term"`
		Problems []string `json:"problems"`
	} `json:"defined_terms"`
	Obligations []result.Obligation `json:"obligations"`
}

// Fixture is one contract of a fixture directory.
type Fixture struct {
	Name       string // the file's stem
	Path       string // the .txt file
	Paragraphs []facts.Paragraph
	Truth      Truth
}

var pageMarkRE = regexp.MustCompile(`^--- page (\d+) ---$`)

// Load reads every STEM.txt of dir with its STEM.truth.json (decoded
// strictly: a field the scorer does not know is a mistake in the truth).
func Load(dir string) ([]Fixture, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("factseval: no fixtures in %s", dir)
	}
	sort.Strings(files)
	var out []Fixture
	for _, f := range files {
		fx := Fixture{Name: strings.TrimSuffix(filepath.Base(f), ".txt"), Path: f}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("factseval: %w", err)
		}
		fx.Paragraphs = paragraphs(string(data))
		tb, err := os.ReadFile(strings.TrimSuffix(f, ".txt") + ".truth.json")
		if err != nil {
			return nil, fmt.Errorf("factseval: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(tb))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&fx.Truth); err != nil {
			return nil, fmt.Errorf("factseval: %s truth: %w", fx.Name, err)
		}
		out = append(out, fx)
	}
	return out, nil
}

// paragraphs splits fixture text at blank lines; a "--- page N ---" line
// starts page N.
func paragraphs(text string) []facts.Paragraph {
	page := 1
	var out []facts.Paragraph
	for _, block := range strings.Split(text, "\n\n") {
		block = strings.TrimSpace(block)
		if m := pageMarkRE.FindStringSubmatch(block); m != nil {
			page, _ = strconv.Atoi(m[1])
			continue
		}
		if block != "" {
			out = append(out, facts.Paragraph{Text: block, Pages: []int{page}})
		}
	}
	return out
}

// Counts is one field's tally: TP right values found, FP wrong or
// spurious values, FN values of the truth not found.
type Counts struct{ TP, FP, FN int }

func (c *Counts) value(got, want string) {
	got, want = norm(got), norm(want)
	switch {
	case got == want && got != "":
		c.TP++
	case got != "" && want != "":
		c.FP++
		c.FN++
	case got != "":
		c.FP++
	case want != "":
		c.FN++
	}
}

// Precision is TP/(TP+FP), 1 with nothing found.
func (c Counts) Precision() float64 { return ratio(c.TP, c.TP+c.FP) }

// Recall is TP/(TP+FN), 1 with nothing to find.
func (c Counts) Recall() float64 { return ratio(c.TP, c.TP+c.FN) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func norm(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "the ")
	return strings.Join(strings.Fields(strings.Trim(s, ".,;")), " ")
}

// tokenF1 is the overlap of two texts' word multisets.
func tokenF1(a, b string) float64 {
	ta, tb := strings.Fields(norm(a)), strings.Fields(norm(b))
	if len(ta) == 0 || len(tb) == 0 {
		return 0
	}
	bag := map[string]int{}
	for _, w := range tb {
		bag[w]++
	}
	common := 0
	for _, w := range ta {
		if bag[w] > 0 {
			bag[w]--
			common++
		}
	}
	p, r := float64(common)/float64(len(ta)), float64(common)/float64(len(tb))
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// Score tallies fields over any number of contracts.
type Score map[string]*Counts

func (s Score) get(k string) *Counts {
	if s[k] == nil {
		s[k] = &Counts{}
	}
	return s[k]
}

// Add scores one contract's extracted facts against its truth; logf (may
// be nil) hears every miss and spurious value.
func (s Score) Add(name string, tr Truth, got facts.Facts, logf func(format string, args ...any)) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	// Parties: matched by name; then each field of the matched ones.
	used := map[int]bool{}
	for _, w := range tr.Parties {
		k := -1
		for i, g := range got.Parties {
			if !used[i] && norm(g.Name) == norm(w.Name) {
				k = i
				break
			}
		}
		var g result.Party
		if k >= 0 {
			used[k] = true
			g = got.Parties[k]
		} else {
			logf("%s: party %q missed", name, w.Name)
		}
		s.get("parties.name").value(g.Name, w.Name)
		s.get("parties.role").value(g.Role, w.Role)
		s.get("parties.short_name").value(g.ShortName, w.ShortName)
		s.get("parties.address").value(g.Address, w.Address)
		s.get("parties.signatory").value(g.Signatory, w.Signatory)
	}
	for i, g := range got.Parties {
		if !used[i] {
			s.get("parties.name").FP++
			logf("%s: spurious party %q", name, g.Name)
		}
	}
	s.get("key_dates.effective_date").value(got.KeyDates.EffectiveDate, tr.KeyDates.EffectiveDate)
	s.get("key_dates.expiration_date").value(got.KeyDates.ExpirationDate, tr.KeyDates.ExpirationDate)
	s.get("key_dates.renewal").value(yes(got.KeyDates.Renewal != ""), yes(tr.KeyDates.Renewal))
	nd := s.get("key_dates.notice_deadlines")
	want := map[string]bool{}
	for _, n := range tr.KeyDates.NoticeDeadlines {
		want[n.Event+" "+n.Date] = true
	}
	for _, n := range got.KeyDates.NoticeDeadlines {
		if want[n.Event+" "+n.Date] {
			nd.TP++
			delete(want, n.Event+" "+n.Date)
		} else {
			nd.FP++
			logf("%s: notice deadline %s %s not in the truth", name, n.Event, n.Date)
		}
	}
	nd.FN += len(want)
	s.addTerms(name, tr, got, logf)
	s.addObligations(name, tr, got, logf)
}

// addTerms scores the defined terms, and their problems as (term,
// problem) pairs.
func (s Score) addTerms(name string, tr Truth, got facts.Facts, logf func(string, ...any)) {
	wantTerms, wantProblems := map[string]bool{}, map[string]bool{}
	for _, d := range tr.DefinedTerms {
		wantTerms[d.Term] = true
		for _, p := range d.Problems {
			wantProblems[d.Term+"/"+p] = true
		}
	}
	dt, dp := s.get("defined_terms.term"), s.get("defined_terms.problems")
	for _, d := range got.DefinedTerms {
		if wantTerms[d.Term] {
			dt.TP++
			delete(wantTerms, d.Term)
		} else {
			dt.FP++
			logf("%s: term %q not in the truth (%v)", name, d.Term, d.Problems)
		}
		for _, p := range d.Problems {
			if wantProblems[d.Term+"/"+p] {
				dp.TP++
				delete(wantProblems, d.Term+"/"+p)
			} else {
				dp.FP++
				logf("%s: problem %s/%s not in the truth", name, d.Term, p)
			}
		}
	}
	dt.FN += len(wantTerms)
	dp.FN += len(wantProblems)
	for _, k := range slices.Sorted(maps.Keys(wantTerms)) {
		logf("%s: term %q missed", name, k)
	}
	for _, k := range slices.Sorted(maps.Keys(wantProblems)) {
		logf("%s: problem %s missed", name, k)
	}
}

// addObligations matches obligations on actor and action (word F1 >=
// 0.8) and scores the deadline and due date of the matched ones.
func (s Score) addObligations(name string, tr Truth, got facts.Facts, logf func(string, ...any)) {
	used := map[int]bool{}
	for _, w := range tr.Obligations {
		k := -1
		for i, g := range got.Obligations {
			if !used[i] && norm(g.Party) == norm(w.Party) && tokenF1(g.Action, w.Action) >= 0.8 {
				k = i
				break
			}
		}
		if k < 0 {
			s.get("obligations (actor+action)").FN++
			s.get("obligations.deadline").value("", w.Deadline)
			s.get("obligations.due_date").value("", w.DueDate)
			logf("%s: obligation missed: %s / %s", name, w.Party, w.Action)
			continue
		}
		used[k] = true
		g := got.Obligations[k]
		s.get("obligations (actor+action)").TP++
		s.get("obligations.deadline").value(g.Deadline, w.Deadline)
		s.get("obligations.due_date").value(g.DueDate, w.DueDate)
		if norm(g.Deadline) != norm(w.Deadline) || g.DueDate != w.DueDate {
			logf("%s: deadline %q (%s), truth %q (%s)", name, g.Deadline, g.DueDate, w.Deadline, w.DueDate)
		}
	}
	for i, g := range got.Obligations {
		if !used[i] {
			s.get("obligations (actor+action)").FP++
			s.get("obligations.deadline").value(g.Deadline, "")
			s.get("obligations.due_date").value(g.DueDate, "")
			logf("%s: obligation not in the truth: %s / %s / %s", name, g.Party, g.Action, g.Deadline)
		}
	}
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
}

// Fields are the scored fields in name order.
func (s Score) Fields() []string { return slices.Sorted(maps.Keys(s)) }

// Format is the table of every field's counts, precision and recall.
func (s Score) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-30s %5s %5s %5s %9s %6s\n", "field", "tp", "fp", "fn", "precision", "recall")
	for _, k := range s.Fields() {
		v := s[k]
		fmt.Fprintf(&b, "%-30s %5d %5d %5d %9.2f %6.2f\n", k, v.TP, v.FP, v.FN, v.Precision(), v.Recall())
	}
	return b.String()
}

// Below lists the fields whose precision or recall is under floor.
func (s Score) Below(floor float64) []string {
	var out []string
	for _, k := range s.Fields() {
		if v := s[k]; v.Precision() < floor || v.Recall() < floor {
			out = append(out, fmt.Sprintf("%s: precision %.2f, recall %.2f, below %.2f", k, v.Precision(), v.Recall(), floor))
		}
	}
	return out
}
