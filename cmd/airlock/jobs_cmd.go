package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/daemon"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/jobs"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// Exit codes of the document job commands beside 0 (every document
// done).
const (
	exitSomeFail  = 1
	exitUsageCode = 2
)

// usageErr is a usage mistake: exit 2, the message on stderr.
func usageErr(format string, a ...any) error {
	fmt.Fprintf(os.Stderr, "airlock: "+format+"\n", a...)
	return exitError{code: exitUsageCode}
}

// jobFlags are what every document job command shares.
type jobFlags struct {
	host        hostFlags
	url         string
	apiKey      string
	json        bool
	concurrency int
	tenant      string
	meta        []string
	timeout     time.Duration
	pageTimeout time.Duration
	lang        string
	maxPages    int
	maxBytes    int64
	// pagesLimit is the job's default for --max-pages (set before register).
	pagesLimit int
}

func (f *jobFlags) register(cmd *cobra.Command, g *globalFlags) {
	f.host.g = g
	f.host.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", os.Getenv("AIRLOCK_URL"), "run through this daemon (unix:///path.sock or http://host:port; env AIRLOCK_URL, with AIRLOCK_API_KEY); unset: run sandboxes in this process")
	fl.StringVar(&f.apiKey, "api-key", "", "API key for --url (env AIRLOCK_API_KEY, preferred: flags are visible in ps)")
	fl.BoolVar(&f.json, "json", false, "print one JSON line per document on stdout (the summary goes to stderr)")
	fl.IntVar(&f.concurrency, "concurrency", 2, "documents in flight at once, each in its own sandbox")
	fl.StringVar(&f.tenant, "tenant", "local", "tenant the sandboxes belong to when run in this process (a daemon takes it from the API key)")
	fl.StringSliceVar(&f.meta, "meta", nil, "k=v metadata on every sandbox and audit record, e.g. --meta matter=M-17 (repeatable; ids only, never content)")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Minute, "time limit of the tool on one document (each scanned page also has --page-timeout)")
	fl.DurationVar(&f.pageTimeout, "page-timeout", 0, "time limit of the OCR of one scanned page (0: 2m, or 6m where the host emulates the guest's CPU)")
	fl.StringVar(&f.lang, "lang", "", "OCR languages (tesseract models): eng, eng+deu (both on every page), or eng,deu,fra (one chosen by the first page); default: the job's (invoices: eng,deu,fra,nld)")
	if f.pagesLimit == 0 {
		f.pagesLimit = 500
	}
	fl.IntVar(&f.maxPages, "max-pages", f.pagesLimit, "refuse documents with more pages")
	fl.Int64Var(&f.maxBytes, "max-bytes", 256<<20, "refuse larger documents before any sandbox is made")
}

// ocr is the OCR options the flags give.
func (f *jobFlags) ocr() jobs.OCROptions {
	return jobs.OCROptions{PageTimeout: f.pageTimeout, Lang: f.lang}
}

// metadata parses --meta.
func (f *jobFlags) metadata() (map[string]string, error) {
	md := map[string]string{}
	for _, kv := range f.meta {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--meta %q: want key=value", kv)
		}
		md[k] = v
	}
	return md, nil
}

// sandboxes connects to a daemon (--url / AIRLOCK_URL) or starts a sandbox
// manager in this process over the state directory's store, so the batch
// is audited either way. The returned func releases what it made.
func (f *jobFlags) sandboxes(ctx context.Context) (jobs.Sandboxes, func(), error) {
	if f.url != "" {
		key := f.apiKey
		if key == "" {
			key = os.Getenv("AIRLOCK_API_KEY")
		}
		if key == "" {
			return nil, nil, errdefs.InvalidArgument("--url needs an API key: set AIRLOCK_API_KEY")
		}
		c, err := client.New(f.url, key, client.WithUserAgent("airlock-cli/"+version))
		if err != nil {
			return nil, nil, err
		}
		return jobs.Daemon{C: c}, func() {}, nil
	}
	return f.localSandboxes(ctx)
}

func (f *jobFlags) localSandboxes(ctx context.Context) (jobs.Sandboxes, func(), error) {
	logger := slog.New(slog.DiscardHandler)
	if f.host.verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	// Like a daemon, a batch in this process owns the state and run
	// directories while it runs.
	d, err := daemon.Open(ctx, daemon.Options{StateDir: f.host.stateDir, Host: f.host.hostConfig(), Exclusive: true,
		LockHint: "to use that daemon, set AIRLOCK_URL and AIRLOCK_API_KEY", Log: logger,
		Manager: sandbox.Config{WarmPool: 2*f.concurrency + 1, MaxSandboxes: 4*max(1, f.concurrency) + 4}})
	if err != nil {
		return nil, nil, err
	}
	return jobs.Local{M: d.Manager, Tenant: f.tenant}, func() { _ = d.Close(context.WithoutCancel(ctx)) }, nil
}

// runBatch runs job over the paths and turns the outcome into the exit
// code: 0 when every document succeeded, 1 when any failed, 2 for usage.
func (f *jobFlags) runBatch(cmd *cobra.Command, job jobs.Job, paths []string) error {
	if len(paths) == 0 {
		return usageErr("%s: no documents given", cmd.Name())
	}
	ds, err := jobs.Expand(paths, job.Extensions())
	if err != nil {
		return usageErr("%v", err)
	}
	if len(ds) == 0 {
		return usageErr("%s: no documents found in %s", cmd.Name(), strings.Join(paths, " "))
	}
	sum, err := f.execute(cmd, job, ds, nil)
	if err != nil {
		return err
	}
	if sum.Failed > 0 {
		return exitError{code: exitSomeFail}
	}
	return nil
}

// execute runs one batch: NDJSON or human lines on stdout, a progress line
// on a terminal's stderr, the summary on stdout (stderr with --json).
func (f *jobFlags) execute(cmd *cobra.Command, job jobs.Job, ds []jobs.Doc, collect func(jobs.Doc, jobs.Outcome)) (jobs.Summary, error) {
	if f.concurrency < 1 || f.concurrency > 64 {
		return jobs.Summary{}, usageErr("--concurrency %d: must be 1..64", f.concurrency)
	}
	ctx := cmd.Context()
	sbxs, release, err := f.sandboxes(ctx)
	if err != nil {
		return jobs.Summary{}, err
	}
	defer release()
	b := &jobs.Batch{Job: job, Sandboxes: sbxs, Concurrency: f.concurrency, MaxBytes: f.maxBytes, Collect: collect}
	if f.json {
		b.JSON = cmd.OutOrStdout()
	} else {
		b.Human = cmd.OutOrStdout()
	}
	if term.IsTerminal(int(os.Stderr.Fd())) {
		b.Progress = os.Stderr
	}
	sum, err := b.Run(ctx, ds)
	if err != nil {
		return sum, err
	}
	if f.json {
		// The summary still reaches a person watching, off stdout.
		jobs.PrintSummary(os.Stderr, job.Name(), sum)
	}
	return sum, nil
}
