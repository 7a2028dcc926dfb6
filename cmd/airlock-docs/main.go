// Command airlock-docs is the document tool baked into the document
// templates. It runs inside the job's microVM, reads one document, and
// writes one result envelope (see package docs for the contract):
//
//	airlock-docs extract --in /job/in/contract.pdf [--out /job/out/result.json]
//	airlock-docs publish --url http://dav.internal/reports/x.html --file /job/in/x.html
//	airlock-docs version
//
// Exit status: 0 when a result was written (even one saying ok=false), 2
// on usage errors, 1 when no result could be written. It is built static
// (CGO_ENABLED=0) and only ever run on the guest side.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/extract"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

// Exit statuses (the host runner relies on them).
const (
	exitResult   = 0
	exitNoResult = 1
	exitUsage    = 2
)

const (
	defaultOut     = "/job/out/result.json"
	defaultTimeout = 10 * time.Minute
	// grace is how long after the deadline a job may take to return its
	// own timeout result before the tool writes one for it.
	grace = 5 * time.Second
)

// command is one subcommand. A job command (common set) gets the common
// flags and returns the envelope to write; run returning nil means there
// is nothing to write (version prints to stdout instead).
type command struct {
	name    string
	summary string
	common  bool
	// flags registers the command's own flags, if any.
	flags func(fs *flag.FlagSet)
	run   func(ctx context.Context, inv *invocation) *docs.Envelope
	// direct, if set, replaces run for a command that writes no envelope
	// and reports by exit status (publish): it returns the status.
	direct func(ctx context.Context, inv *invocation, stderr io.Writer) int
}

// commands is the subcommand table. A new job adds one entry (and its
// file), nothing else.
func commands() []command {
	return []command{
		extractCommand(),
		reviewCommand(),
		invoiceCommand(),
		redactCommand(),
		verifyCommand(),
		publishCommand(),
		versionCommand(),
	}
}

// invocation is a parsed command line.
type invocation struct {
	in, out  string
	timeout  time.Duration
	maxPages int
	maxBytes int64
	// OCR: the limit per page (0: extract's default for this guest's
	// acceleration), the languages (see ocrLanguages) and the pages read
	// at once (0: one per CPU).
	pageTimeout time.Duration
	lang        string
	ocrWorkers  int
	dotProduct  string
	args        []string // positional arguments after the flags
	stdout      io.Writer
	started     time.Time
}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process around it, so tests can drive it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(stderr, cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitResult
	}
	cmd, ok := find(cmds, args[0])
	if !ok {
		fmt.Fprintf(stderr, "airlock-docs: unknown command %q\n", args[0])
		printUsage(stderr, cmds)
		return exitUsage
	}
	inv, err := parseFlags(cmd, args[1:], stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitResult
	}
	if err != nil {
		fmt.Fprintf(stderr, "airlock-docs %s: %v\n", cmd.name, err)
		return exitUsage
	}
	inv.stdout = stdout
	if cmd.direct != nil {
		return cmd.direct(ctx, inv, stderr)
	}
	return execute(ctx, cmd, inv, stderr)
}

func find(cmds []command, name string) (command, bool) {
	for _, c := range cmds {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func printUsage(w io.Writer, cmds []command) {
	fmt.Fprintln(w, "usage: airlock-docs <command> [flags]\n\ncommands:")
	sorted := append([]command{}, cmds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	for _, c := range sorted {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'airlock-docs <command> -h' for a command's flags.")
}

// parseFlags parses the common flags (for job commands) and the
// command's own.
func parseFlags(cmd command, args []string, stderr io.Writer) (*invocation, error) {
	fs := flag.NewFlagSet("airlock-docs "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	inv := &invocation{started: time.Now()}
	if cmd.common {
		fs.StringVar(&inv.in, "in", "", "the document to read (required)")
		fs.StringVar(&inv.out, "out", defaultOut, "where to write the result envelope")
		fs.DurationVar(&inv.timeout, "timeout", defaultTimeout, "overall deadline for the job")
		fs.IntVar(&inv.maxPages, "max-pages", 0, "refuse documents with more pages (0 = the job's default)")
		fs.Int64Var(&inv.maxBytes, "max-bytes", 0, "refuse larger input files (0 = the job's default)")
		fs.DurationVar(&inv.pageTimeout, "page-timeout", 0, "limit on the OCR of one page (0 = 2m, or 6m under CPU emulation)")
		fs.StringVar(&inv.lang, "lang", "", "OCR languages: one tesseract model (eng), several tried on every page (eng+deu), or several to choose one from by the first page (eng,deu,fra,nld); default $AIRLOCK_OCR_LANGS, else the job's")
		fs.IntVar(&inv.ocrWorkers, "ocr-workers", 0, "pages OCRed at once (0 = one per CPU)")
		fs.StringVar(&inv.dotProduct, "dotproduct", "", "tesseract's dot product: "+strings.Join(extract.DotProducts, ", ")+" (default auto: generic under CPU emulation or without AVX2/FMA; for benchmarks)")
	}
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	inv.args = fs.Args()
	if !cmd.common {
		return inv, nil
	}
	switch {
	case inv.in == "":
		return nil, errors.New("--in is required")
	case inv.out == "":
		return nil, errors.New("--out must not be empty")
	case inv.timeout <= 0:
		return nil, errors.New("--timeout must be positive")
	case inv.maxPages < 0 || inv.maxBytes < 0 || inv.pageTimeout < 0 || inv.ocrWorkers < 0:
		return nil, errors.New("--max-pages, --max-bytes, --page-timeout and --ocr-workers must not be negative")
	case inv.dotProduct != "" && !slices.Contains(extract.DotProducts, inv.dotProduct):
		return nil, fmt.Errorf("--dotproduct %q: want one of %s", inv.dotProduct, strings.Join(extract.DotProducts, ", "))
	case !validLang(inv.lang):
		return nil, fmt.Errorf("--lang %q: want tesseract model names ([a-z_]+) joined by + or ,", inv.lang)
	case len(inv.args) > 0:
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(inv.args, " "))
	}
	return inv, nil
}

// execute runs the command under the overall deadline and writes its
// envelope. If the job overruns the deadline by more than grace (stuck in
// Go code rather than in a tool, which the deadline would have killed),
// the tool writes a timeout result itself.
func execute(ctx context.Context, cmd command, inv *invocation, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if cmd.common {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, inv.timeout)
		defer cancel()
	}
	done := make(chan *docs.Envelope, 1)
	go func() { done <- runJob(ctx, cmd, inv) }()
	var env *docs.Envelope
	select {
	case env = <-done:
	case <-afterDeadline(ctx):
		env = &docs.Envelope{Error: docs.Errorf(docs.CodeTimeout, "%s did not finish within %v", cmd.name, inv.timeout)}
	}
	if env == nil {
		return exitResult
	}
	return write(cmd, inv, env, stderr)
}

// afterDeadline fires grace after ctx ends.
func afterDeadline(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		<-ctx.Done()
		time.Sleep(grace)
		close(ch)
	}()
	return ch
}

// runJob runs the command, turning a panic into an internal error result
// (the host gets a classified failure rather than no result).
func runJob(ctx context.Context, cmd command, inv *invocation) (env *docs.Envelope) {
	defer func() {
		if r := recover(); r != nil {
			env = &docs.Envelope{Error: docs.Errorf(docs.CodeInternal, "%s crashed: %v", cmd.name, r)}
		}
	}()
	env = cmd.run(ctx, inv)
	if env != nil && env.Error == nil && cmd.common {
		// What the document carries that its reader should know (scripts,
		// attachments, a polyglot), with every job's result; never acted
		// on. A check that cannot run fails the job: a missing tool is a
		// broken template, not a clean document.
		risks, err := extract.Risks(ctx, inv.in, extract.Options{MaxBytes: inv.maxBytes})
		if err != nil {
			return &docs.Envelope{Error: docs.AsError(fmt.Errorf("risk check: %w", err)), TimingsMS: env.TimingsMS}
		}
		env.Risks = risks
	}
	return env
}

func write(cmd command, inv *invocation, env *docs.Envelope, stderr io.Writer) int {
	if env.Job == "" {
		env.Job = cmd.name
	}
	env.OK = env.Error == nil
	if env.TimingsMS == nil {
		env.TimingsMS = map[string]int64{}
	}
	env.TimingsMS["total"] = time.Since(inv.started).Milliseconds()
	if err := docs.WriteEnvelope(inv.out, env); err != nil {
		fmt.Fprintf(stderr, "airlock-docs %s: %v\n", cmd.name, err)
		return exitNoResult
	}
	status := "ok"
	if env.Error != nil {
		status = env.Error.Code
	}
	fmt.Fprintf(stderr, "airlock-docs %s: %s pages=%d ocr_pages=%d in %v\n", cmd.name, status, env.Pages, env.OCRPages,
		time.Since(inv.started).Round(time.Millisecond))
	return exitResult
}
