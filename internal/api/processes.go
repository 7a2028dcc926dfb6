package api

import (
	"encoding/base64"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/pty"
	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// Background processes: start, list, describe, wait, read output, kill.
// The sandbox manager owns them (internal/sandbox/process.go); these
// handlers check the request and convert.

// pidRE is a process id as the manager makes them.
var pidRE = regexp.MustCompile(`^p-[1-9][0-9]{0,8}$`)

// Bounds on waiting in one request.
const (
	defaultProcessWait = 30 * time.Second
	maxProcessWait     = time.Hour
	maxOutputWait      = time.Minute
)

func (s *server) startProcess(w *respWriter, r *http.Request, c *call) error {
	if err := noQuery(r); err != nil {
		return err
	}
	var req wire.ProcessRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	opts, err := execOptions(&wire.ExecRequest{Cmd: req.Cmd, Argv: req.Argv, Env: req.Env, Cwd: req.Cwd,
		TimeoutSeconds: req.TimeoutSeconds, Stdin: req.Stdin, StdinBase64: req.StdinBase64, User: req.User, Pty: req.Pty})
	if err != nil {
		return err
	}
	p, err := s.be.StartProcess(r.Context(), c.tenant, c.id, sandbox.ProcessOptions{ExecOptions: opts, OpenStdin: req.StdinOpen})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, processFrom(p))
}

func (s *server) listProcesses(w *respWriter, r *http.Request, c *call) error {
	if err := noQuery(r); err != nil {
		return err
	}
	ps, err := s.be.Processes(r.Context(), c.tenant, c.id)
	if err != nil {
		return err
	}
	out := wire.ProcessList{Processes: make([]wire.Process, 0, len(ps))}
	for _, p := range ps {
		out.Processes = append(out.Processes, processFrom(p))
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *server) getProcess(w *respWriter, r *http.Request, c *call) error {
	if err := noQuery(r); err != nil {
		return err
	}
	p, err := s.be.Process(r.Context(), c.tenant, c.id, r.PathValue("pid"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, processFrom(p))
}

// waitProcess answers once the process ended, or deadline_exceeded (504)
// if it still runs after timeout_seconds (default 30, at most 3600; 0:
// do not wait).
func (s *server) waitProcess(w *respWriter, r *http.Request, c *call) error {
	if _, err := metadataQuery(r.URL.Query(), "timeout_seconds"); err != nil {
		return err
	}
	wait, err := secondsParam(r, "timeout_seconds", defaultProcessWait, maxProcessWait)
	if err != nil {
		return err
	}
	p, err := s.be.WaitProcess(r.Context(), c.tenant, c.id, r.PathValue("pid"), wait)
	if err != nil {
		return ctxErr(r.Context(), err)
	}
	return writeJSON(w, http.StatusOK, processFrom(p))
}

// processOutput reads one stream: stream=stdout|stderr (default stdout),
// offset (default 0), max_bytes (default and at most ProcessOutputKeep),
// wait_seconds (default 0, at most 60: with nothing new yet, wait that
// long for output or the process's end).
func (s *server) processOutput(w *respWriter, r *http.Request, c *call) error {
	q := r.URL.Query()
	if _, err := metadataQuery(q, "stream", "offset", "max_bytes", "wait_seconds"); err != nil {
		return err
	}
	stream := q.Get("stream")
	if stream == "" {
		stream = sandbox.StreamStdout
	}
	if stream != sandbox.StreamStdout && stream != sandbox.StreamStderr {
		return errdefs.InvalidArgument("stream %q: want stdout or stderr", stream)
	}
	offset, err := intParam(r, "offset", 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := intParam(r, "max_bytes", ProcessOutputKeep, ProcessOutputKeep)
	if err != nil {
		return err
	}
	wait, err := secondsParam(r, "wait_seconds", 0, maxOutputWait)
	if err != nil {
		return err
	}
	out, err := s.be.ReadProcessOutput(r.Context(), c.tenant, c.id, r.PathValue("pid"), stream, offset, int(limit), wait)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, wire.ProcessOutput{Stream: stream, Data: out.Data, Offset: out.Offset,
		NextOffset: out.NextOffset, Dropped: out.Dropped, EOF: out.EOF})
}

// killProcess sends signal (default KILL) to the process's whole tree and
// answers at once with the process as it is then; wait tells when it
// ended.
func (s *server) killProcess(w *respWriter, r *http.Request, c *call) error {
	if _, err := metadataQuery(r.URL.Query(), "signal"); err != nil {
		return err
	}
	sig := r.URL.Query().Get("signal")
	if _, err := sandbox.ParseSignal(sig); err != nil {
		return err
	}
	p, err := s.be.KillProcess(r.Context(), c.tenant, c.id, r.PathValue("pid"), sig)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, processFrom(p))
}

// secondsParam reads a query parameter of whole or fractional seconds in
// 0..most (def when absent).
func secondsParam(r *http.Request, name string, def, most time.Duration) (time.Duration, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > most.Seconds() {
		return 0, errdefs.InvalidArgument("%s %q: want 0..%v seconds", name, v, most.Seconds())
	}
	return time.Duration(f * float64(time.Second)), nil
}

// intParam reads a query parameter of 0..most (def when absent).
func intParam(r *http.Request, name string, def, most int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > most {
		return 0, errdefs.InvalidArgument("%s %q: want 0..%d", name, v, most)
	}
	return n, nil
}

// processStdin appends the body's bytes to a process's stdin (then closes
// it, with close) and answers with the process. A process that does not
// take them within the manager's bound is deadline_exceeded, the bytes
// still queued.
func (s *server) processStdin(w *respWriter, r *http.Request, c *call) error {
	if err := noQuery(r); err != nil {
		return err
	}
	var req wire.ProcessStdinRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	var data []byte
	switch {
	case req.Data != nil && req.DataBase64 != nil:
		return errdefs.InvalidArgument("data and data_base64 are exclusive")
	case req.Data != nil:
		data = []byte(*req.Data)
	case req.DataBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*req.DataBase64)
		if err != nil {
			return errdefs.InvalidArgument("data_base64 is not base64")
		}
		data = b
	case !req.Close:
		return errdefs.InvalidArgument("nothing to do: give data, data_base64 or close")
	}
	if len(data) > sandbox.MaxStdinWrite {
		return errdefs.InvalidArgument("%d bytes of stdin in one request: at most %d", len(data), sandbox.MaxStdinWrite)
	}
	p, err := s.be.WriteProcessStdin(r.Context(), c.tenant, c.id, r.PathValue("pid"), data, req.Close)
	if err != nil {
		return ctxErr(r.Context(), err)
	}
	return writeJSON(w, http.StatusOK, processFrom(p))
}

// resizeProcess sets a pty process's window size.
func (s *server) resizeProcess(w *respWriter, r *http.Request, c *call) error {
	if err := noQuery(r); err != nil {
		return err
	}
	var req wire.ProcessResizeRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := pty.CheckSize(req.Rows, req.Cols); err != nil {
		return errdefs.InvalidArgument("%v", err)
	}
	p, err := s.be.ResizeProcess(r.Context(), c.tenant, c.id, r.PathValue("pid"), guest.WindowSize{Rows: req.Rows, Cols: req.Cols})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, processFrom(p))
}
