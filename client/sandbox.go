package client

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/wire"
)

// The wire types this client shares with the server (internal/wire, one
// definition for both sides, checked against openapi.json).
type (
	// EgressRule allows one kind of outbound traffic. Exactly one of CIDR
	// and Domain is set.
	EgressRule = wire.EgressRule
	// EgressPolicy is what a sandbox may connect to.
	EgressPolicy = wire.EgressPolicy
	// SandboxInfo is a sandbox's state as the server reports it.
	SandboxInfo = wire.Sandbox
	// Usage is what a running sandbox's VMM has used on the host.
	Usage = wire.Usage
	// ProbeResult is one egress self-check probe.
	ProbeResult = wire.ProbeResult
	// FileInfo describes a guest path.
	FileInfo = wire.FileInfo
	// ExecStatus is how a process ended, without its output.
	ExecStatus = wire.ExecStatus
)

// DenyAll allows nothing out.
func DenyAll() EgressPolicy { return EgressPolicy{Default: "deny"} }

// Sandbox is a handle on one sandbox. Its SandboxInfo is a snapshot from the
// last call that returned one (Refresh updates it).
type Sandbox struct {
	SandboxInfo
	c *Client
}

// CreateOptions describes a new sandbox.
type CreateOptions struct {
	Template   string
	TTLSeconds int               // 0 = the template's default
	Metadata   map[string]string // labels, audited and filterable; never content
	Egress     *EgressPolicy     // nil = deny everything
	// Probe runs the egress self-check before the create answers; if
	// anything gets through, the sandbox is killed and the create fails
	// (errors.Is(err, ErrEgressOpen), a kind of ErrFailedPrecondition).
	Probe bool
	// IdempotencyKey, when set, is sent as the Idempotency-Key header: a
	// cluster's API answers a retried create with the same key with the
	// sandbox the first one made instead of making another (a single
	// host ignores it). 1-128 printable ASCII characters.
	IdempotencyKey string
}

// CreateSandbox restores a new sandbox from a template.
func (c *Client) CreateSandbox(ctx context.Context, o CreateOptions) (*Sandbox, error) {
	body := map[string]any{"template": o.Template}
	if o.TTLSeconds != 0 {
		body["ttl_seconds"] = o.TTLSeconds
	}
	if len(o.Metadata) > 0 {
		body["metadata"] = o.Metadata
	}
	if o.Egress != nil {
		body["egress"] = o.Egress
	}
	if o.Probe {
		body["probe"] = true
	}
	sb := &Sandbox{c: c}
	req := request{method: "POST", path: "/v1/sandboxes", jsonBody: body}
	if o.IdempotencyKey != "" {
		req.header = http.Header{"Idempotency-Key": {o.IdempotencyKey}}
	}
	if err := c.doJSON(ctx, req, &sb.SandboxInfo); err != nil {
		return nil, err
	}
	return sb, nil
}

// Sandbox returns a handle on the sandbox id without asking the server.
func (c *Client) Sandbox(id string) *Sandbox {
	return &Sandbox{SandboxInfo: SandboxInfo{ID: id}, c: c}
}

// GetSandbox fetches a sandbox's state.
func (c *Client) GetSandbox(ctx context.Context, id string) (*Sandbox, error) {
	sb := c.Sandbox(id)
	if err := sb.Refresh(ctx); err != nil {
		return nil, err
	}
	return sb, nil
}

// ConnectSandbox returns a handle on a sandbox of the caller's that is
// running, resuming it first if it is paused: E2B's Sandbox.connect. One
// that has ended is ErrFailedPrecondition.
func (c *Client) ConnectSandbox(ctx context.Context, id string) (*Sandbox, error) {
	sb, err := c.GetSandbox(ctx, id)
	if err != nil {
		return nil, err
	}
	switch sb.State {
	case "running":
		return sb, nil
	case "paused":
		if err := sb.Resume(ctx); err != nil {
			return nil, err
		}
		return sb, nil
	}
	return nil, fmt.Errorf("airlock: sandbox %s is %s: %w", id, sb.State, ErrFailedPrecondition)
}

// ListOption tunes ListSandboxes.
type ListOption func(url.Values)

// IncludeEnded lists killed, expired and failed sandboxes too.
func IncludeEnded() ListOption { return func(q url.Values) { q.Set("state", "all") } }

// ListSandboxes lists the caller's running sandboxes whose metadata
// contains every pair of metadata (nil = all).
func (c *Client) ListSandboxes(ctx context.Context, metadata map[string]string, opts ...ListOption) ([]*Sandbox, error) {
	q := metadataQuery(metadata)
	for _, o := range opts {
		o(q)
	}
	var out struct {
		Sandboxes []SandboxInfo `json:"sandboxes"`
	}
	if err := c.doJSON(ctx, request{method: "GET", path: "/v1/sandboxes", query: q}, &out); err != nil {
		return nil, err
	}
	return c.handles(out.Sandboxes), nil
}

func (c *Client) handles(infos []SandboxInfo) []*Sandbox {
	out := make([]*Sandbox, len(infos))
	for i, in := range infos {
		out[i] = &Sandbox{SandboxInfo: in, c: c}
	}
	return out
}

func (s *Sandbox) path(suffix string) string { return "/v1/sandboxes/" + url.PathEscape(s.ID) + suffix }

// Refresh re-reads the sandbox's state.
func (s *Sandbox) Refresh(ctx context.Context) error {
	var in SandboxInfo
	if err := s.c.doJSON(ctx, request{method: "GET", path: s.path("")}, &in); err != nil {
		return err
	}
	s.SandboxInfo = in
	return nil
}

// Kill destroys the sandbox: its VM, memory and files stop existing.
func (s *Sandbox) Kill(ctx context.Context) error {
	return s.c.doJSON(ctx, request{method: "DELETE", path: s.path("")}, nil)
}

// Fork makes count (1..16) copy-on-write copies of the running sandbox;
// the parent keeps running.
func (s *Sandbox) Fork(ctx context.Context, count int) ([]*Sandbox, error) {
	var out struct {
		Sandboxes []SandboxInfo `json:"sandboxes"`
	}
	err := s.c.doJSON(ctx, request{method: "POST", path: s.path("/fork"), jsonBody: map[string]int{"count": count}}, &out)
	if err != nil {
		return nil, err
	}
	return s.c.handles(out.Sandboxes), nil
}

// SetEgress replaces the sandbox's egress policy.
func (s *Sandbox) SetEgress(ctx context.Context, p EgressPolicy) error {
	var in SandboxInfo
	if err := s.c.doJSON(ctx, request{method: "PUT", path: s.path("/egress"), jsonBody: p}, &in); err != nil {
		return err
	}
	s.SandboxInfo = in
	return nil
}

// SetTTL moves the sandbox's deadline to ttl from now (longer or shorter),
// within the daemon's maximum lifetime counted from its creation
// (ErrInvalidArgument past it; ErrFailedPrecondition once it has ended).
// Whole seconds; at least one.
func (s *Sandbox) SetTTL(ctx context.Context, ttl time.Duration) error {
	var in SandboxInfo
	body := map[string]int64{"ttl_seconds": int64(ttl / time.Second)}
	if err := s.c.doJSON(ctx, request{method: "PUT", path: s.path("/ttl"), jsonBody: body}, &in); err != nil {
		return err
	}
	s.SandboxInfo = in
	return nil
}

// Pause saves the running sandbox to the host's disk and ends its VMM:
// it keeps its id and its TTL keeps counting, and calls into it fail
// with ErrFailedPrecondition until Resume. A sandbox with background
// processes running cannot be paused (ErrFailedPrecondition).
func (s *Sandbox) Pause(ctx context.Context) error {
	return s.lifecycle(ctx, "/pause")
}

// Resume restores a paused sandbox under the same id, with a fresh
// clock, entropy and identity pushed and its egress policy in force
// (ErrResourceExhausted when the server runs its maximum of sandboxes).
func (s *Sandbox) Resume(ctx context.Context) error {
	return s.lifecycle(ctx, "/resume")
}

func (s *Sandbox) lifecycle(ctx context.Context, suffix string) error {
	var in SandboxInfo
	if err := s.c.doJSON(ctx, request{method: "POST", path: s.path(suffix)}, &in); err != nil {
		return err
	}
	s.SandboxInfo = in
	return nil
}

// Probe runs the egress self-check inside the sandbox: TCP to the
// gateway, the host, a public address and cloud metadata, and DNS for a
// name no policy allows. It returns the results when every probe was
// blocked; otherwise an error that matches ErrEgressOpen (and
// ErrFailedPrecondition) and names the probes that got through.
func (s *Sandbox) Probe(ctx context.Context) ([]ProbeResult, error) {
	var out struct {
		Probes []ProbeResult `json:"probes"`
	}
	if err := s.c.doJSON(ctx, request{method: "POST", path: s.path("/probe")}, &out); err != nil {
		return nil, err
	}
	return out.Probes, nil
}

// ExecRequest describes one process to run.
type ExecRequest struct {
	Cmd            string            // run with /bin/sh -c; exactly one of Cmd and Argv
	Argv           []string          // run directly
	Env            map[string]string // added to the default environment
	Cwd            string            // absolute; "" = /
	Timeout        time.Duration     // kill the process tree after this; 0 = none
	Stdin          []byte            // nil = /dev/null
	MaxOutputBytes int64             // per stream; 0 = server default
	// User runs the command as this guest user, unable to become root
	// again; "" = root. An unknown user is ErrInvalidArgument.
	User string
	// Pty runs the command on a terminal of this size: output arrives
	// merged on stdout, and Stdin's end is the terminal's EOF.
	Pty *WindowSize
}

// WindowSize is a terminal's size in characters (1..1000 each).
type WindowSize = wire.WindowSize

// ExecOption tunes Exec and ExecArgv.
type ExecOption func(*ExecRequest)

// WithTimeout kills the process (and all it started) after d.
func WithTimeout(d time.Duration) ExecOption { return func(r *ExecRequest) { r.Timeout = d } }

// WithEnv adds environment variables.
func WithEnv(env map[string]string) ExecOption { return func(r *ExecRequest) { r.Env = env } }

// WithCwd sets the working directory.
func WithCwd(dir string) ExecOption { return func(r *ExecRequest) { r.Cwd = dir } }

// WithStdin feeds b to the process's standard input.
func WithStdin(b []byte) ExecOption { return func(r *ExecRequest) { r.Stdin = b } }

// WithUser runs the command as a guest user (see ExecRequest.User).
func WithUser(name string) ExecOption { return func(r *ExecRequest) { r.User = name } }

// WithPty runs the command on a terminal of rows x cols.
func WithPty(rows, cols uint32) ExecOption {
	return func(r *ExecRequest) { r.Pty = &WindowSize{Rows: rows, Cols: cols} }
}

// WithMaxOutputBytes caps each output stream; the excess is dropped and
// flagged as truncated.
func WithMaxOutputBytes(n int64) ExecOption { return func(r *ExecRequest) { r.MaxOutputBytes = n } }

// ExecResult is how a process ended and what it printed.
type ExecResult struct {
	ExecStatus
	// Stdout and Stderr are the exact bytes (as Go strings), also when
	// they are not UTF-8. Empty from ExecStream, which delivers them to
	// its writers instead.
	Stdout string `json:"-"`
	Stderr string `json:"-"`
}

// Duration is how long the process ran.
func (r *ExecResult) Duration() time.Duration { return time.Duration(r.DurationMS) * time.Millisecond }

func (r ExecRequest) wire() map[string]any {
	m := map[string]any{}
	if r.Cmd != "" {
		m["cmd"] = r.Cmd
	}
	if len(r.Argv) > 0 {
		m["argv"] = r.Argv
	}
	if len(r.Env) > 0 {
		m["env"] = r.Env
	}
	if r.Cwd != "" {
		m["cwd"] = r.Cwd
	}
	if r.Timeout > 0 {
		m["timeout_seconds"] = r.Timeout.Seconds()
	}
	if r.Stdin != nil {
		if utf8.Valid(r.Stdin) {
			m["stdin"] = string(r.Stdin)
		} else {
			m["stdin_base64"] = base64.StdEncoding.EncodeToString(r.Stdin)
		}
	}
	if r.MaxOutputBytes > 0 {
		m["max_output_bytes"] = r.MaxOutputBytes
	}
	if r.User != "" {
		m["user"] = r.User
	}
	if r.Pty != nil {
		m["pty"] = r.Pty
	}
	return m
}

// Exec runs cmd with /bin/sh -c and waits for it. A non-zero exit code is
// not an error: check ExitCode and TimedOut.
func (s *Sandbox) Exec(ctx context.Context, cmd string, opts ...ExecOption) (*ExecResult, error) {
	req := ExecRequest{Cmd: cmd}
	for _, o := range opts {
		o(&req)
	}
	return s.ExecRequest(ctx, req)
}

// ExecArgv runs argv directly (no shell) and waits for it.
func (s *Sandbox) ExecArgv(ctx context.Context, argv []string, opts ...ExecOption) (*ExecResult, error) {
	req := ExecRequest{Argv: argv}
	for _, o := range opts {
		o(&req)
	}
	return s.ExecRequest(ctx, req)
}

// ExecRequest runs req and waits for it, holding its output in memory
// (server cap: 16 MiB per stream); use ExecStream for more.
func (s *Sandbox) ExecRequest(ctx context.Context, req ExecRequest) (*ExecResult, error) {
	var out struct {
		ExecResult
		Stdout       string `json:"stdout"`
		Stderr       string `json:"stderr"`
		StdoutBase64 string `json:"stdout_base64"`
		StderrBase64 string `json:"stderr_base64"`
	}
	if err := s.c.doJSON(ctx, request{method: "POST", path: s.path("/exec"), jsonBody: req.wire()}, &out); err != nil {
		return nil, err
	}
	res := out.ExecResult
	res.Stdout, res.Stderr = out.Stdout, out.Stderr
	if out.StdoutBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(out.StdoutBase64)
		if err != nil {
			return nil, fmt.Errorf("airlock: exec: bad stdout_base64: %w", err)
		}
		res.Stdout = string(b)
	}
	if out.StderrBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(out.StderrBase64)
		if err != nil {
			return nil, fmt.Errorf("airlock: exec: bad stderr_base64: %w", err)
		}
		res.Stderr = string(b)
	}
	return &res, nil
}

// ExecStream runs req and copies its output to stdout and stderr (either
// may be nil to discard) as it arrives. The result's Stdout and Stderr are
// empty.
func (s *Sandbox) ExecStream(ctx context.Context, req ExecRequest, stdout, stderr io.Writer) (*ExecResult, error) {
	res, err := s.c.do(ctx, request{method: "POST", path: s.path("/exec/stream"), jsonBody: req.wire()})
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(res.Body, 64<<10))
	for {
		var ev struct {
			Type string `json:"type"`
			Data []byte `json:"data"`
			ExecResult
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("airlock: exec stream ended without an exit status: %w", ErrUnavailable)
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("airlock: exec stream: %w", ctx.Err())
			}
			return nil, fmt.Errorf("airlock: exec stream: %w: %w", ErrUnavailable, err)
		}
		var w io.Writer
		switch ev.Type {
		case "stdout":
			w = stdout
		case "stderr":
			w = stderr
		case "exit":
			r := ev.ExecResult
			return &r, nil
		case "error":
			if ev.Error == nil {
				return nil, &Error{Status: 200, Code: "internal", Message: "error event without error"}
			}
			return nil, &Error{Status: 200, Code: ev.Error.Code, Message: ev.Error.Message}
		default:
			continue // a newer server's event type
		}
		if w != nil {
			if _, err := w.Write(ev.Data); err != nil {
				return nil, fmt.Errorf("airlock: exec stream: deliver %s: %w", ev.Type, err)
			}
		}
	}
}

// statSeeker is an *os.File, whose remaining size can be declared.
type statSeeker interface {
	Stat() (fs.FileInfo, error)
	io.Seeker
}

// Files returns the sandbox's file operations.
func (s *Sandbox) Files() *Files { return &Files{s: s} }

// Files moves files in and out of a sandbox. Paths are absolute and clean.
type Files struct{ s *Sandbox }

// WriteOption tunes Write.
type WriteOption func(url.Values)

// WithMode sets the new file's permission bits (default 0644).
func WithMode(mode uint32) WriteOption {
	return func(q url.Values) { q.Set("mode", fmt.Sprintf("%04o", mode&0o7777)) }
}

// Write streams r into the file at path, creating missing parent
// directories, and returns the bytes written. When r is a *bytes.Reader,
// *bytes.Buffer, *strings.Reader or has a Stat method (an *os.File) its
// size is declared up front, so an oversized upload is refused at once.
func (f *Files) Write(ctx context.Context, path string, r io.Reader, opts ...WriteOption) (int64, error) {
	q := url.Values{"path": {path}}
	for _, o := range opts {
		o(q)
	}
	r, length := declaredLength(r)
	var out struct {
		Bytes int64 `json:"bytes"`
	}
	err := f.s.c.doJSON(ctx, request{method: "PUT", path: f.s.path("/files"), query: q, body: r,
		ctype: "application/octet-stream", length: length}, &out)
	return out.Bytes, err
}

// Read opens the file at path for streaming. The caller must Close it. A
// transfer that breaks midway makes Read return an error, never a short
// file with io.EOF.
func (f *Files) Read(ctx context.Context, path string) (io.ReadCloser, error) {
	res, err := f.s.c.do(ctx, request{method: "GET", path: f.s.path("/files"), query: url.Values{"path": {path}}})
	if err != nil {
		return nil, err
	}
	return res.Body, nil
}

// ReadAll reads the whole file at path.
func (f *Files) ReadAll(ctx context.Context, path string) ([]byte, error) {
	rc, err := f.Read(ctx, path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("airlock: read %s: %w: %w", path, ErrUnavailable, err)
	}
	return b, nil
}

// Stat describes the path.
func (f *Files) Stat(ctx context.Context, path string) (*FileInfo, error) {
	var fi FileInfo
	err := f.s.c.doJSON(ctx, request{method: "GET", path: f.s.path("/files/stat"), query: url.Values{"path": {path}}}, &fi)
	if err != nil {
		return nil, err
	}
	return &fi, nil
}

// List describes the entries of a directory.
func (f *Files) List(ctx context.Context, path string) ([]FileInfo, error) {
	var out struct {
		Entries []FileInfo `json:"entries"`
	}
	err := f.s.c.doJSON(ctx, request{method: "GET", path: f.s.path("/files/list"), query: url.Values{"path": {path}}}, &out)
	return out.Entries, err
}

// Remove removes a file or an empty directory.
func (f *Files) Remove(ctx context.Context, path string) error {
	return f.s.c.doJSON(ctx, request{method: "DELETE", path: f.s.path("/files"), query: url.Values{"path": {path}}}, nil)
}

// RemoveAll removes path and everything under it.
func (f *Files) RemoveAll(ctx context.Context, path string) error {
	return f.s.c.doJSON(ctx, request{method: "DELETE", path: f.s.path("/files"),
		query: url.Values{"path": {path}, "recursive": {"true"}}}, nil)
}

// Mkdir creates a directory and its missing parents.
func (f *Files) Mkdir(ctx context.Context, path string) error {
	return f.s.c.doJSON(ctx, request{method: "POST", path: f.s.path("/files/mkdir"), query: url.Values{"path": {path}}}, nil)
}
