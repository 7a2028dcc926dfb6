package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
	"github.com/airlock-dev/airlock/internal/docseval/draftcorpus"
	invcorpus "github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
	invcorpus2 "github.com/airlock-dev/airlock/internal/docseval/invoicecorpus2"
	rdcorpus "github.com/airlock-dev/airlock/internal/docseval/redactcorpus"
	"github.com/airlock-dev/airlock/internal/docseval/redactworld"
	"github.com/airlock-dev/airlock/internal/docseval/reviewcorpus"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
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
	cmd.AddCommand(newCorpusReviewCmd(), newCorpusInvoiceCmd(), newCorpusRedactCmd())
	return cmd
}

func newCorpusReviewCmd() *cobra.Command {
	var n, scans, dpi int
	var seed int64
	var drafter, split string
	cmd := &cobra.Command{
		Use:   "review DIR",
		Short: "Write contracts (text PDFs, some also as degraded scans) with their known clause statuses",
		Long: "Write contracts with their known clause statuses. --drafter project (the default) is the generator the\n" +
			"analysis was first tuned on; --drafter other is the second corpus, written apart (other wordings, headings,\n" +
			"combined sections, two columns, footnotes), from its tune or held-out half (--split).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			scan := testdocs.Scan{DPI: dpi, Skew: 0.8, Noise: 0.04, Blur: 0.6, Seed: seed}
			var paths []string
			var count int
			switch drafter {
			case "project":
				cs, err := reviewcorpus.Generate(reviewcorpus.Options{Seed: seed, Contracts: n})
				if err != nil {
					return err
				}
				count = len(cs)
				if paths, err = reviewcorpus.WritePDFs(args[0], cs, reviewcorpus.PDFOptions{Scans: scans, Scan: scan}); err != nil {
					return err
				}
			case "other":
				cs, err := draftcorpus.Generate(draftcorpus.Options{Seed: seed, Contracts: n, Split: split})
				if err != nil {
					return usageErr("%v", err)
				}
				count = len(cs)
				if paths, err = draftcorpus.WritePDFs(args[0], cs, draftcorpus.PDFOptions{Scans: scans, Scan: scan}); err != nil {
					return err
				}
			default:
				return usageErr("--drafter %q: want project or other", drafter)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d contracts (%d also as %d dpi scans): %d PDFs in %s\n",
				count, min(scans, count), dpi, len(paths), args[0])
			return nil
		},
	}
	cmd.Flags().IntVar(&n, "n", 60, "contracts")
	cmd.Flags().IntVar(&scans, "scans", 10, "how many of them are also written as scans")
	cmd.Flags().IntVar(&dpi, "dpi", 200, "scan resolution")
	cmd.Flags().Int64Var(&seed, "seed", 1, "generator seed (same seed, same corpus)")
	cmd.Flags().StringVar(&drafter, "drafter", "project", "project or other (the second corpus, written apart)")
	cmd.Flags().StringVar(&split, "split", draftcorpus.SplitHeldout, "with --drafter other: tune or heldout")
	return cmd
}

func newEvalCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Run a job over a corpus through real sandboxes and score it against the known answers",
	}
	cmd.AddCommand(newEvalReviewCmd(g), newEvalInvoiceCmd(g), newEvalRedactCmd(g))
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
	var truths []reviewcorpus.Truth
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
		t, err := reviewcorpus.ReadTruth(d.Path)
		if err != nil {
			return false, usageErr("%s: no truth beside it (write corpora with airlock corpus review): %v", d.Path, err)
		}
		if results[t.Contract] != nil {
			truths = append(truths, t)
		}
	}
	rep, err := reviewcorpus.Eval(truths, results)
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

func newCorpusInvoiceCmd() *cobra.Command {
	var n int
	var seed int64
	var drafter, split string
	cmd := &cobra.Command{
		Use:   "invoice DIR",
		Short: "Write invoices (text PDFs, scans, photos, faxes) with planted traps and their truth, plus the vendor master",
		Long: "Write invoices with planted traps and their truth. --drafter other writes the second corpus, written apart\n" +
			"(11 countries, 6 label languages, 9 layouts, an ERP-shaped vendor master), from its tune or held-out half\n" +
			"(--split); its corpus.json carries the tenant, date and limits airlock eval invoice then uses.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch drafter {
			case "project":
			case "other":
				var seeds []int64 // the split's own seeds unless --seed is given
				if cmd.Flags().Changed("seed") {
					seeds = []int64{seed}
				}
				return writeInvoiceCorpus2(cmd, args[0], split, seeds, n)
			default:
				return usageErr("--drafter %q: want project or other", drafter)
			}
			c, err := invcorpus.Generate(seed, n)
			if err != nil {
				return err
			}
			paths, err := invcorpus.WriteFiles(args[0], c)
			if err != nil {
				return err
			}
			modes := map[invcorpus.Mode]int{}
			for _, cs := range c.Cases {
				modes[cs.Render.Mode]++
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d invoices to %s (%v) and vendors.json for tenant %s\n",
				len(paths), args[0], modes, invcorpus.TenantID)
			return nil
		},
	}
	cmd.Flags().IntVar(&n, "n", 42, "invoices (with --drafter other: per seed)")
	cmd.Flags().Int64Var(&seed, "seed", 1, "generator seed (same seed, same corpus)")
	cmd.Flags().StringVar(&drafter, "drafter", "project", "project or other (the second corpus, written apart)")
	cmd.Flags().StringVar(&split, "split", string(invcorpus2.SplitHeldOut), "with --drafter other: tune or heldout")
	return cmd
}

// corpusSettings applies a corpus directory's corpus.json (the second
// invoice corpus writes one: its tenant, date and limits differ from the
// project corpus's defaults). No file: the defaults stand.
func corpusSettings(dir string, f *invoiceFlags, jf *jobFlags) error {
	b, err := os.ReadFile(filepath.Join(dir, "corpus.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var st invcorpus2.Settings
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return usageErr("%s: %v", filepath.Join(dir, "corpus.json"), err)
	}
	jf.tenant, f.asOf, f.approveLimit = st.TenantID, st.AsOf, nil
	for cur, amount := range st.Limits {
		if cur == "" {
			f.approveLimit = append(f.approveLimit, amount)
		} else {
			f.approveLimit = append(f.approveLimit, cur+"="+amount)
		}
	}
	sort.Strings(f.approveLimit)
	return nil
}

// writeInvoiceCorpus2 writes n invoices per seed of the second corpus's
// split (its own seeds, 7001-7002 tune and 9001-9002 held out, when
// seeds is nil).
func writeInvoiceCorpus2(cmd *cobra.Command, dir, split string, seeds []int64, n int) error {
	sp, err := invcorpus2.ParseSplit(split)
	if err != nil {
		return usageErr("--split: %v", err)
	}
	if seeds == nil {
		seeds = invcorpus2.Seeds(sp)
	}
	cases, err := invcorpus2.GenerateSplit(sp, seeds, n)
	if err != nil {
		return err
	}
	paths, err := invcorpus2.WriteFiles(dir, invcorpus2.CorpusSettings(sp, seeds), cases)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %d invoices (second corpus, %s half) to %s with vendors.json and corpus.json for tenant %s\n",
		len(paths), sp, dir, invcorpus2.TenantID)
	return nil
}

func newEvalInvoiceCmd(g *globalFlags) *cobra.Command {
	jf := &jobFlags{}
	cmd := &cobra.Command{
		Use:   "invoice DIR",
		Short: "Extract and judge every invoice of a corpus (airlock corpus invoice); print per-field accuracy and per-trap recall",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return evalInvoices(cmd, jf, args[0])
		},
	}
	jf.register(cmd, g)
	return cmd
}

// evalInvoices runs the corpus as one batch in corpus order (duplicates
// follow their originals), with the corpus tenant's vendor master and a
// fresh history (so a re-run does not see its own invoices as
// duplicates), and scores text-layer and OCR documents apart.
func evalInvoices(cmd *cobra.Command, jf *jobFlags, dir string) error {
	job := &jobs.Invoice{}
	ds, err := jobs.Expand([]string{dir}, job.Extensions())
	if err != nil {
		return usageErr("%v", err)
	}
	hist, err := os.MkdirTemp("", "airlock-eval-history-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(hist)
	f := &invoiceFlags{vendors: filepath.Join(dir, "vendors.json"), asOf: invcorpus.AsOf().Format("2006-01-02"),
		approveLimit: []string{fmt.Sprint(invcorpus.AutoApproveLimit)}, history: filepath.Join(hist, "history.db")}
	quiet := *jf
	quiet.tenant, quiet.json = invcorpus.TenantID, true
	if err := corpusSettings(dir, f, &quiet); err != nil {
		return err
	}
	j, closeHistory, err := f.job(&quiet)
	if err != nil {
		return err
	}
	defer closeHistory()
	cases := map[bool][]invcorpus.Case{}
	outs := map[bool][]invcorpus.Outcome{}
	per := map[bool]time.Duration{}
	var failures []string
	collect := func(d jobs.Doc, o jobs.Outcome) {
		t, err := invcorpus.ReadCaseTruth(d.Path)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: no truth: %v", d.Path, err))
			return
		}
		ocr := t.Mode.OCR()
		l := o.Fields.(jobs.InvoiceLine)
		out := invcorpus.Outcome{Decision: l.Decision}
		if l.Fields != nil {
			out.Fields = *l.Fields
		}
		for _, fl := range l.Flags {
			out.Flags = append(out.Flags, fl.Code)
		}
		if o.Err != nil {
			failures = append(failures, fmt.Sprintf("%s: %s: %s", filepath.Base(d.Path), o.Err.Code, o.Err.Message))
		}
		cases[ocr] = append(cases[ocr], invcorpus.Case{ID: t.ID, Traps: t.Traps, Truth: t.Fields, Render: invcorpus.Render{Mode: t.Mode}})
		outs[ocr] = append(outs[ocr], out)
		per[ocr] += o.Timings.Sandbox() + o.Timings.Tool
	}
	out := cmd.OutOrStdout()
	cmd.SetOut(devNull{})
	sum, err := quiet.execute(cmd, j, ds, collect)
	cmd.SetOut(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "batch: %d invoices in %s, %.1f invoices/min overall (concurrency %d); sandbox share %.0f%%\n",
		sum.Documents, sum.Elapsed.Round(time.Second), sum.DocsPerMinute(), jf.concurrency, 100*sum.SandboxShare())
	for _, ocr := range []bool{false, true} {
		name := map[bool]string{false: "text-layer PDFs", true: "scans, photos and faxes (OCR)"}[ocr]
		if len(cases[ocr]) == 0 {
			continue
		}
		s := invcorpus.Eval(name, cases[ocr], outs[ocr], func(c *invcorpus.Case) bool { return c.Render.Mode.OCR() })
		fmt.Fprintln(out, s.Table())
		mean := per[ocr] / time.Duration(len(cases[ocr]))
		fmt.Fprintf(out, "mean time per invoice %s (%.1f invoices/min per sandbox slot)\n\n", mean.Round(time.Millisecond), time.Minute.Seconds()/mean.Seconds())
	}
	for _, f := range failures {
		fmt.Fprintf(out, "  failed: %s\n", f)
	}
	if len(failures) > 0 {
		return exitError{code: exitSomeFail}
	}
	return nil
}

func newCorpusRedactCmd() *cobra.Command {
	var n int
	var seed int64
	var drafter, split string
	cmd := &cobra.Command{
		Use:   "redact DIR",
		Short: "Write text, JSON, CSV, PDF and scanned documents with span-level PII truth, and canaries.json",
		Long: "Write documents with span-level PII truth. --drafter other writes the second corpus, written apart\n" +
			"(names from many languages, international phones and addresses, other phrasings), from its dev or\n" +
			"held-out test split (--split).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var docs []rdcorpus.Doc
			switch drafter {
			case "project":
				docs = rdcorpus.Generate(seed, n)
			case "other":
				sp := redactworld.Split(split)
				if sp != redactworld.Dev && sp != redactworld.Test {
					return usageErr("--split %q: want dev or test", split)
				}
				docs = redactworld.Generate(seed, n, sp)
			default:
				return usageErr("--drafter %q: want project or other", drafter)
			}
			paths, err := rdcorpus.WriteFiles(args[0], docs)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d documents and canaries.json to %s\n", len(paths), args[0])
			return nil
		},
	}
	cmd.Flags().IntVar(&n, "n", 8, "documents per format")
	cmd.Flags().Int64Var(&seed, "seed", 1, "generator seed (same seed, same corpus)")
	cmd.Flags().StringVar(&drafter, "drafter", "project", "project or other (the second corpus, written apart)")
	cmd.Flags().StringVar(&split, "split", string(redactworld.Test), "with --drafter other: dev or test")
	return cmd
}

func newEvalRedactCmd(g *globalFlags) *cobra.Command {
	jf := &jobFlags{}
	cmd := &cobra.Command{
		Use:   "redact DIR",
		Short: "Redact and verify every document of a corpus (airlock corpus redact); print precision, recall and F2 per type",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return evalRedaction(cmd, jf, args[0])
		},
	}
	jf.register(cmd, g)
	return cmd
}

// evalRedaction redacts a corpus into a scratch directory with its
// canaries, scores the findings against the truth, and reports releases,
// holds and canary leaks, and throughput per format.
func evalRedaction(cmd *cobra.Command, jf *jobFlags, dir string) error {
	scratch, err := os.MkdirTemp("", "airlock-eval-redact-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	job := &jobs.Redact{OutDir: filepath.Join(scratch, "out"), HeldDir: filepath.Join(scratch, "held"), Timeout: jf.timeout, MaxPages: jf.maxPages}
	if err := loadRedactInputs(job, "", filepath.Join(dir, "canaries.json")); err != nil {
		return err
	}
	ds, err := jobs.Expand([]string{dir}, job.Extensions())
	if err != nil {
		return usageErr("%v", err)
	}
	var kept []jobs.Doc
	for _, d := range ds {
		if !strings.HasSuffix(d.Path, ".truth.json") && filepath.Base(d.Path) != "canaries.json" {
			kept = append(kept, d)
		}
	}
	var truths []rdcorpus.Truth
	var preds []rdcorpus.Prediction
	var failures []string
	held, released, leaks := 0, 0, 0
	perKind := map[string]time.Duration{}
	count := map[string]int{}
	collect := func(d jobs.Doc, o jobs.Outcome) {
		t, err := rdcorpus.ReadTruth(d.Path)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: no truth: %v", d.Path, err))
			return
		}
		l, _ := o.Fields.(jobs.RedactLine)
		if o.Err != nil {
			failures = append(failures, fmt.Sprintf("%s: %s: %s", filepath.Base(d.Path), o.Err.Code, o.Err.Message))
		}
		if l.Held {
			held++
			for _, r := range l.HoldReasons {
				if strings.HasPrefix(r, "canary_found") {
					leaks++
					break
				}
			}
		} else if o.Err == nil {
			released++
		}
		truths = append(truths, t)
		preds = append(preds, rdcorpus.Prediction{Findings: l.Findings})
		perKind[t.Kind()] += o.Timings.Sandbox() + o.Timings.Tool
		count[t.Kind()]++
	}
	quiet := *jf
	quiet.json = true
	out := cmd.OutOrStdout()
	cmd.SetOut(devNull{})
	sum, err := quiet.execute(cmd, job, kept, collect)
	cmd.SetOut(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "batch: %d documents in %s (%.1f documents/min, concurrency %d): %d released, %d held (%d with a canary), %d failed\n",
		sum.Documents, sum.Elapsed.Round(time.Second), sum.DocsPerMinute(), jf.concurrency, released, held, leaks, len(failures))
	rdcorpus.Score(truths, preds).Print(out)
	fmt.Fprintln(out, "\nmean time per document (redact + verify, both sandboxes):")
	for _, k := range sortedKinds(count) {
		mean := perKind[k] / time.Duration(count[k])
		fmt.Fprintf(out, "  %-10s %3d documents  %8s  (%.1f documents/min per sandbox slot)\n", k, count[k], mean.Round(time.Millisecond), time.Minute.Seconds()/mean.Seconds())
	}
	for _, f := range failures {
		fmt.Fprintf(out, "  failed: %s\n", f)
	}
	if len(failures) > 0 || leaks > 0 {
		return exitError{code: exitSomeFail}
	}
	return nil
}

func sortedKinds(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
