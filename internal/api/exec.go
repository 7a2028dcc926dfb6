package api

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/pty"
)

// maxUserName bounds a guest user name (Linux's own limit is 32).
const maxUserName = 256

// execOptions validates an exec request and turns it into guest options.
// The guest re-checks everything; this gives a clean 400 early.
func execOptions(req *wire.ExecRequest) (guest.ExecOptions, error) {
	var o guest.ExecOptions
	if (req.Cmd == "") == (len(req.Argv) == 0) {
		return o, errdefs.InvalidArgument("exactly one of cmd and argv is required")
	}
	o.Shell, o.Argv, o.Cwd, o.User = req.Cmd, req.Argv, req.Cwd, req.User
	if len(o.User) > maxUserName || strings.ContainsRune(o.User, 0) {
		return o, errdefs.InvalidArgument("user: at most %d bytes, no NUL", maxUserName)
	}
	if req.Pty != nil {
		if err := pty.CheckSize(req.Pty.Rows, req.Pty.Cols); err != nil {
			return o, errdefs.InvalidArgument("pty: %v", err)
		}
		o.Pty = &guest.WindowSize{Rows: req.Pty.Rows, Cols: req.Pty.Cols}
	}
	if o.Cwd != "" {
		if err := checkPath("cwd", o.Cwd); err != nil {
			return o, err
		}
	}
	if req.TimeoutSeconds < 0 || req.TimeoutSeconds > maxExecTimeout.Seconds() {
		return o, errdefs.InvalidArgument("timeout_seconds %v: want 0 (none) .. %v", req.TimeoutSeconds, maxExecTimeout.Seconds())
	}
	o.Timeout = time.Duration(req.TimeoutSeconds * float64(time.Second))
	if req.TimeoutSeconds > 0 && o.Timeout < time.Millisecond {
		// 1e-10 would round to 0, which means "no timeout".
		return o, errdefs.InvalidArgument("timeout_seconds %v: below the 0.001 s resolution (0 means no timeout)", req.TimeoutSeconds)
	}
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

func execStatus(res guest.ExecResult) *wire.ExecStatus {
	return &wire.ExecStatus{
		ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut,
		StdoutTruncated: res.StdoutTruncated, StderrTruncated: res.StderrTruncated,
		StdoutBytes: res.StdoutBytes, StderrBytes: res.StderrBytes,
		DurationMS: res.Duration.Milliseconds(),
	}
}

func (s *server) exec(w *respWriter, r *http.Request, c *call) error {
	var req wire.ExecRequest
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
	// misbehaving guest cannot make the host hold more. They are all the
	// host holds: the answer is encoded from them as it is written, and a
	// tenant runs at most maxPlainExecs of these at once.
	release, err := s.takeExecSlot(c.tenant)
	if err != nil {
		return err
	}
	defer release()
	stdout, stderr := &capBuffer{max: limit}, &capBuffer{max: limit}
	res, err := s.be.Exec(r.Context(), c.tenant, c.id, opts, stdout, stderr)
	if err != nil {
		return ctxErr(r.Context(), err)
	}
	st := execStatus(res)
	st.StdoutTruncated = st.StdoutTruncated || stdout.dropped
	st.StderrTruncated = st.StderrTruncated || stderr.dropped
	return writeExecResponse(w, st, stdout.Bytes(), stderr.Bytes())
}

// maxPlainExecs bounds one tenant's concurrent non-streaming execs, each
// of which holds up to 2 x maxPlainOutput on the host until it answers.
const maxPlainExecs = 8

// takeExecSlot counts a plain exec against its tenant, or refuses it.
func (s *server) takeExecSlot(tenant string) (func(), error) {
	s.execMu.Lock()
	defer s.execMu.Unlock()
	if s.plainExecs[tenant] >= maxPlainExecs {
		return nil, errdefs.ResourceExhausted("%d execs of this tenant are already holding their output; wait for one, or use exec/stream", maxPlainExecs)
	}
	s.plainExecs[tenant]++
	return func() {
		s.execMu.Lock()
		defer s.execMu.Unlock()
		if s.plainExecs[tenant]--; s.plainExecs[tenant] <= 0 {
			delete(s.plainExecs, tenant)
		}
	}, nil
}

// writeExecResponse writes an ExecResponse, encoding each output from its
// buffer straight to w: no copy of it as a string and no JSON document in
// memory. Text goes as a JSON string; output that is not text (invalid
// UTF-8, or more than 1 byte in 64 a control character, which JSON would
// escape to six bytes each) goes as base64 only, with "stdout" empty.
func writeExecResponse(w http.ResponseWriter, st *wire.ExecStatus, stdout, stderr []byte) error {
	head, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 32<<10)
	bw.Write(head[:len(head)-1]) // without the closing brace
	for _, o := range []struct {
		name string
		b    []byte
	}{{"stdout", stdout}, {"stderr", stderr}} {
		if isText(o.b) {
			fmt.Fprintf(bw, `,%q:"`, o.name)
			writeJSONStringBody(bw, o.b)
			bw.WriteByte('"')
			continue
		}
		fmt.Fprintf(bw, `,%q:"",%q:"`, o.name, o.name+"_base64")
		enc := base64.NewEncoder(base64.StdEncoding, bw)
		enc.Write(o.b)
		enc.Close()
		bw.WriteByte('"')
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// isText reports whether b is valid UTF-8 with few control characters
// besides tab, newline and carriage return.
func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	ctl := 0
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			ctl++
		}
	}
	return ctl <= len(b)/64
}

// writeJSONStringBody writes valid UTF-8 b as the inside of a JSON string.
func writeJSONStringBody(w *bufio.Writer, b []byte) {
	const hex = "0123456789abcdef"
	start := 0
	for i, c := range b {
		var esc string
		switch {
		case c == '"':
			esc = `\"`
		case c == '\\':
			esc = `\\`
		case c == '\n':
			esc = `\n`
		case c == '\r':
			esc = `\r`
		case c == '\t':
			esc = `\t`
		case c < 0x20 || c == 0x7f:
			esc = `\u00` + string(hex[c>>4]) + string(hex[c&0xf])
		default:
			continue
		}
		w.Write(b[start:i])
		w.WriteString(esc)
		start = i + 1
	}
	w.Write(b[start:])
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
	var req wire.ExecRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	opts, err := execOptions(&req)
	if err != nil {
		return err
	}
	ew := &eventWriter{w: w, rc: http.NewResponseController(w)}
	res, err := s.be.Exec(r.Context(), c.tenant, c.id, opts,
		ew.stream(wire.EventStdout), ew.stream(wire.EventStderr))
	if err != nil {
		err = ctxErr(r.Context(), err)
		if !ew.begun() {
			return err
		}
		_, code := errorStatus(err)
		if werr := ew.send(wire.StreamEvent{Type: wire.EventError, Error: &wire.ErrorBody{Code: code, Message: err.Error()}}); werr != nil {
			return err
		}
		s.m.Error(err)
		return nil
	}
	return ew.send(wire.StreamEvent{Type: wire.EventExit, ExecStatus: execStatus(res)})
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

func (e *eventWriter) send(ev wire.StreamEvent) error {
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
	if err := s.e.send(wire.StreamEvent{Type: s.typ, Data: p}); err != nil {
		return 0, err
	}
	return len(p), nil
}
