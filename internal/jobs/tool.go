package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Guest paths every job uses.
const (
	guestInDir  = "/job/in"
	guestResult = "/job/out/result.json"
	// ToolPath is where the document templates carry airlock-docs.
	ToolPath = "/usr/local/bin/airlock-docs"
)

// Host-side error codes, beside the guest's (docs.Code*).
const (
	// CodeSandbox: the platform could not give the document a sandbox, or
	// lost it (the message names airlock's own error code).
	CodeSandbox = "sandbox_failed"
	// CodeEgressOpen: the sandbox's egress self-check found a way out, so
	// the document never went in.
	CodeEgressOpen = "egress_open"
	// CodeInvalidResult: what came back from the guest failed validation.
	// Treat as suspicious: a hostile document may have subverted the tool.
	CodeInvalidResult = "invalid_result"
)

// Input is a file written under /job/in beside the document (a playbook,
// a policy, vendor data).
type Input struct {
	Name string // base name in the guest
	Data []byte
}

// Output is a file fetched from the guest after the tool succeeded.
type Output struct {
	GuestPath string
	Dst       io.Writer
	Max       int64
}

// ToolRun is one run of the document tool in a fresh sandbox.
type ToolRun struct {
	Template string
	Job      string // the airlock-docs subcommand
	Doc      Doc
	Inputs   []Input
	Args     []string      // the job's own flags, after the common ones
	OCR      OCROptions    // how scanned pages are read
	Timeout  time.Duration // the tool's deadline; the sandbox's TTL and the exec bound add a margin
	MaxPages int
	// MaxResult bounds the result JSON (default docs.MaxEnvelopeBytes).
	MaxResult int
	Outputs   []Output
	Metadata  map[string]string
	Domains   []string // see CreateOptions.Domains
}

// OCROptions are how the guest reads scanned pages; zero fields leave
// the guest's defaults (which depend on its acceleration).
type OCROptions struct {
	// PageTimeout bounds the OCR of one page (airlock-docs
	// --page-timeout); 0: 2 min, or 6 min under CPU emulation.
	PageTimeout time.Duration
	// Lang is tesseract models: "eng", "eng+deu" (every page with
	// both) or "eng,deu,fra" (one chosen by the first page); "": the
	// job's default.
	Lang string
}

// args are the airlock-docs flags for o.
func (o OCROptions) args() []string {
	var a []string
	if o.PageTimeout > 0 {
		a = append(a, "--page-timeout", o.PageTimeout.String())
	}
	if o.Lang != "" {
		a = append(a, "--lang", o.Lang)
	}
	return a
}

// Timings are the phases of a document's trip through a sandbox.
type Timings struct {
	Create   time.Duration // restore, identity push, egress self-check
	Upload   time.Duration // document and inputs into the guest
	Tool     time.Duration // the tool, end to end
	Download time.Duration // result and outputs back
	Destroy  time.Duration // the sandbox killed
}

// Add accumulates t2 into t (a job that uses two sandboxes).
func (t *Timings) Add(t2 Timings) {
	t.Create += t2.Create
	t.Upload += t2.Upload
	t.Tool += t2.Tool
	t.Download += t2.Download
	t.Destroy += t2.Destroy
}

// MS is the NDJSON form.
func (t Timings) MS() map[string]int64 {
	return map[string]int64{"create": t.Create.Milliseconds(), "upload": t.Upload.Milliseconds(),
		"tool": t.Tool.Milliseconds(), "download": t.Download.Milliseconds(), "destroy": t.Destroy.Milliseconds()}
}

// Sandbox is the platform's share: everything but the tool.
func (t Timings) Sandbox() time.Duration { return t.Create + t.Upload + t.Download + t.Destroy }

// LineError is the error of an NDJSON line.
type LineError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *LineError) Error() string { return e.Code + ": " + e.Message }

func lineErr(code, format string, a ...any) *LineError {
	return &LineError{Code: code, Message: fmt.Sprintf(format, a...)}
}

// toolExecMargin is how long past the tool's own deadline the exec may
// run: the tool writes a timeout result of its own 5 s after its deadline.
const toolExecMargin = 30 * time.Second

// RunTool runs the document tool on one document in a sandbox of its own
// and returns the validated envelope. The sandbox is killed before it
// returns, whatever happened. A failure is a *LineError.
func RunTool(ctx context.Context, sbxs Sandboxes, r ToolRun) (*docs.Envelope, Timings, *LineError) {
	var t Timings
	began := time.Now()
	sbx, err := sbxs.Create(ctx, CreateOptions{Template: r.Template, Metadata: r.Metadata, Domains: r.Domains,
		TTL: r.Timeout + toolExecMargin + 5*time.Minute})
	t.Create = time.Since(began)
	if err != nil {
		if errors.Is(err, errdefs.ErrEgressOpen) {
			return nil, t, lineErr(CodeEgressOpen, "the sandbox's egress self-check failed; the document was not sent: %v", err)
		}
		return nil, t, lineErr(CodeSandbox, "create a %s sandbox: %s: %v", r.Template, errdefs.Code(err), err)
	}
	defer func() {
		began := time.Now()
		// The sandbox goes even if the batch was cancelled.
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		sbx.Kill(kctx)
		cancel()
		t.Destroy = time.Since(began)
	}()
	env, lerr := runInSandbox(ctx, sbx, r, &t)
	return env, t, lerr
}

func runInSandbox(ctx context.Context, sbx Sandbox, r ToolRun, t *Timings) (*docs.Envelope, *LineError) {
	began := time.Now()
	docPath, lerr := upload(ctx, sbx, r)
	t.Upload = time.Since(began)
	if lerr != nil {
		return nil, lerr
	}
	began = time.Now()
	argv := append([]string{ToolPath, r.Job, "--in", docPath, "--out", guestResult,
		"--timeout", r.Timeout.String(), "--max-pages", strconv.Itoa(r.MaxPages)}, r.OCR.args()...)
	argv = append(argv, r.Args...)
	res, err := sbx.Exec(ctx, argv, r.Timeout+toolExecMargin)
	t.Tool = time.Since(began)
	switch {
	case err != nil:
		return nil, lineErr(CodeSandbox, "run the tool: %s: %v", errdefs.Code(err), err)
	case res.TimedOut:
		return nil, lineErr(docs.CodeTimeout, "the tool ran past %s and was killed", r.Timeout+toolExecMargin)
	case res.ExitCode != 0:
		return nil, lineErr(docs.CodeInternal, "the tool failed without a result (exit %d): %s", res.ExitCode, lastLine(res.Stderr))
	}
	began = time.Now()
	defer func() { t.Download = time.Since(began) }()
	max := r.MaxResult
	if max <= 0 {
		max = docs.MaxEnvelopeBytes
	}
	raw, err := sbx.Read(ctx, guestResult, int64(max))
	if err != nil {
		if errdefs.Class(err) == errdefs.ErrResourceExhausted {
			return nil, lineErr(CodeInvalidResult, "the result is larger than %d bytes", max)
		}
		return nil, lineErr(CodeSandbox, "read the result: %s: %v", errdefs.Code(err), err)
	}
	env, err := docs.DecodeEnvelope(raw, r.Job, max)
	if err != nil {
		return nil, lineErr(CodeInvalidResult, "%v", err)
	}
	if env.OK {
		for _, o := range r.Outputs {
			if _, err := sbx.ReadTo(ctx, o.GuestPath, o.Dst, o.Max); err != nil {
				return env, lineErr(CodeSandbox, "fetch the output: %s: %v", errdefs.Code(err), err)
			}
		}
	}
	return env, nil
}

// upload writes the inputs and then the document; it returns the
// document's guest path.
func upload(ctx context.Context, sbx Sandbox, r ToolRun) (string, *LineError) {
	for _, in := range r.Inputs {
		p := guestInDir + "/" + in.Name
		if err := sbx.Write(ctx, p, strings.NewReader(string(in.Data))); err != nil {
			return "", lineErr(CodeSandbox, "upload %s: %s: %v", in.Name, errdefs.Code(err), err)
		}
	}
	f, err := r.Doc.open()
	if err != nil {
		return "", lineErr(docs.CodeUnreadable, "open the document: %v", err)
	}
	defer f.Close()
	p := guestInDir + "/" + GuestName(r.Doc.Path)
	if err := sbx.Write(ctx, p, f); err != nil {
		return "", lineErr(CodeSandbox, "upload the document: %s: %v", errdefs.Code(err), err)
	}
	return p, nil
}

var extRE = regexp.MustCompile(`^\.[a-z0-9]{1,5}$`)

// GuestName is the document's name inside the guest: "document" plus its
// extension if that is short and plain (the tool sniffs content anyway;
// the extension only tells text formats apart). The host's file name,
// which may itself be sensitive, never enters the guest.
func GuestName(hostPath string) string {
	ext := strings.ToLower(filepath.Ext(hostPath))
	if !extRE.MatchString(ext) {
		ext = ""
	}
	return "document" + ext
}

// lastLine is the last non-empty line of s, bounded, for an error message.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "..."
	}
	if l == "" {
		return "no message"
	}
	return l
}

// asLineErr classifies an error that is not already a *LineError.
func asLineErr(err error) *LineError {
	var le *LineError
	if errors.As(err, &le) {
		return le
	}
	return lineErr(docs.CodeInternal, "%v", err)
}
