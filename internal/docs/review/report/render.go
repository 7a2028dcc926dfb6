package report

import (
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// RenderHTML writes a self-contained, print-friendly HTML report of one
// document's review.
func RenderHTML(w io.Writer, r *result.Result, document string, risks []string) error {
	if err := reportTmpl.Execute(w, reportData(r, document, risks)); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	return nil
}

// IndexEntry is one document of a batch index. Href is the link to its
// report (relative; html/template neutralises javascript: and similar);
// Error is set instead of Result when the job failed.
type IndexEntry struct {
	Document string
	Href     string
	Result   *result.Result
	Error    string
}

// RenderIndex writes a self-contained HTML index of a batch of reviews.
func RenderIndex(w io.Writer, title string, entries []IndexEntry) error {
	type row struct {
		IndexEntry
		Summary result.Summary
		Worst   string
	}
	rows := make([]row, 0, len(entries))
	for _, e := range entries {
		rw := row{IndexEntry: e}
		if e.Result != nil {
			rw.Summary = result.Summarize(e.Result.Findings)
			rw.Worst = worstSeverity(e.Result)
		}
		rows = append(rows, rw)
	}
	data := struct {
		Title string
		Rows  []row
	}{title, rows}
	if err := indexTmpl.Execute(w, data); err != nil {
		return fmt.Errorf("render html index: %w", err)
	}
	return nil
}

// worstSeverity is the highest severity among findings that are not a
// MATCH ("" when everything matches).
func worstSeverity(r *result.Result) string {
	order := []string{result.SeverityLow, result.SeverityMedium, result.SeverityHigh, result.SeverityCritical}
	worst := -1
	for _, f := range r.Findings {
		if f.Status != result.StatusMatch {
			worst = max(worst, slices.Index(order, f.Severity))
		}
	}
	if worst < 0 {
		return ""
	}
	return order[worst]
}

// termRow is one key term of a finding; Change says how it changed and,
// when the playbook says which way is worse (worse_if), whether that is
// worse or better for us ("" when it did not change).
type termRow struct{ Name, Expected, Found, Change string }

type findingView struct {
	result.Finding
	Label  string
	Terms  []termRow
	Pages  string
	Anchor string // the id of the finding's card, linked from the summary
	Where  string // where the clause was found, for a person to check
}

func reportData(r *result.Result, document string, risks []string) any {
	views := make([]findingView, 0, len(r.Findings))
	for i, f := range r.Findings {
		views = append(views, findingView{Finding: f, Label: statusLabel(&f), Terms: termRows(&f), Pages: pageList(f.Pages),
			Anchor: anchor(i, f.Clause), Where: where(f.Location)})
	}
	return struct {
		Document string
		Playbook result.PlaybookRef
		Summary  result.Summary
		Findings []findingView
		Risks    []string
		Facts    *result.Result
	}{document, r.Playbook, result.Summarize(r.Findings), views, riskTexts(risks), r}
}

// riskTexts are the document's risks as sentences.
func riskTexts(risks []string) []string {
	out := make([]string, 0, len(risks))
	for _, r := range risks {
		out = append(out, docs.RiskText(r))
	}
	return out
}

func statusLabel(f *result.Finding) string {
	if f.Status == result.StatusDeviation && f.NumericChange {
		return "DEVIATION (key term changed)"
	}
	return f.Status
}

// anchor is a card's id: the clause key reduced to [a-z0-9_-] (it comes
// from the guest), numbered so two findings never share one.
func anchor(i int, clause string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(clause) {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-') && b.Len() < 64 {
			b.WriteRune(r)
		}
	}
	return fmt.Sprintf("clause-%d-%s", i+1, b.String())
}

// where says where a located clause is: "in section “X”, sentences 2-3
// of 4" or, under no heading, "sentences 12-13 of the document".
func where(l *result.Location) string {
	if l == nil || l.FirstSentence == 0 {
		return ""
	}
	span := fmt.Sprintf("sentence %d", l.FirstSentence)
	if l.LastSentence > l.FirstSentence {
		span = fmt.Sprintf("sentences %d-%d", l.FirstSentence, l.LastSentence)
	}
	if l.Section == "" {
		return span + " of the document (under no heading)"
	}
	return fmt.Sprintf("in section “%s”, %s of %d", l.Section, span, l.SectionSentences)
}

// changeText is a term change in words: "higher, worse for us".
func changeText(c result.TermChange) string {
	if c.Verdict != "" {
		return c.Change + ", " + c.Verdict + " for us"
	}
	return c.Change
}

// termRows lines up expected and found values by name, sorted, with how
// each changed.
func termRows(f *result.Finding) []termRow {
	changes := map[string]string{}
	for _, c := range f.TermChanges {
		changes[c.Name] = changeText(c)
	}
	names := map[string]bool{}
	for n := range f.ExpectedValues {
		names[n] = true
	}
	for n := range f.FoundValues {
		names[n] = true
	}
	for n := range changes {
		names[n] = true
	}
	var rows []termRow
	for _, n := range slices.Sorted(maps.Keys(names)) {
		rows = append(rows, termRow{Name: n, Expected: f.ExpectedValues[n], Found: f.FoundValues[n], Change: changes[n]})
	}
	return rows
}

func pageList(pages []int) string {
	parts := make([]string, len(pages))
	for i, p := range pages {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ", ")
}

var funcs = template.FuncMap{
	"pct":   func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
	"lower": strings.ToLower,
	"statusClass": func(f findingView) string {
		switch {
		case f.Status == result.StatusMatch:
			return "match"
		case f.Status == result.StatusMissing:
			return "missing"
		case f.NumericChange:
			return "numeric"
		}
		return "deviation"
	},
}

const css = `
body{font:14px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1b1f24;max-width:60rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.1rem;margin:0}
.meta{color:#57606a;margin:.25rem 0 1rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}
.finding{border:1px solid #d0d7de;border-radius:6px;padding:.75rem 1rem;margin:1rem 0;page-break-inside:avoid}
.badge{display:inline-block;border-radius:1rem;padding:0 .6rem;font-size:.8rem;font-weight:600;border:1px solid}
.match{color:#116329;border-color:#116329}.deviation{color:#9a6700;border-color:#9a6700}
.numeric{color:#cf222e;border-color:#cf222e}.missing{color:#57606a;border-color:#57606a}
.sev{font-size:.8rem;color:#57606a;text-transform:uppercase;margin-left:.5rem}
.redline{white-space:pre-wrap;background:#f6f8fa;padding:.5rem;border-radius:4px}
del{background:#ffebe9;color:#82071e}ins{background:#dafbe1;color:#116329;text-decoration:none;font-weight:600}
.text{white-space:pre-wrap;font-size:.9rem}
.guidance{border-left:3px solid #0969da;padding-left:.6rem;color:#24292f}
@media print{body{margin:0;max-width:none}.finding{border-color:#999}details{display:block}
del{text-decoration:line-through}ins{text-decoration:underline}a{color:inherit;text-decoration:none}}
`

var reportTmpl = template.Must(template.New("report").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Contract review: {{.Document}}</title>
<style>` + css + `</style></head><body>
<h1>Contract review: {{.Document}}</h1>
<p class="meta">Playbook {{.Playbook.Name}} {{.Playbook.Version}}: {{.Summary.Clauses}} clauses,
{{.Summary.Match}} match, {{.Summary.Deviation}} deviation ({{.Summary.NumericChanges}} with a changed key term), {{.Summary.Missing}} missing.</p>
{{if .Risks}}<div class="guidance"><strong>Before you open the original:</strong><ul>{{range .Risks}}<li>{{.}}</li>{{end}}</ul>
airlock never ran or unpacked any of it.</div>{{end}}
{{template "facts" .Facts}}
<table><tr><th>Clause</th><th>Status</th><th>Severity</th><th>Similarity</th><th>Pages</th></tr>
{{range .Findings}}<tr><td><a href="#{{.Anchor}}">{{.Title}}</a></td><td><span class="badge {{statusClass .}}">{{.Label}}</span></td><td>{{.Severity}}</td><td>{{if ne .Status "MISSING"}}{{pct .Similarity}}{{end}}</td><td>{{.Pages}}</td></tr>
{{end}}</table>
{{range .Findings}}<section class="finding" id="{{.Anchor}}">
<h2>{{.Title}} <span class="badge {{statusClass .}}">{{.Label}}</span><span class="sev">{{.Severity}}</span></h2>
{{if ne .Status "MISSING"}}<p class="meta">Found {{if eq .LocatedBy "content"}}by its text{{else}}by its heading{{end}}{{if .Heading}} under “{{.Heading}}”{{end}}{{if .Pages}}, page {{.Pages}}{{end}}; similarity {{pct .Similarity}}.{{if .Where}} Located {{.Where}}.{{end}}</p>
{{else}}<p class="meta">Not found in the document.</p>{{end}}
{{if .Terms}}<table><tr><th>Key term</th><th>Playbook</th><th>Document</th><th>Change</th></tr>
{{range .Terms}}<tr><td>{{.Name}}</td><td>{{.Expected}}</td><td>{{.Found}}</td><td>{{.Change}}</td></tr>{{end}}</table>{{end}}
{{if .Redline}}<div class="redline">{{range .Redline}}{{if eq .Op "delete"}}<del>{{.Text}}</del> {{else if eq .Op "insert"}}<ins>{{.Text}}</ins> {{else}}{{.Text}} {{end}}{{end}}</div>{{end}}
{{if .Text}}<details><summary>Text as found{{if .Truncated}} (shortened){{end}}</summary><div class="text">{{.Text}}</div></details>{{end}}
{{if .Guidance}}<p class="guidance">{{.Guidance}}</p>{{end}}
</section>
{{end}}</body></html>
`))

var indexTmpl = template.Must(template.New("index").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{{.Title}}</title>
<style>` + css + `</style></head><body>
<h1>{{.Title}}</h1>
<table><tr><th>Document</th><th>Match</th><th>Deviation</th><th>Key term changed</th><th>Missing</th><th>Worst open issue</th></tr>
{{range .Rows}}<tr><td>{{if .Href}}<a href="{{.Href}}">{{.Document}}</a>{{else}}{{.Document}}{{end}}</td>
{{if .Result}}<td>{{.Summary.Match}}</td><td>{{.Summary.Deviation}}</td><td>{{.Summary.NumericChanges}}</td><td>{{.Summary.Missing}}</td><td>{{.Worst}}</td>
{{else}}<td colspan="5">failed: {{.Error}}</td>{{end}}</tr>
{{end}}</table></body></html>
`))

// RenderMarkdown writes the review as Markdown for a terminal or a
// ticket: deleted words ~~struck~~, inserted words **bold**.
func RenderMarkdown(w io.Writer, r *result.Result, document string, risks []string) error {
	var b strings.Builder
	s := result.Summarize(r.Findings)
	fmt.Fprintf(&b, "# Contract review: %s\n\n", mdEscape(document))
	fmt.Fprintf(&b, "Playbook %s %s: %d clauses, %d match, %d deviation (%d with a changed key term), %d missing.\n",
		mdEscape(r.Playbook.Name), mdEscape(r.Playbook.Version), s.Clauses, s.Match, s.Deviation, s.NumericChanges, s.Missing)
	for _, t := range riskTexts(risks) {
		fmt.Fprintf(&b, "\n> **Risk:** %s\n", t)
	}
	writeFactsMarkdown(&b, r)
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n## %s: %s (%s)\n\n", mdEscape(f.Title), statusLabel(&f), mdEscape(f.Severity))
		if f.Status == result.StatusMissing {
			b.WriteString("Not found in the document.\n")
		} else {
			fmt.Fprintf(&b, "Found by %s", f.LocatedBy)
			if f.Heading != "" {
				fmt.Fprintf(&b, " under \"%s\"", mdEscape(f.Heading))
			}
			if len(f.Pages) > 0 {
				fmt.Fprintf(&b, ", page %s", pageList(f.Pages))
			}
			fmt.Fprintf(&b, "; similarity %.1f%%.", 100*f.Similarity)
			if w := where(f.Location); w != "" {
				fmt.Fprintf(&b, " Located %s.", mdEscape(w))
			}
			b.WriteString("\n")
		}
		if rows := termRows(&f); len(rows) > 0 {
			b.WriteString("\n| key term | playbook | document | change |\n|---|---|---|---|\n")
			for _, t := range rows {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdEscape(t.Name), mdEscape(t.Expected), mdEscape(t.Found), mdEscape(t.Change))
			}
		}
		if f.Status != result.StatusMissing && f.Status != result.StatusMatch && len(f.Redline) > 0 {
			b.WriteString("\n")
			for i, seg := range f.Redline {
				if i > 0 {
					b.WriteByte(' ')
				}
				switch seg.Op {
				case result.OpDelete:
					b.WriteString("~~" + mdEscape(seg.Text) + "~~")
				case result.OpInsert:
					b.WriteString("**" + mdEscape(seg.Text) + "**")
				default:
					b.WriteString(mdEscape(seg.Text))
				}
			}
			b.WriteString("\n")
		}
		if f.Guidance != "" {
			fmt.Fprintf(&b, "\n> %s\n", mdEscape(f.Guidance))
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("render markdown: %w", err)
	}
	return nil
}

// mdEscape makes hostile text inert in Markdown and in a terminal: no
// control characters (an ANSI escape would drive the terminal), one line,
// and Markdown's punctuation backslash-escaped.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			// dropped: ESC sequences, bidi overrides, zero-width tricks
		case strings.ContainsRune("\\`*_~[]<>|#&!{}", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
