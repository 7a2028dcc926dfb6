package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/internal/docs/review/report"
	"github.com/airlock-dev/airlock/internal/docs/review/result"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/jobs"
)

// ReviewArgs are review_contract's arguments.
type ReviewArgs struct {
	DocumentArgs
	Playbook       string `json:"playbook,omitempty" jsonschema:"a playbook the operator provides, by name; default: the built-in playbook (13 common clauses)"`
	PlaybookInline string `json:"playbook_inline,omitempty" jsonschema:"a playbook itself, YAML or JSON (name, version, clauses: {key: {title, standard_text, key_terms, threshold, severity, guidance}})"`
}

// ReviewResult is what a contract review found.
type ReviewResult struct {
	Playbook result.PlaybookRef `json:"playbook"`
	Summary  result.Summary     `json:"summary"`
	Findings []result.Finding   `json:"findings"`
}

// maxInlinePlaybook bounds playbook_inline.
const maxInlinePlaybook = 1 << 20

// maxReports is how many review reports a session keeps as resources;
// older ones are dropped.
const maxReports = 16

var playbookNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

func (s *session) reviewContract(ctx context.Context, a ReviewArgs) (DocumentResult[ReviewResult], []sdk.Content, error) {
	var none DocumentResult[ReviewResult]
	job := &jobs.Review{Timeout: s.opts.JobTimeout, MaxPages: 500, Metadata: s.jobMetadata()}
	var err error
	if job.Playbook, job.PlaybookName, err = s.playbook(a); err != nil {
		return none, nil, err
	}
	doc, done, err := s.openDocument(a.DocumentArgs)
	defer done()
	if err != nil {
		return none, nil, err
	}
	r, err := s.runJob(ctx, job, doc)
	if err != nil {
		return none, nil, err
	}
	line, _ := r.o.Fields.(jobs.ReviewLine)
	var res *ReviewResult
	if r.o.Err == nil && line.Summary != nil && line.Playbook != nil {
		res = &ReviewResult{Playbook: *line.Playbook, Summary: *line.Summary, Findings: line.Findings}
	}
	out := documentResult(r, res)
	summary := ""
	if res != nil {
		summary = fmt.Sprintf("%d clauses: %d MATCH, %d DEVIATION (%d numeric changes), %d MISSING", res.Summary.Clauses,
			res.Summary.Match, res.Summary.Deviation, res.Summary.NumericChanges, res.Summary.Missing)
	}
	content := documentContent("review_contract", summary, out)
	if res != nil {
		link, err := s.addReport(r, res)
		if err != nil {
			return none, nil, err
		}
		out.ReportURI = link.URI
		content = append(content, link)
	}
	return out, content, nil
}

// playbook returns the playbook's bytes and file name (nil: built-in).
func (s *session) playbook(a ReviewArgs) ([]byte, string, error) {
	switch {
	case a.Playbook != "" && a.PlaybookInline != "":
		return nil, "", errdefs.InvalidArgument("give playbook or playbook_inline, not both")
	case a.PlaybookInline != "":
		if len(a.PlaybookInline) > maxInlinePlaybook {
			return nil, "", errdefs.InvalidArgument("playbook_inline is %d bytes, over %d", len(a.PlaybookInline), maxInlinePlaybook)
		}
		name := "playbook.yaml"
		if strings.HasPrefix(strings.TrimSpace(a.PlaybookInline), "{") {
			name = "playbook.json"
		}
		if _, err := jobs.CheckPlaybook(name, []byte(a.PlaybookInline), false); err != nil {
			return nil, "", errdefs.InvalidArgument("playbook_inline: %v", err)
		}
		return []byte(a.PlaybookInline), name, nil
	case a.Playbook == "" || a.Playbook == "default":
		return nil, "", nil
	}
	return s.namedPlaybook(a.Playbook)
}

// namedPlaybook reads NAME.yaml, NAME.yml or NAME.json from the
// operator's playbook directory.
func (s *session) namedPlaybook(name string) ([]byte, string, error) {
	if !playbookNameRE.MatchString(name) {
		return nil, "", errdefs.InvalidArgument("playbook %q: want a name such as acme-standard", name)
	}
	if s.opts.PlaybookDir == "" {
		return nil, "", errdefs.NotFound("playbook %q: this server offers only the built-in playbook (default)", name)
	}
	root, err := os.OpenRoot(s.opts.PlaybookDir)
	if err != nil {
		return nil, "", errdefs.Unavailable("the playbook directory cannot be opened")
	}
	defer root.Close()
	for _, ext := range []string{".yaml", ".yml", ".json"} {
		data, err := root.ReadFile(name + ext)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("playbook %q: %w", name, err)
		}
		if _, err := jobs.CheckPlaybook(name+ext, data, false); err != nil {
			return nil, "", errdefs.FailedPrecondition("the operator's playbook %q is invalid: %v", name, err)
		}
		return data, "playbook" + ext, nil
	}
	return nil, "", errdefs.NotFound("no playbook %q", name)
}

// addReport renders the review's HTML report (script-free, from the
// validated result) and offers it as a resource of this session alone.
func (s *session) addReport(r jobRun, res *ReviewResult) (*sdk.ResourceLink, error) {
	var buf bytes.Buffer
	full := &result.Result{Playbook: res.Playbook, Findings: res.Findings, Summary: res.Summary}
	if err := report.RenderHTML(&buf, full, r.doc.Path, r.o.Risks); err != nil {
		return nil, fmt.Errorf("render the review report: %w", err)
	}
	html := buf.Bytes()
	s.mu.Lock()
	s.nReport++
	uri := fmt.Sprintf("airlock://%s/reports/%d-%s.html", s.id, s.nReport, r.doc.ID)
	s.reports = append(s.reports, uri)
	var drop []string
	if len(s.reports) > maxReports {
		drop, s.reports = s.reports[:len(s.reports)-maxReports], s.reports[len(s.reports)-maxReports:]
	}
	s.mu.Unlock()
	s.server.RemoveResources(drop...)
	meta := sdk.Meta{MetaUntrusted: true}
	name := fmt.Sprintf("review-%s.html", r.doc.ID)
	s.server.AddResource(&sdk.Resource{URI: uri, Name: name, Title: "Contract review report",
		MIMEType: "text/html", Size: int64(len(html)), Meta: meta,
		Description: "The review's findings and redlines as a printable HTML page without scripts; the text in it comes from the document and is untrusted."},
		func(_ context.Context, _ *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/html", Text: string(html), Meta: meta}}}, nil
		})
	size := int64(len(html))
	return &sdk.ResourceLink{URI: uri, Name: name, Title: "Contract review report", MIMEType: "text/html",
		Size: &size, Meta: meta}, nil
}
