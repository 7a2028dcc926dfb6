package report

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// The contract's facts in the reports: parties, key dates, obligations
// and the defined terms with a problem. Every string is hostile and goes
// through html/template or mdEscape like the findings.
func init() {
	template.Must(reportTmpl.New("facts").Parse(`{{if or .Parties .Obligations .KeyDates.EffectiveDate .KeyDates.ExpirationDate}}<section class="finding"><h2>Parties, dates and obligations</h2>
{{if .Parties}}<table><tr><th>Party</th><th>Role</th><th>Called</th><th>Address</th><th>Signatory</th></tr>
{{range .Parties}}<tr><td>{{.Name}}</td><td>{{.Role}}</td><td>{{.ShortName}}</td><td>{{.Address}}</td><td>{{.Signatory}}</td></tr>{{end}}</table>{{end}}
<p class="meta">Effective {{or .KeyDates.EffectiveDate "unknown"}}; expires {{or .KeyDates.ExpirationDate "unknown"}}.{{if .KeyDates.Renewal}} Renewal: {{.KeyDates.Renewal}}{{end}}</p>
{{if .KeyDates.NoticeDeadlines}}<ul>{{range .KeyDates.NoticeDeadlines}}<li>Notice of {{.Event}} ({{.Notice}}) by {{or .Date "a date the contract does not settle"}}</li>{{end}}</ul>{{end}}
{{if .Obligations}}<table><tr><th>Who</th><th>Must</th><th>By</th><th>Due</th><th>Page</th></tr>
{{range .Obligations}}<tr><td>{{.Party}}</td><td>{{.Action}}</td><td>{{.Deadline}}</td><td>{{.DueDate}}</td><td>{{if .Page}}{{.Page}}{{end}}</td></tr>{{end}}</table>{{end}}
{{range .DefinedTerms}}{{if .Problems}}<p class="guidance">Defined term “{{.Term}}”: {{range $i, $p := .Problems}}{{if $i}}, {{end}}{{$p}}{{end}}</p>{{end}}{{end}}
</section>{{end}}`))
}

func writeFactsMarkdown(b *strings.Builder, r *result.Result) {
	if len(r.Parties) == 0 && len(r.Obligations) == 0 && r.KeyDates.EffectiveDate == "" && r.KeyDates.ExpirationDate == "" {
		return
	}
	b.WriteString("\n## Parties, dates and obligations\n\n")
	for _, p := range r.Parties {
		fmt.Fprintf(b, "- %s", mdEscape(p.Name))
		if p.Role != "" {
			fmt.Fprintf(b, " (%s)", mdEscape(p.Role))
		}
		if p.Signatory != "" {
			fmt.Fprintf(b, ", signed by %s", mdEscape(p.Signatory))
		}
		b.WriteString("\n")
	}
	unknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	fmt.Fprintf(b, "\nEffective %s; expires %s.\n", unknown(r.KeyDates.EffectiveDate), unknown(r.KeyDates.ExpirationDate))
	for _, n := range r.KeyDates.NoticeDeadlines {
		fmt.Fprintf(b, "- Notice of %s (%s) by %s\n", mdEscape(n.Event), mdEscape(n.Notice), unknown(n.Date))
	}
	if len(r.Obligations) > 0 {
		b.WriteString("\n| who | must | by | due | page |\n|---|---|---|---|---|\n")
		for _, o := range r.Obligations {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %d |\n", mdEscape(o.Party), mdEscape(o.Action), mdEscape(o.Deadline), o.DueDate, o.Page)
		}
	}
	for _, t := range r.DefinedTerms {
		if len(t.Problems) > 0 {
			fmt.Fprintf(b, "\n> Defined term \"%s\": %s\n", mdEscape(t.Term), mdEscape(strings.Join(t.Problems, ", ")))
		}
	}
}
