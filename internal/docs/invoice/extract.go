package invoice

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
	"github.com/airlock-dev/airlock/internal/docs/invoice/inject"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/textnorm"
)

// OCRLanguages are the tesseract models scans, photos and faxes of
// invoices are read with (extract.Options.OCRLang): English plus the
// languages of the European vendors. Measured on the rendered corpus
// (seeds 1-3), adding them raised OCR field accuracy from 91-93% to
// 94-95% and halved the clean invoices sent to review (umlauts and
// accents in vendor names, month names, label words), at about twice the
// seconds per page (0.3 -> 0.6 s on one core). The guest templates
// (templates/docs-base.yaml) and scripts/setup.sh install these models.
//
// The models are a choice (',' not '+'): the first page's middle band is
// read with English and the document with the one model its words show,
// or with all four joined when none stands out (extract.Options).
const OCRLanguages = "eng,deu,fra,nld"

// Result is the invoice job's result (the guest -> host contract).
type Result = result.Result

// Options are the per-document inputs besides the text.
type Options struct {
	// Templates are extra (tenant) templates, tried before the shipped
	// ones.
	Templates []*Template
	// Renders are the ink renders of text pages by page number (from
	// hidden.RenderPages). A text page without one gets only the geometric
	// hidden-text checks, and its PageInfo says InkChecked=false.
	Renders map[int]*hidden.Render
	// OffPage are the words a text PDF draws outside its pages, by page
	// number (from hidden.OffPageWords): pdftotext drops them, but they
	// are read for instructions and reported as hidden text.
	OffPage map[int][]extract.Word
	// DateOrder is a hint from the job inputs; OrderUnknown lets the
	// document decide.
	DateOrder DateOrder
	// Hidden overrides the visibility thresholds (zero = defaults).
	Hidden hidden.Config
}

// Extractor holds the compiled data files. Immutable; safe for concurrent
// use.
type Extractor struct {
	lx        *lexicon
	dp        *dateParser
	inj       *inject.Matcher
	templates []*Template
}

// New compiles the shipped lexicon, phrases and templates.
func New() (*Extractor, error) {
	lx, err := parseLexicon("lexicon.yaml", defaultLexicon)
	if err != nil {
		return nil, fmt.Errorf("invoice lexicon: %w", err)
	}
	inj, err := inject.Default()
	if err != nil {
		return nil, fmt.Errorf("injection phrases: %w", err)
	}
	tpls, err := ShippedTemplates()
	if err != nil {
		return nil, fmt.Errorf("invoice templates: %w", err)
	}
	return &Extractor{lx: lx, dp: newDateParser(lx), inj: inj, templates: tpls}, nil
}

// Extract reads an invoice with the shipped data files.
func Extract(doc *extract.Document, opts Options) (*Result, error) {
	e, err := New()
	if err != nil {
		return nil, docs.Errorf(docs.CodeInternal, "%v", err)
	}
	return e.Extract(doc, opts)
}

// run is the state of one extraction.
type run struct {
	lx        *lexicon
	dp        *dateParser
	pages     []*page
	hits      map[*row][]hit
	decHint   rune
	order     DateOrder
	orderWeak bool // the order came from locale words, not digits or a template
	dollar    bool // the document prints '$' (so OCR's leading 'S' may be one)
	cands     map[string][]candidate
	unread    map[string]int // bank field -> page of a label whose value could not be read
	main      *page
	cover     map[int]bool // fax cover sheets by page number
}

// Extract reads the fields of one invoice. Errors are classified docs
// errors: unreadable for an empty document, too_large over the page limit.
func (e *Extractor) Extract(doc *extract.Document, opts Options) (*Result, error) {
	if doc == nil || len(doc.Pages) == 0 {
		return nil, docs.Errorf(docs.CodeUnreadable, "document has no pages")
	}
	if len(doc.Pages) > result.MaxPages {
		return nil, docs.Errorf(docs.CodeTooLarge, "%d pages, over the %d page limit", len(doc.Pages), result.MaxPages)
	}
	s := e.screen(doc, opts)
	x := &run{lx: e.lx, dp: e.dp, pages: s.pages, hits: map[*row][]hit{}, cands: map[string][]candidate{}, unread: map[string]int{}}
	for _, pg := range x.pages {
		for _, r := range pg.rows {
			x.hits[r] = e.lx.findHits(r)
		}
	}
	x.main = x.mainPage()
	x.cover = x.coverPages()
	tpl := e.pickTemplate(x, opts.Templates)
	x.decideLocale(tpl, opts.DateOrder)
	lines := x.tables()
	pos := 0
	for _, pg := range x.pages {
		x.labelCandidates(pg, &pos)
	}
	if tpl != nil {
		x.applyTemplate(tpl)
	}
	x.inferVendor()
	x.inferTaxIDs()
	res := &Result{FieldSources: map[string]result.FieldSource{}, HiddenText: s.hidden, Injection: s.injections, Pages: s.info}
	if tpl != nil {
		res.Template = tpl.Name
	}
	x.fill(res, lines)
	res.Candidates = x.candidates(res)
	ensureSlices(res)
	return res, nil
}

func (e *Extractor) pickTemplate(x *run, extra []*Template) *Template {
	compact := textnorm.Compact(x.allText())
	for _, t := range slices.Concat(extra, e.templates) {
		if t.matches(compact) {
			return t
		}
	}
	return nil
}

// fill picks each field's best candidate, reconciles the amounts and
// writes values and sources.
func (x *run) fill(res *Result, lines []line) {
	picked := map[string]*candidate{}
	for _, f := range result.ScalarFields() {
		if f == result.FieldCurrency {
			continue
		}
		picked[f] = x.pick(f)
	}
	x.reverseChargeTax(picked)
	dropUnbalancingShipping(picked)
	x.reconcile(picked, lines)
	for i := range lines {
		checkLine(&lines[i])
	}
	linesConfirmed := confirm(picked, lines)
	if picked[result.FieldCurrency] = x.pick(result.FieldCurrency); picked[result.FieldCurrency] == nil {
		var amts []*candidate
		for _, f := range result.AmountFields() {
			amts = append(amts, picked[f])
		}
		x.inferCurrency(amts)
		picked[result.FieldCurrency] = x.pick(result.FieldCurrency)
	}
	// Amounts the totals row balances AND whose subtotal the lines sum to
	// are tied by two equations: a misread that satisfies both exactly
	// does not happen, so a low tesseract confidence on them is noise
	// (a currency sign, a thin space), unless the ink itself is faint.
	twice := linesConfirmed && picked[result.FieldTotal] != nil && picked[result.FieldTotal].confirmed
	for f, c := range picked {
		if c == nil {
			continue
		}
		v := c.value
		*res.Fields.Ptr(f) = &v
		res.FieldSources[f] = source(c.method, c.base, c.words, c.issues, x.main.number)
		switch {
		case c.confirmed && twice && fieldKind(f) == kindAmount && !anyFaint(c.words):
			res.FieldSources[f] = raiseTwiceConfirmed(res.FieldSources[f])
		case c.confirmed:
			res.FieldSources[f] = raiseConfirmed(res.FieldSources[f])
		}
	}
	for f, pg := range x.unread {
		if picked[f] == nil {
			res.FieldSources[f] = result.FieldSource{Method: result.MethodLabel, Confidence: 0, Page: pg,
				Issues: []string{result.IssueValueUnreadable}}
		}
	}
	x.fillLines(res, lines)
	if s, ok := res.FieldSources[result.FieldLineItems]; ok && linesConfirmed {
		if twice && !linesFaint(lines) {
			res.FieldSources[result.FieldLineItems] = raiseTwiceConfirmed(s)
		} else {
			res.FieldSources[result.FieldLineItems] = raiseConfirmed(s)
		}
	}
}

// lowOCR is the word confidence below which OCR is not believed, whatever
// else agrees. Tesseract gives correct amounts 50-60 routinely (currency
// signs, thin spaces); faint or damaged print falls well below.
const lowOCR = 0.5

// raiseConfirmed lifts an arithmetically confirmed amount to
// confirmedFloor, unless its separators are in doubt or its print was
// read with low confidence: arithmetic confirms readings, it does not
// replace them.
func raiseConfirmed(s result.FieldSource) result.FieldSource {
	if !hasAny(s.Issues, result.IssueImplausibleSeparators, result.IssueChecksumFailed, result.IssueLowOCRConfidence) && s.Confidence < confirmedFloor {
		s.Confidence = confirmedFloor
	}
	return s
}

// raiseTwiceConfirmed is raiseConfirmed for an amount two equations tie
// to the others: its low OCR confidence is dropped too (never its
// separators in doubt, never a failed checksum).
func raiseTwiceConfirmed(s result.FieldSource) result.FieldSource {
	if hasAny(s.Issues, result.IssueImplausibleSeparators, result.IssueChecksumFailed) {
		return s
	}
	s.Issues = withoutLowOCR(s.Issues)
	return raiseConfirmed(s)
}

func withoutLowOCR(issues []string) []string {
	return slices.DeleteFunc(issues, func(is string) bool { return is == result.IssueLowOCRConfidence })
}

func anyFaint(ws []word) bool {
	return slices.ContainsFunc(ws, func(w word) bool { return w.faint })
}

func linesFaint(lines []line) bool {
	return slices.ContainsFunc(lines, func(ln line) bool { return anyFaint(ln.moneyWords) })
}

// pick chooses among a field's candidates: a template's over the rest,
// strong labels over weak ones; amounts take the last occurrence (totals
// close the invoice), everything else the first, preferring the main page
// over a cover sheet.
func (x *run) pick(field string) *candidate {
	r := x.ranked(field)
	if len(r) == 0 {
		return nil
	}
	return &r[0]
}

// ranked is a field's candidates in pick's order, best first.
func (x *run) ranked(field string) []candidate {
	cs := x.cands[field]
	if len(cs) == 0 {
		return nil
	}
	rank := func(c candidate) int {
		switch {
		case c.method == result.MethodTemplate:
			return 0
		case c.method == result.MethodLabel && !c.weak:
			return 1
		case c.method == result.MethodLabel:
			return 2
		}
		return 3
	}
	amountField := fieldKind(field) == kindAmount
	sorted := slices.Clone(cs)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if amountField {
			return a.pos > b.pos
		}
		if ma, mb := x.onMain(a), x.onMain(b); ma != mb {
			return ma
		}
		return a.pos < b.pos
	})
	return sorted
}

// candidates lists, for each candidate field, the readings besides the
// one picked, best first: other letterhead cells, a footer or sender
// line, other labels' values, ids found by their shape.
func (x *run) candidates(res *Result) map[string][]result.Candidate {
	out := map[string][]result.Candidate{}
	for _, f := range result.CandidateFields() {
		seen := map[string]bool{}
		if v := *res.Fields.Ptr(f); v != nil {
			seen[textnorm.Compact(*v)] = true
		}
		list := []result.Candidate{}
		for _, c := range x.ranked(f) {
			k := textnorm.Compact(c.value)
			if seen[k] || k == "" || len(list) >= result.MaxCandidates {
				continue
			}
			seen[k] = true
			src := source(c.method, c.base, c.words, c.issues, x.main.number)
			list = append(list, result.Candidate{Value: c.value, Method: c.method, Confidence: src.Confidence, Page: src.Page})
		}
		out[f] = list
	}
	return out
}

func (x *run) onMain(c candidate) bool { return len(c.words) > 0 && c.words[0].page == x.main.number }

// dropUnbalancingShipping drops shipping read under a weak label
// ("Transport", also a running total's label) when subtotal + tax is the
// total without it and not with it.
func dropUnbalancingShipping(picked map[string]*candidate) {
	ship := picked[result.FieldShipping]
	if ship == nil || !ship.weak || ship.amt == nil {
		return
	}
	val := func(f string) (decimal.Decimal, bool) {
		c := picked[f]
		if c == nil || c.amt == nil || suspect(c.amt) {
			return decimal.Zero, false
		}
		return c.amt.value, true
	}
	sub, ok1 := val(result.FieldSubtotal)
	tax, ok2 := val(result.FieldTax)
	total, ok3 := val(result.FieldTotal)
	if ok1 && ok2 && ok3 && sub.Add(tax).Equal(total) && !sub.Add(tax).Add(ship.amt.value).Equal(total) {
		picked[result.FieldShipping] = nil
	}
}

// reverseChargeTax: an invoice that says "reverse charge" and prints no
// tax amount has a tax of zero.
func (x *run) reverseChargeTax(picked map[string]*candidate) {
	if picked[result.FieldTax] != nil {
		return
	}
	folded := textnorm.Fold(x.allText())
	for _, p := range x.lx.reverseCharge {
		if strings.Contains(folded, p) {
			z := amount{hasSep: true, frac: 2}
			picked[result.FieldTax] = &candidate{value: "0.00", method: result.MethodInferred, amt: &z}
			return
		}
	}
}

// Method reliabilities: how often a value found this way is the right
// one when the text itself is right.
func methodBase(method string, weak bool) float64 {
	switch {
	case method == result.MethodTemplate:
		return 0.97
	case method == result.MethodLabel && weak:
		return 0.85
	case method == result.MethodLabel:
		return 0.95
	case method == result.MethodTable:
		return 0.93
	}
	return 0.7
}

// source combines the method (or a candidate's own base), the weakest OCR
// word and the issues into a field source.
func source(method string, base float64, ws []word, issues []string, fallbackPage int) result.FieldSource {
	mc := minConf(ws)
	if base == 0 {
		base = methodBase(method, false)
	}
	conf := base * mc
	if mc < lowOCR {
		issues = appendOnce(issues, result.IssueLowOCRConfidence)
	}
	for _, is := range issues {
		switch is {
		case result.IssueOCRCorrected:
			conf *= 0.9
		case result.IssueAmbiguousDate:
			conf *= 0.85
		case result.IssueLineMismatch:
			conf *= 0.7
		case result.IssueImplausibleSeparators, result.IssueChecksumFailed:
			conf = min(conf, 0.3)
		}
	}
	page := fallbackPage
	if len(ws) > 0 {
		page = ws[0].page
	}
	if len(issues) > result.MaxIssuesPerField {
		issues = issues[:result.MaxIssuesPerField]
	}
	return result.FieldSource{Method: method, Confidence: math.Round(conf*1000) / 1000, Page: page, Issues: slices.Clone(issues)}
}

func (x *run) fillLines(res *Result, lines []line) {
	if len(lines) == 0 {
		return
	}
	var all, money []word
	var issues []string
	for i := range lines {
		ln := &lines[i]
		if len(res.Fields.LineItems) >= result.MaxLineItems {
			break
		}
		it := result.LineItem{Description: truncRunes(strings.Join(ln.desc, " "), result.MaxDescRunes)}
		it.Quantity = strPtr(ln.qty)
		it.Unit = strPtr(truncRunes(ln.unit, result.MaxTextRunes))
		if ln.price != nil {
			it.UnitPrice = strPtr(formatAmount(*ln.price))
		}
		it.Amount = strPtr(formatAmount(*ln.amt))
		res.Fields.LineItems = append(res.Fields.LineItems, it)
		// The numbers decide the line's confidence; a misread word of a
		// description moves no money.
		all = append(all, ln.numWords...)
		money = append(money, ln.moneyWords...)
		for _, is := range ln.issues {
			issues = appendOnce(issues, is)
		}
	}
	// Low OCR confidence is judged on the money; a quantity read poorly
	// only lowers the confidence (and quantity x price checks it).
	if minConf(money) < lowOCR {
		issues = appendOnce(issues, result.IssueLowOCRConfidence)
	}
	src := source(result.MethodTable, 0, all, issues, x.main.number)
	if minConf(money) >= lowOCR {
		src.Issues = withoutLowOCR(src.Issues)
	}
	res.FieldSources[result.FieldLineItems] = src
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func truncRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// ensureSlices makes empty lists encode as [] rather than null.
func ensureSlices(r *Result) {
	if r.HiddenText == nil {
		r.HiddenText = []result.HiddenText{}
	}
	if r.Injection == nil {
		r.Injection = []result.Injection{}
	}
	if r.Fields.LineItems == nil {
		r.Fields.LineItems = []result.LineItem{}
	}
	if r.Pages == nil {
		r.Pages = []result.PageInfo{}
	}
	for k, s := range r.FieldSources {
		if s.Issues == nil {
			s.Issues = []string{}
			r.FieldSources[k] = s
		}
	}
}

// TextPages lists the 1-based positions of the pages read from a text
// layer: the pages the driver renders for the ink check.
func TextPages(doc *extract.Document) []int {
	var out []int
	for i, p := range doc.Pages {
		if p.Method != extract.MethodOCR {
			out = append(out, i+1)
		}
	}
	return out
}
