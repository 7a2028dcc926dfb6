package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/jobs"
)

func newReviewCmd(g *globalFlags) *cobra.Command {
	jf := &jobFlags{}
	var playbook, outDir string
	var markdown bool
	cmd := &cobra.Command{
		Use:   "review [--playbook FILE] [--out DIR] [--json] [--concurrency N] PATH...",
		Short: "Review contract PDFs against a playbook, each in its own sandbox",
		Long: `Review contracts (PDF files, or directories of them) against a playbook.
Each document goes into a fresh legal-doc-review sandbox with egress denied
and the in-guest egress self-check passed; the document tool extracts the
text there (OCR for scanned pages), locates each playbook clause and
compares it; only the findings come back, validated, and the sandbox is
killed. Without --playbook the built-in playbook is used.

Exit status: 0 when every document was reviewed, 1 when any failed, 2 on
usage errors.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			job := &jobs.Review{Timeout: jf.timeout, OCR: jf.ocr(), MaxPages: jf.maxPages, ReportDir: outDir, Markdown: markdown}
			if playbook != "" {
				data, err := os.ReadFile(playbook)
				if err != nil {
					return usageErr("--playbook: %v", err)
				}
				if err := jobs.CheckPlaybook(playbook, data); err != nil {
					return usageErr("%v", err)
				}
				job.Playbook, job.PlaybookName = data, filepath.Base(playbook)
			}
			if outDir != "" {
				if err := os.MkdirAll(outDir, 0o700); err != nil {
					return usageErr("--out: %v", err)
				}
			}
			md, err := jf.metadata()
			if err != nil {
				return usageErr("%v", err)
			}
			job.Metadata = md
			runErr := jf.runBatch(cmd, job, args)
			if idx, err := job.WriteIndex("Contract review"); err != nil {
				return fmt.Errorf("write the report index: %w", err)
			} else if idx != "" {
				fmt.Fprintf(os.Stderr, "reports: %s\n", idx)
			}
			return runErr
		},
	}
	jf.register(cmd, g)
	cmd.Flags().StringVar(&playbook, "playbook", "", "playbook file, JSON or YAML (default: the built-in playbook)")
	cmd.Flags().StringVar(&outDir, "out", "", "write an HTML report per document and index.html for the batch here")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print each document's full report (findings and redlines) as Markdown instead of a summary line")
	return cmd
}
