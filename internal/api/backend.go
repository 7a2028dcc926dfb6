package api

import (
	"context"
	"io"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// Backend is what the API needs from the sandbox manager. Every method that
// takes a tenant must treat a sandbox of another tenant exactly like a
// missing one (errdefs.NotFound), and errors must carry an errdefs class so
// the API can map them to a status code.
type Backend interface {
	Create(ctx context.Context, req sandbox.CreateRequest) (sandbox.Info, error)
	Get(ctx context.Context, tenant, id string) (sandbox.Info, error)
	List(ctx context.Context, f sandbox.ListFilter) ([]sandbox.Info, error)
	Kill(ctx context.Context, tenant, id string) error
	Fork(ctx context.Context, tenant, id string, count int) ([]sandbox.Info, error)
	// Exec runs a process and streams its output into stdout and stderr as
	// it arrives. Writes to them may fail when the client has gone away;
	// Exec must then stop and return that error (wrapped with %w).
	Exec(ctx context.Context, tenant, id string, opts guest.ExecOptions, stdout, stderr io.Writer) (guest.ExecResult, error)
	// WriteFile creates missing parents. Errors reading r must be returned
	// wrapped with %w: the API recognises *http.MaxBytesError in the chain to
	// answer 413.
	WriteFile(ctx context.Context, tenant, id, path string, r io.Reader, mode uint32) (int64, error)
	// ReadFile must not write to w before it knows the file can be read
	// (exists, is a regular file, is within maxBytes), so that such failures
	// reach the client as a JSON error instead of a truncated body.
	ReadFile(ctx context.Context, tenant, id, path string, w io.Writer, maxBytes int64) (int64, error)
	// WriteArchive relays the tar stream r to the sandbox, whose guest
	// unpacks it into directory dir (made if missing), writing at most
	// maxBytes of files. Errors reading r are returned wrapped with %w, as
	// for WriteFile.
	WriteArchive(ctx context.Context, tenant, id, dir string, r io.Reader, maxBytes int64) (guest.ArchiveStats, error)
	// ReadArchive relays the guest's tar stream of path, at most maxBytes
	// (0: any), and like ReadFile writes nothing to w before it knows path
	// can be packed.
	ReadArchive(ctx context.Context, tenant, id, path string, w io.Writer, maxBytes int64) (int64, error)
	StatFile(ctx context.Context, tenant, id, path string) (sandbox.FileInfo, error)
	ListFiles(ctx context.Context, tenant, id, path string) ([]sandbox.FileInfo, error)
	RemoveFile(ctx context.Context, tenant, id, path string, recursive bool) error
	MakeDir(ctx context.Context, tenant, id, path string) error
	SetEgress(ctx context.Context, tenant, id string, p netpool.Policy) (sandbox.Info, error)
	// SetTTL moves a running sandbox's deadline to now + ttl, within the
	// daemon's maximum lifetime.
	SetTTL(ctx context.Context, tenant, id string, ttl time.Duration) (sandbox.Info, error)
	// Pause saves a running sandbox to disk and ends its VMM (its TTL
	// counts on); Resume restores it under the same id. Each is
	// FailedPrecondition from the wrong state.
	Pause(ctx context.Context, tenant, id string) (sandbox.Info, error)
	Resume(ctx context.Context, tenant, id string) (sandbox.Info, error)
	// Probe runs the egress self-check; FailedPrecondition names the probes
	// that got through.
	Probe(ctx context.Context, tenant, id string) ([]sandbox.ProbeResult, error)
	Templates(ctx context.Context) ([]sandbox.TemplateInfo, error)

	// Background processes (see internal/sandbox/process.go): each runs
	// on past the request that started it; pid is "p-N" of its sandbox,
	// and an unknown one is NotFound.
	StartProcess(ctx context.Context, tenant, id string, opts sandbox.ProcessOptions) (sandbox.ProcessInfo, error)
	Processes(ctx context.Context, tenant, id string) ([]sandbox.ProcessInfo, error)
	Process(ctx context.Context, tenant, id, pid string) (sandbox.ProcessInfo, error)
	// WaitProcess is DeadlineExceeded for a process still running after
	// timeout.
	WaitProcess(ctx context.Context, tenant, id, pid string, timeout time.Duration) (sandbox.ProcessInfo, error)
	ReadProcessOutput(ctx context.Context, tenant, id, pid, stream string, offset int64, limit int, wait time.Duration) (sandbox.ProcessOutput, error)
	// KillProcess signals the whole tree (signal as sandbox.ParseSignal
	// reads it) and returns without waiting.
	KillProcess(ctx context.Context, tenant, id, pid, signal string) (sandbox.ProcessInfo, error)
	// WriteProcessStdin appends data to the stdin of a process started
	// with it open (then closes it, with closeStdin); ResizeProcess sets
	// a pty process's window size.
	WriteProcessStdin(ctx context.Context, tenant, id, pid string, data []byte, closeStdin bool) (sandbox.ProcessInfo, error)
	ResizeProcess(ctx context.Context, tenant, id, pid string, size guest.WindowSize) (sandbox.ProcessInfo, error)
}
