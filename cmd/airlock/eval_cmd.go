package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/docs/review/corpus"
	"github.com/airlock-dev/airlock/internal/docs/review/result"
	"github.com/airlock-dev/airlock/internal/docs/testdocs"
	"github.com/airlock-dev/airlock/internal/jobs"
)

// The corpus commands write the project's own synthetic documents with
// known answers; the eval commands run a job over such a directory
// through real sandboxes and score it. Both only ever write documents on
// the host; reading them happens in the guest like any other job.

func newCorpusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "corpus",
		Short: "Write synthetic documents with known answers, for airlock eval",
	}
	cmd.AddCommand(newCorpusReviewCmd())
	return cmd
}

func newCorpusReviewCmd() *cobra.Command {
	var n, scans, dpi int
	var seed int64
	cmd := &cobra.Command{
		Use:   "review DIR",
		Short: "Write contracts (text PDFs, some also as degraded scans) with their known clause statuses",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := corpus.Generate(corpus.Options{Seed: seed, Contracts: n})
			if err != nil {
				return err
			}
			scan := testdocs.Scan{DPI: dpi, Skew: 0.8, Noise: 0.04, Blur: 0.6, Seed: seed}
			paths, err := corpus.WritePDFs(args[0], cs, corpus.PDFOptions{Scans: scans, Scan: scan})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d contracts (%d also as %d dpi scans): %d PDFs in %s\n",
				len(cs), min(scans, len(cs)), dpi, len(paths), args[0])
			return nil
		},
	}
	cmd.Flags().IntVar(&n, "n", 60, "contracts")
	cmd.Flags().IntVar(&scans, "scans", 10, "how many of them are also written as scans")
	cmd.Flags().IntVar(&dpi, "dpi", 200, "scan resolution")
	cmd.Flags().Int64Var(&seed, "seed", 1, "generator seed (same seed, same corpus)")
	return cmd
}

func newEvalCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Run a job over a corpus through real sandboxes and score it against the known answers",
	}
	cmd.AddCommand(newEvalReviewCmd(g))
	return cmd
}

func newEvalReviewCmd(g *globalFlags) *cobra.Command {
	jf := &jobFlags{}
	cmd := &cobra.Command{
		Use:   "review DIR",
		Short: "Review every contract of a corpus (airlock corpus review) and print accuracy per status",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ds, err := jobs.Expand(args, []string{".pdf"})
			if err != nil {
				return usageErr("%v", err)
			}
			groups := map[string][]jobs.Doc{}
			for _, d := range ds {
				kind := "text"
				if strings.HasSuffix(strings.TrimSuffix(d.Path, ".pdf"), "-scan") {
					kind = "scan"
				}
				groups[kind] = append(groups[kind], d)
			}
			failed := false
			for _, kind := range []string{"text", "scan"} {
				if len(groups[kind]) == 0 {
					continue
				}
				ok, err := evalReviewGroup(cmd, jf, kind, groups[kind])
				if err != nil {
					return err
				}
				failed = failed || !ok
			}
			if failed {
				return exitError{code: exitSomeFail}
			}
			return nil
		},
	}
	jf.register(cmd, g)
	return cmd
}

// evalReviewGroup reviews one kind of document (text PDFs or scans) as a
// batch, so its throughput is measured on its own, and scores it.
func evalReviewGroup(cmd *cobra.Command, jf *jobFlags, kind string, ds []jobs.Doc) (bool, error) {
	for i := range ds {
		ds[i].Index = i
	}
	results := map[string]*result.Result{}
	var truths []corpus.Truth
	var failures []string
	collect := func(d jobs.Doc, o jobs.Outcome) {
		name := strings.TrimSuffix(filepath.Base(d.Path), ".pdf")
		if o.Err != nil {
			failures = append(failures, fmt.Sprintf("%s: %s: %s", name, o.Err.Code, o.Err.Message))
			return
		}
		l := o.Fields.(jobs.ReviewLine)
		results[name] = &result.Result{Findings: l.Findings, Summary: *l.Summary, Playbook: *l.Playbook}
	}
	job := &jobs.Review{Timeout: jf.timeout, MaxPages: jf.maxPages}
	quiet := *jf
	quiet.json = true // per-document lines are noise here; the score is the output
	out := cmd.OutOrStdout()
	cmd.SetOut(devNull{})
	sum, err := quiet.execute(cmd, job, ds, collect)
	cmd.SetOut(out)
	if err != nil {
		return false, err
	}
	for _, d := range ds {
		t, err := corpus.ReadTruth(d.Path)
		if err != nil {
			return false, usageErr("%s: no truth beside it (write corpora with airlock corpus review): %v", d.Path, err)
		}
		if results[t.Contract] != nil {
			truths = append(truths, t)
		}
	}
	rep, err := corpus.Eval(truths, results)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(out, "== %s PDFs: %d documents, %d reviewed, %d failed; %.1f documents/min; sandbox share %.0f%% (create+upload+download+destroy over total)\n",
		kind, len(ds), len(results), len(failures), sum.DocsPerMinute(), 100*sum.SandboxShare())
	fmt.Fprintln(out, rep.Format(10))
	for _, f := range failures {
		fmt.Fprintf(out, "  failed: %s\n", f)
	}
	return len(failures) == 0, nil
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }
