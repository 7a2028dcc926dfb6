package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// Sandboxes is what the runner needs of airlock. Two implementations: a
// daemon reached through the Go client (Daemon), and a sandbox manager in
// this process (Local), for batches run without a daemon.
type Sandboxes interface {
	// Create restores a sandbox with egress denied and runs the in-guest
	// egress self-check before returning: nothing of the document's goes
	// into a sandbox whose network is not proven closed.
	Create(ctx context.Context, o CreateOptions) (Sandbox, error)
}

// CreateOptions describe a job's sandbox.
type CreateOptions struct {
	Template string
	TTL      time.Duration
	Metadata map[string]string // ids only, never content: they are audited
	// Domains are the only names the sandbox may reach, through the egress
	// proxy (each an exact domain rule; a credential route's in-guest host
	// when the job calls a model). Empty: everything is denied.
	Domains []string
	// Routes are names that must be the tenant's credential routes (the
	// proxy holds their secret): the sandbox is refused, never opened to
	// them as plain domains, when one is not (errdefs.FailedPrecondition).
	Routes []string
}

// allowRule is one egress rule a job asks for.
type allowRule struct {
	name, domain string
	credential   bool // the domain must be a credential route
}

// allowRules names one rule per allowed domain, then per required route.
func allowRules(o CreateOptions) []allowRule {
	var out []allowRule
	for _, d := range o.Domains {
		out = append(out, allowRule{name: fmt.Sprintf("job-%d", len(out)+1), domain: d})
	}
	for _, d := range o.Routes {
		out = append(out, allowRule{name: fmt.Sprintf("job-%d", len(out)+1), domain: d, credential: true})
	}
	return out
}

// Sandbox is one job sandbox.
type Sandbox interface {
	ID() string
	// Write streams r into the guest file at path.
	Write(ctx context.Context, path string, r io.Reader) error
	// Exec runs argv with a guest-side timeout that kills everything it
	// started; stdout and stderr are kept up to maxOutput bytes each.
	Exec(ctx context.Context, argv []string, timeout time.Duration) (ExecResult, error)
	// Read returns the guest file at path, refusing (ResourceExhausted)
	// files larger than max bytes before any byte moves.
	Read(ctx context.Context, path string, max int64) ([]byte, error)
	// ReadTo streams the guest file at path into w, refusing files larger
	// than max bytes.
	ReadTo(ctx context.Context, path string, w io.Writer, max int64) (int64, error)
	Kill(ctx context.Context) error
}

// ExecResult is how a tool run ended.
type ExecResult struct {
	ExitCode int
	TimedOut bool
	Stderr   string // at most maxOutput bytes
}

// maxOutput bounds a tool's stdout and stderr kept by the runner: the
// tool's result travels as a file, its output is only diagnostics.
const maxOutput = 64 << 10

// Daemon runs job sandboxes through an airlock daemon.
type Daemon struct{ C *client.Client }

// Create implements Sandboxes.
func (d Daemon) Create(ctx context.Context, o CreateOptions) (Sandbox, error) {
	pol := client.DenyAll()
	for _, r := range allowRules(o) {
		pol.Allow = append(pol.Allow, client.EgressRule{Name: r.name, Domain: r.domain, Credential: r.credential})
	}
	s, err := d.C.CreateSandbox(ctx, client.CreateOptions{Template: o.Template, TTLSeconds: int(o.TTL / time.Second),
		Metadata: o.Metadata, Egress: &pol, Probe: true})
	if err != nil {
		return nil, err
	}
	return daemonSandbox{s}, nil
}

type daemonSandbox struct{ s *client.Sandbox }

func (d daemonSandbox) ID() string { return d.s.ID }

func (d daemonSandbox) Write(ctx context.Context, path string, r io.Reader) error {
	_, err := d.s.Files().Write(ctx, path, r)
	return err
}

func (d daemonSandbox) Exec(ctx context.Context, argv []string, timeout time.Duration) (ExecResult, error) {
	res, err := d.s.ExecArgv(ctx, argv, client.WithTimeout(timeout), client.WithMaxOutputBytes(maxOutput))
	if err != nil {
		return ExecResult{}, err
	}
	return ExecResult{ExitCode: res.ExitCode, TimedOut: res.TimedOut, Stderr: res.Stderr}, nil
}

func (d daemonSandbox) Read(ctx context.Context, path string, max int64) ([]byte, error) {
	var b bytes.Buffer
	_, err := d.ReadTo(ctx, path, &b, max)
	return b.Bytes(), err
}

func (d daemonSandbox) ReadTo(ctx context.Context, path string, w io.Writer, max int64) (int64, error) {
	fi, err := d.s.Files().Stat(ctx, path)
	if err != nil {
		return 0, err
	}
	if fi.Size > max {
		return 0, errdefs.ResourceExhausted("%s is %d bytes, over the %d limit", path, fi.Size, max)
	}
	rc, err := d.s.Files().Read(ctx, path)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	// The file cannot grow under us (the tool has exited), but never trust
	// the guest: stop one byte past the limit.
	n, err := io.Copy(w, io.LimitReader(rc, max+1))
	if err == nil && n > max {
		err = errdefs.ResourceExhausted("%s grew past the %d limit while it was read", path, max)
	}
	return n, err
}

func (d daemonSandbox) Kill(ctx context.Context) error {
	err := d.s.Kill(ctx)
	if client.IsNotFound(err) || errors.Is(err, client.ErrFailedPrecondition) {
		return nil // already ended (its TTL, or the daemon ended it) or gone
	}
	return err
}

// Local runs job sandboxes on a sandbox manager in this process, as
// tenant Tenant.
type Local struct {
	M      *sandbox.Manager
	Tenant string
}

// Create implements Sandboxes.
func (l Local) Create(ctx context.Context, o CreateOptions) (Sandbox, error) {
	pol := netpool.DenyAll()
	for _, r := range allowRules(o) {
		pol.Allow = append(pol.Allow, netpool.Rule{Name: r.name, Domain: r.domain, Credential: r.credential})
	}
	info, err := l.M.Create(ctx, sandbox.CreateRequest{Tenant: l.Tenant, Template: o.Template, TTL: o.TTL,
		Metadata: o.Metadata, Egress: &pol, Probe: true})
	if err != nil {
		return nil, err
	}
	return localSandbox{m: l.M, tenant: l.Tenant, id: info.ID}, nil
}

// Prewarm implements Prewarmer: it fills the manager's warm pool with
// what the batch will use, and no more.
func (l Local) Prewarm(ctx context.Context, template string, uses int) error {
	return l.M.PrewarmFor(ctx, template, uses)
}

type localSandbox struct {
	m      *sandbox.Manager
	tenant string
	id     string
}

func (s localSandbox) ID() string { return s.id }

func (s localSandbox) Write(ctx context.Context, path string, r io.Reader) error {
	_, err := s.m.WriteFile(ctx, s.tenant, s.id, path, r, 0o644)
	return err
}

func (s localSandbox) Exec(ctx context.Context, argv []string, timeout time.Duration) (ExecResult, error) {
	var stderr bytes.Buffer
	res, err := s.m.Exec(ctx, s.tenant, s.id, guest.ExecOptions{Argv: argv, Timeout: timeout, MaxOutputBytes: maxOutput},
		io.Discard, &limitedBuffer{b: &stderr, max: maxOutput})
	if err != nil {
		return ExecResult{}, err
	}
	return ExecResult{ExitCode: res.ExitCode, TimedOut: res.TimedOut, Stderr: stderr.String()}, nil
}

func (s localSandbox) Read(ctx context.Context, path string, max int64) ([]byte, error) {
	var b bytes.Buffer
	_, err := s.ReadTo(ctx, path, &b, max)
	return b.Bytes(), err
}

func (s localSandbox) ReadTo(ctx context.Context, path string, w io.Writer, max int64) (int64, error) {
	n, err := s.m.ReadFile(ctx, s.tenant, s.id, path, w, max)
	if err != nil {
		return n, fmt.Errorf("read %s: %w", path, err)
	}
	return n, nil
}

func (s localSandbox) Kill(ctx context.Context) error {
	err := s.m.Kill(ctx, s.tenant, s.id)
	if errdefs.IsNotFound(err) || errors.Is(err, errdefs.ErrFailedPrecondition) {
		return nil // already ended or gone
	}
	return err
}

// limitedBuffer keeps the first max bytes written and drops the rest.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
