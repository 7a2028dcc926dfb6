package jobs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/review/report"
	"github.com/airlock-dev/airlock/internal/docs/review/result"
	"github.com/airlock-dev/airlock/internal/jobs/conflicts"
	"github.com/airlock-dev/airlock/internal/jobs/tracker"
)

// ReviewTemplate is the template contract review runs in.
const ReviewTemplate = "legal-doc-review"

// Review reviews contracts against a playbook, one sandbox per contract.
// The playbook is the operator's own configuration: it is checked on the
// host before the batch starts (so a bad one is a usage error naming its
// file, line and field) and parsed again by the tool in the guest.
type Review struct {
	Playbook     []byte // the playbook file's bytes ("" = the built-in playbook)
	PlaybookName string // its base name, for the guest ("playbook.yaml" / ".json")
	Template     string
	Timeout      time.Duration
	OCR          OCROptions // how scanned pages are read
	MaxPages     int
	Metadata     map[string]string
	// ReportDir, if set, receives an HTML report per document (named by
	// the document's file name and id: see ReportName) and index.html for
	// the batch.
	ReportDir string
	// Markdown renders each document's full report (findings, redlines)
	// as Markdown in human output, instead of one summary line.
	Markdown bool
	// Publish, if set, also puts each document's HTML report (with its
	// redlines), named by ReportName, on the publish target from a sandbox
	// of its own (see Publisher).
	Publish *Publisher

	// Facts views (review_facts.go): the conflicts check, the --as-of
	// view and the obligations export.
	Conflicts     *conflicts.List // nil: no check
	AsOf          time.Time       // zero: no due_soon view
	DueWithinDays int
	Track         bool // collect obligations and deadlines for WriteTracker

	mu      sync.Mutex
	index   []report.IndexEntry // guarded by mu; in input order once Finalize ran
	tracked []tracker.Item      // guarded by mu; in input order
}

// ReviewLine is the job's part of an NDJSON line.
type ReviewLine struct {
	Playbook *result.PlaybookRef `json:"playbook,omitempty"`
	Summary  *result.Summary     `json:"summary,omitempty"`
	Report   string              `json:"report,omitempty"`
	Findings []result.Finding    `json:"findings"`
	// The contract's facts (issue 34), validated with the findings.
	Parties      []result.Party       `json:"parties"`
	KeyDates     result.KeyDates      `json:"key_dates"`
	DefinedTerms []result.DefinedTerm `json:"defined_terms"`
	Obligations  []result.Obligation  `json:"obligations"`
	// DueSoon is the --as-of view: what falls due within --due-within days.
	DueSoon []DueItem `json:"due_soon,omitempty"`
	// Conflicts are the parties found on the --parties list.
	Conflicts []conflicts.Hit `json:"conflicts,omitempty"`
	// Published is where --publish put the report.
	Published *Published `json:"published,omitempty"`
}

// CheckPlaybook validates a playbook file on the host. Fields it does not
// know are warnings (naming file, line and field), errors when strict:
// playbooks exported from other systems carry fields of their own.
func CheckPlaybook(path string, data []byte, strict bool) (warnings []string, err error) {
	_, warnings, err = playbook.Parse(path, data, playbook.ParseOptions{Strict: strict})
	return warnings, err
}

func (r *Review) Name() string         { return "review" }
func (r *Review) Extensions() []string { return []string{".pdf"} }

// Process implements Job.
func (r *Review) Process(ctx context.Context, sbxs Sandboxes, doc Doc) Outcome {
	run := ToolRun{Template: r.template(), Job: "review", Doc: doc, Timeout: r.Timeout, MaxPages: r.MaxPages, OCR: r.OCR,
		MaxResult: result.MaxResultBytes + 64<<10, Metadata: docMetadata(r.Metadata, "review", doc)}
	if len(r.Playbook) > 0 {
		name := "playbook" + strings.ToLower(filepath.Ext(r.PlaybookName))
		run.Inputs = []Input{{Name: name, Data: r.Playbook}}
		run.Args = []string{"--playbook", guestInDir + "/" + name}
	}
	env, t, lerr := RunTool(ctx, sbxs, run)
	o := Outcome{Timings: t, Fields: ReviewLine{Findings: []result.Finding{}}}
	if env != nil {
		o.Pages, o.OCRPages, o.Risks, o.OCRLang, o.PageMS = env.Pages, env.OCRPages, env.Risks, env.OCRLang, env.PageMS
	}
	if lerr != nil {
		o.Err = lerr
		return o
	}
	if env.Error != nil {
		o.Err = &LineError{Code: env.Error.Code, Message: env.Error.Message}
		return o
	}
	res, err := result.Decode(env.Result)
	if err != nil {
		o.Err = lineErr(CodeInvalidResult, "%v", err)
		return o
	}
	line := ReviewLine{Playbook: &res.Playbook, Summary: &res.Summary, Findings: res.Findings}
	r.addFacts(&line, res)
	if r.ReportDir != "" {
		line.Report, err = r.writeReport(doc, res, env.Risks)
		if err != nil {
			o.Err = lineErr(docs.CodeInternal, "write the report: %v", err)
			return o
		}
	}
	if r.Publish != nil {
		var b bytes.Buffer
		if err := report.RenderHTML(&b, res, filepath.Base(doc.Path), env.Risks); err != nil {
			o.Err = lineErr(docs.CodeInternal, "render the report: %v", err)
			return o
		}
		pub, lerr := r.Publish.Publish(ctx, sbxs, doc, ReportName(doc), b.Bytes())
		if lerr != nil {
			o.Err = lerr
			return o
		}
		line.Published = &pub
	}
	o.Fields = line
	o.Tally = map[string]int{"clauses " + result.StatusMatch: res.Summary.Match,
		"clauses " + result.StatusDeviation: res.Summary.Deviation, "clauses " + result.StatusMissing: res.Summary.Missing,
		"numeric changes": res.Summary.NumericChanges}
	if r.Conflicts != nil {
		o.Tally["adverse parties"] = adverse(line.Conflicts)
	}
	return o
}

// ReportName is the file name of a document's report: its file name (the
// person asked for reports of these files, in a directory of their
// choosing) reduced to letters, digits, '-', '_' and '.', then the first
// eight digits of its id, so documents of the same name in different
// directories do not overwrite each other's report.
func ReportName(doc Doc) string {
	base := strings.TrimSuffix(filepath.Base(doc.Path), filepath.Ext(doc.Path))
	var b strings.Builder
	dash := false
	for _, c := range base {
		ok := c < 0x80 && (unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' || c == '.')
		switch {
		case ok && b.Len() < 60:
			b.WriteRune(c)
			dash = false
		case !ok && !dash && b.Len() > 0 && b.Len() < 60:
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.Trim(b.String(), "-.")
	if name == "" {
		name = "contract"
	}
	id := doc.ID
	if len(id) > 8 {
		id = id[:8]
	}
	return name + "-" + id + ".html"
}

// writeReport renders the validated result into ReportDir.
func (r *Review) writeReport(doc Doc, res *result.Result, risks []string) (string, error) {
	p := filepath.Join(r.ReportDir, ReportName(doc))
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	if err := report.RenderHTML(f, res, filepath.Base(doc.Path), risks); err != nil {
		f.Close()
		return "", err
	}
	return p, f.Close()
}

// Finalize implements Job: it collects the batch index.
func (r *Review) Finalize(_ context.Context, doc Doc, o *Outcome) {
	r.track(doc, o)
	if r.ReportDir == "" {
		return
	}
	e := report.IndexEntry{Document: filepath.Base(doc.Path)}
	if o.Err != nil {
		e.Error = o.Err.Code + ": " + o.Err.Message
	} else if l, ok := o.Fields.(ReviewLine); ok {
		e.Href = filepath.Base(l.Report)
		e.Result = &result.Result{Findings: l.Findings, Summary: *l.Summary, Playbook: *l.Playbook}
	}
	r.mu.Lock()
	r.index = append(r.index, e)
	r.mu.Unlock()
}

// WriteIndex writes the batch's index.html into ReportDir. A batch that
// never ran (refused before any document was tried: a daemon holds the
// state directory, say) writes none, and WriteIndex returns "".
func (r *Review) WriteIndex(title string) (string, error) {
	r.mu.Lock()
	tried := len(r.index)
	r.mu.Unlock()
	if r.ReportDir == "" || tried == 0 {
		return "", nil
	}
	p := filepath.Join(r.ReportDir, "index.html")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	entries := append([]report.IndexEntry(nil), r.index...)
	r.mu.Unlock()
	if err := report.RenderIndex(f, title, entries); err != nil {
		f.Close()
		return "", err
	}
	return p, f.Close()
}

// Human implements Job.
func (r *Review) Human(doc Doc, o Outcome) string {
	if o.Err != nil {
		return fmt.Sprintf("%s  FAILED  %s: %s", doc.Path, o.Err.Code, o.Err.Message)
	}
	l := o.Fields.(ReviewLine)
	var b strings.Builder
	if r.Markdown {
		res := &result.Result{Findings: l.Findings, Summary: *l.Summary, Playbook: *l.Playbook,
			Parties: l.Parties, KeyDates: l.KeyDates, DefinedTerms: l.DefinedTerms, Obligations: l.Obligations}
		if err := report.RenderMarkdown(&b, res, filepath.Base(doc.Path), o.Risks); err == nil {
			return b.String()
		}
		b.Reset()
	}
	fmt.Fprintf(&b, "%s  %d pages (%d OCR)  %d clauses: %d MATCH, %d DEVIATION (%d numeric), %d MISSING",
		doc.Path, o.Pages, o.OCRPages, l.Summary.Clauses, l.Summary.Match, l.Summary.Deviation,
		l.Summary.NumericChanges, l.Summary.Missing)
	b.WriteString(risksNote(o.Risks))
	b.WriteString(factsNote(l))
	for _, f := range l.Findings {
		if f.Status == result.StatusMatch {
			continue
		}
		mark := f.Status
		if f.NumericChange {
			mark += " (numeric)"
		}
		fmt.Fprintf(&b, "\n    %-28s %-20s %s", f.Clause, mark, f.Heading)
	}
	return b.String()
}

// Templates implements Job.
func (r *Review) Templates() []string { return []string{r.template()} }

func (r *Review) template() string {
	if r.Template != "" {
		return r.Template
	}
	return ReviewTemplate
}

// docMetadata is what a document's sandbox (and so every audit record about
// it) is labelled with: the batch's own labels, the job and the document's
// id. Never its name or content.
func docMetadata(base map[string]string, job string, doc Doc) map[string]string {
	md := make(map[string]string, len(base)+2)
	for k, v := range base {
		md[k] = v
	}
	md["job"] = job
	md["doc_sha256"] = doc.ID
	return md
}
