package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/jobs"
	"github.com/airlock-dev/airlock/internal/jobs/conflicts"
	"github.com/airlock-dev/airlock/internal/publish"
)

func newReviewCmd(g *globalFlags) *cobra.Command {
	jf := &jobFlags{}
	var playbook, outDir string
	var markdown, strict bool
	var partiesFile, obligationsCSV, obligationsICS, asOf, publishURL string
	var dueWithin int
	cmd := &cobra.Command{
		Use:   "review [--playbook FILE [--strict]] [--out DIR] [--parties FILE] [--as-of DATE] [--obligations-csv FILE] [--obligations-ics FILE] [--publish http://ROUTE-HOST/PATH/] [--json] [--concurrency N] PATH...",
		Short: "Review contract PDFs against a playbook, each in its own sandbox",
		Long: `Review contracts (PDF files, or directories of them) against a playbook.
Each document goes into a fresh legal-doc-review sandbox with egress denied
and the in-guest egress self-check passed; the document tool extracts the
text there (OCR for scanned pages), locates each playbook clause and
compares it; only the findings come back, validated, and the sandbox is
killed. Without --playbook the built-in playbook is used.

With --publish, each document's HTML report (with its redlines) is also
PUT to a WebDAV collection, from a sandbox of its own that may reach that
one host and nothing else: the host must be a credential route of the
tenant's (the daemon's --credentials file), whose secret (e.g. HTTP Basic)
the egress proxy adds on the way out; the guest never holds it. Another
host fails the document with publish_refused. Needs --url.

A playbook may carry description and notes (at the top, per clause, per
key term); other fields it does not know are reported as warnings and
ignored, or refused with --strict.

Exit status: 0 when every document was reviewed, 1 when any failed, 2 on
usage errors (a bad playbook included), 125 when airlock could not run
the batch at all (a daemon holds the state directory, a VM cannot start);
then no report index is written.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			job := &jobs.Review{Timeout: jf.timeout, OCR: jf.ocr(), MaxPages: jf.maxPages, ReportDir: outDir, Markdown: markdown}
			if err := setPlaybook(cmd, job, playbook, strict); err != nil {
				return err
			}
			if outDir != "" {
				if err := os.MkdirAll(outDir, 0o700); err != nil {
					return usageErr("--out: %v", err)
				}
			}
			if err := setFactsFlags(job, partiesFile, asOf, dueWithin, obligationsCSV, obligationsICS); err != nil {
				return err
			}
			md, err := jf.metadata()
			if err != nil {
				return usageErr("%v", err)
			}
			job.Metadata = md
			if err := setPublish(job, publishURL, jf.url); err != nil {
				return err
			}
			runErr := jf.runBatch(cmd, job, args)
			if err := writeReviewOutputs(job, obligationsCSV, obligationsICS); err != nil {
				return err
			}
			return runErr
		},
	}
	jf.register(cmd, g)
	cmd.Flags().StringVar(&playbook, "playbook", "", "playbook file, JSON or YAML (default: the built-in playbook)")
	cmd.Flags().StringVar(&outDir, "out", "", "write an HTML report per document and index.html for the batch here")
	cmd.Flags().StringVar(&partiesFile, "parties", "", "conflicts check: CSV of kind,name[,alias...] rows (kind client or adverse); flags a contract naming an adverse party")
	cmd.Flags().StringVar(&asOf, "as-of", "", "list what falls due from this date (YYYY-MM-DD) in each line's due_soon")
	cmd.Flags().IntVar(&dueWithin, "due-within", 30, "with --as-of: the window in days")
	cmd.Flags().StringVar(&obligationsCSV, "obligations-csv", "", "write the batch's obligations and deadlines as CSV to this file")
	cmd.Flags().StringVar(&obligationsICS, "obligations-ics", "", "write the batch's dated obligations and deadlines as iCalendar (.ics) to this file")
	cmd.Flags().StringVar(&publishURL, "publish", "", "also PUT each HTML report to this WebDAV collection, http://ROUTE-HOST/PATH/, ROUTE-HOST being a credential route of the tenant (needs --url)")
	cmd.Flags().BoolVar(&strict, "strict", false, "refuse a playbook with fields airlock does not know (default: warn and ignore them)")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print each document's full report (findings and redlines) as Markdown instead of a summary line")
	return cmd
}

// setPlaybook reads the --playbook file into job, checked as the guest
// will read it: unknown fields are warnings on stderr, or errors with
// --strict.
func setPlaybook(cmd *cobra.Command, job *jobs.Review, path string, strict bool) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return usageErr("--playbook: %v", err)
	}
	warnings, err := jobs.CheckPlaybook(path, data, strict)
	if err != nil {
		return usageErr("%v", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "airlock: warning: %s\n", w)
	}
	job.Playbook, job.PlaybookName = data, filepath.Base(path)
	return nil
}

// writeReviewOutputs writes what a batch leaves besides its lines: the
// obligations tracker files and the report index (none when no document
// was tried).
func writeReviewOutputs(job *jobs.Review, csvPath, icsPath string) error {
	if job.Track {
		rows, events, err := job.WriteTracker(csvPath, icsPath, time.Now())
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "obligations: %d rows, %d calendar events\n", rows, events)
	}
	idx, err := job.WriteIndex("Contract review")
	if err != nil {
		return fmt.Errorf("write the report index: %w", err)
	}
	if idx != "" {
		fmt.Fprintf(os.Stderr, "reports: %s\n", idx)
	}
	return nil
}

// setPublish checks --publish and sets the job's publisher (same template,
// same labels as the review).
func setPublish(job *jobs.Review, raw, daemonURL string) error {
	if raw == "" {
		return nil
	}
	t, err := publish.Parse(raw)
	if err != nil {
		return usageErr("%v", err)
	}
	if daemonURL == "" {
		return usageErr("--publish needs a daemon with networking (--url): the guest reaches the server only through its egress proxy, which holds the credential")
	}
	job.Publish = &jobs.Publisher{Target: t, Template: job.Templates()[0], Metadata: job.Metadata}
	return nil
}

// setFactsFlags checks and applies the flags over the extracted facts:
// the conflicts list, the --as-of view and the obligations export.
func setFactsFlags(job *jobs.Review, partiesFile, asOf string, dueWithin int, csvPath, icsPath string) error {
	if partiesFile != "" {
		f, err := os.Open(partiesFile)
		if err != nil {
			return usageErr("--parties: %v", err)
		}
		defer f.Close()
		l, err := conflicts.Parse(f)
		if err != nil {
			return usageErr("--parties %s: %v", partiesFile, err)
		}
		job.Conflicts = l
	}
	if asOf != "" {
		t, err := time.Parse("2006-01-02", asOf)
		if err != nil {
			return usageErr("--as-of: %q is not a YYYY-MM-DD date", asOf)
		}
		if dueWithin < 0 || dueWithin > 3660 {
			return usageErr("--due-within: %d is not 0-3660 days", dueWithin)
		}
		job.AsOf, job.DueWithinDays = t, dueWithin
	}
	for _, p := range []string{csvPath, icsPath} {
		if p == "" {
			continue
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil { // fail before any sandbox, not after the batch
			return usageErr("%s: %v", p, err)
		}
		job.Track = true
	}
	return nil
}
