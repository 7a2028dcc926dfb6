package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
)

// execOptions validates an exec request and turns it into guest options.
// The guest re-checks everything; this gives a clean 400 early.
func execOptions(req *ExecRequest) (guest.ExecOptions, error) {
	var o guest.ExecOptions
	if (req.Cmd == "") == (len(req.Argv) == 0) {
		return o, errdefs.InvalidArgument("exactly one of cmd and argv is required")
	}
	o.Shell, o.Argv, o.Cwd = req.Cmd, req.Argv, req.Cwd
	if o.Cwd != "" {
		if err := checkPath("cwd", o.Cwd); err != nil {
			return o, err
		}
	}
	if req.TimeoutSeconds < 0 || req.TimeoutSeconds > maxExecTimeout.Seconds() {
		return o, errdefs.InvalidArgument("timeout_seconds %v: want 0 (none) .. %v", req.TimeoutSeconds, maxExecTimeout.Seconds())
	}
	o.Timeout = time.Duration(req.TimeoutSeconds * float64(time.Second))
	if req.MaxOutputBytes < 0 {
		return o, errdefs.InvalidArgument("max_output_bytes must not be negative")
	}
	o.MaxOutputBytes = req.MaxOutputBytes
	keys := make([]string, 0, len(req.Env))
	for k := range req.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return o, errdefs.InvalidArgument("env: invalid variable name %q", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		o.Env = append(o.Env, k+"="+req.Env[k])
	}
	switch {
	case req.Stdin != nil && req.StdinBase64 != nil:
		return o, errdefs.InvalidArgument("stdin and stdin_base64 are exclusive")
	case req.Stdin != nil:
		o.Stdin = strings.NewReader(*req.Stdin)
	case req.StdinBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*req.StdinBase64)
		if err != nil {
			return o, errdefs.InvalidArgument("stdin_base64 is not base64")
		}
		o.Stdin = bytes.NewReader(b)
	}
	return o, nil
}

func execStatus(res guest.ExecResult) *ExecStatus {
	return &ExecStatus{
		ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut,
		StdoutTruncated: res.StdoutTruncated, StderrTruncated: res.StderrTruncated,
		StdoutBytes: res.StdoutBytes, StderrBytes: res.StderrBytes,
		DurationMS: res.Duration.Milliseconds(),
	}
}

func (s *server) exec(w *respWriter, r *http.Request, c *call) error {
	var req ExecRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	opts, err := execOptions(&req)
	if err != nil {
		return err
	}
	if opts.MaxOutputBytes > maxPlainOutput {
		return errdefs.InvalidArgument("max_output_bytes %d: at most %d here; use exec/stream for more", opts.MaxOutputBytes, maxPlainOutput)
	}
	limit := opts.MaxOutputBytes
	if limit == 0 {
		limit = defaultPlainOutput
	}
	// The agent enforces the limit; these buffers enforce it again so a
	// misbehaving guest cannot make the host hold more.
	stdout, stderr := &capBuffer{max: limit}, &capBuffer{max: limit}
	res, err := s.be.Exec(r.Context(), c.tenant, c.id, opts, stdout, stderr)
	if err != nil {
		return ctxErr(r.Context(), err)
	}
	st := execStatus(res)
	st.StdoutTruncated = st.StdoutTruncated || stdout.dropped
	st.StderrTruncated = st.StderrTruncated || stderr.dropped
	out := ExecResponse{ExecStatus: *st}
	out.Stdout, out.StdoutBase64 = textAndBase64(stdout.Bytes())
	out.Stderr, out.StderrBase64 = textAndBase64(stderr.Bytes())
	return writeJSON(w, http.StatusOK, out)
}

// textAndBase64 returns b as text, and as base64 too when the text could
// not carry it exactly.
func textAndBase64(b []byte) (string, string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), base64.StdEncoding.EncodeToString(b)
}

// capBuffer keeps the first max bytes written and drops the rest. The
// buffer is a field, not embedded, so that WriteString and ReadFrom cannot
// be promoted past the cap.
type capBuffer struct {
	buf     bytes.Buffer
	max     int64
	dropped bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	room := b.max - int64(b.buf.Len())
	if int64(len(p)) > room {
		b.dropped = true
		b.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *capBuffer) Bytes() []byte { return b.buf.Bytes() }

// execStream answers with application/x-ndjson: one event per chunk of
// output, flushed as it arrives, then one exit or error event. Headers are
// sent with the first event, so a failure before any output (unknown
// sandbox, bad request) is an ordinary JSON error with its status.
func (s *server) execStream(w *respWriter, r *http.Request, c *call) error {
	var req ExecRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	opts, err := execOptions(&req)
	if err != nil {
		return err
	}
	ew := &eventWriter{w: w, rc: http.NewResponseController(w)}
	res, err := s.be.Exec(r.Context(), c.tenant, c.id, opts,
		ew.stream(EventStdout), ew.stream(EventStderr))
	if err != nil {
		err = ctxErr(r.Context(), err)
		if !ew.begun() {
			return err
		}
		_, code := errorStatus(err)
		if werr := ew.send(StreamEvent{Type: EventError, Error: &ErrorBody{Code: code, Message: err.Error()}}); werr != nil {
			return err
		}
		s.m.Error(err)
		return nil
	}
	return ew.send(StreamEvent{Type: EventExit, ExecStatus: execStatus(res)})
}

// eventWriter writes NDJSON events. The Backend may write stdout and stderr
// from different goroutines; mu serialises whole lines.
type eventWriter struct {
	mu      sync.Mutex // guards everything below and writes to w
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func (e *eventWriter) begun() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started
}

func (e *eventWriter) send(ev StreamEvent) error {
	line, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started {
		e.started = true
		h := e.w.Header()
		h.Set("Content-Type", "application/x-ndjson")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		e.w.WriteHeader(http.StatusOK)
	}
	if _, err := e.w.Write(line); err != nil {
		return err
	}
	return e.rc.Flush()
}

// streamWriter sends each Write as one event of its type.
type streamWriter struct {
	e   *eventWriter
	typ string
}

func (e *eventWriter) stream(typ string) *streamWriter { return &streamWriter{e: e, typ: typ} }

func (s *streamWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if err := s.e.send(StreamEvent{Type: s.typ, Data: p}); err != nil {
		return 0, err
	}
	return len(p), nil
}
