package api

import (
	"io/fs"
	"time"

	"github.com/airlock-dev/airlock/internal/guest/agentpb"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
)

// The JSON shapes of requests and responses. Field names are the API
// contract: they are mirrored in openapi.json (checked by a test), the Go
// client and the Python SDK.

// ErrorBody is the one error shape every failure uses.
type ErrorBody struct {
	Code    string `json:"code"`    // an errdefs code: not_found, invalid_argument, ...
	Message string `json:"message"` // for humans; may change between versions
}

// ErrorResponse wraps ErrorBody: {"error": {"code": ..., "message": ...}}.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// HealthResponse answers GET /healthz.
type HealthResponse struct {
	Status string `json:"status"`
}

// CreateSandboxRequest is the body of POST /v1/sandboxes.
type CreateSandboxRequest struct {
	Template   string            `json:"template"`
	TTLSeconds int64             `json:"ttl_seconds,omitempty"` // 0 = the template's default
	Metadata   map[string]string `json:"metadata,omitempty"`
	Egress     *netpool.Policy   `json:"egress,omitempty"` // absent = deny everything
	// Probe runs the egress self-check before answering; if anything gets
	// through, the sandbox is killed and the create fails (409 failed_precondition).
	Probe bool `json:"probe,omitempty"`
}

// ProbeResponse answers POST /v1/sandboxes/{id}/probe when every probe was
// blocked; otherwise the route fails with failed_precondition naming the
// probes that got through.
type ProbeResponse struct {
	OK     bool                  `json:"ok"`
	Probes []sandbox.ProbeResult `json:"probes"`
}

// SandboxList answers list and fork.
type SandboxList struct {
	Sandboxes []sandbox.Info `json:"sandboxes"`
}

// ForkRequest is the body of POST /v1/sandboxes/{id}/fork.
type ForkRequest struct {
	Count *int `json:"count,omitempty"` // absent = 1; 1..MaxForkCount
}

// MaxForkCount bounds one fork request: the sandbox manager's limit.
const MaxForkCount = sandbox.MaxForkCount

// ExecRequest is the body of both exec routes.
type ExecRequest struct {
	Cmd            string            `json:"cmd,omitempty"`  // run with /bin/sh -c; exactly one of cmd and argv
	Argv           []string          `json:"argv,omitempty"` // run directly
	Env            map[string]string `json:"env,omitempty"`
	Cwd            string            `json:"cwd,omitempty"`
	TimeoutSeconds float64           `json:"timeout_seconds,omitempty"` // 0 = none
	Stdin          *string           `json:"stdin,omitempty"`           // UTF-8 text
	StdinBase64    *string           `json:"stdin_base64,omitempty"`    // or bytes; not both
	MaxOutputBytes int64             `json:"max_output_bytes,omitempty"`
}

// ExecStatus is how a process ended: the plain result without its output,
// and the "exit" event of a stream.
type ExecStatus struct {
	ExitCode        int    `json:"exit_code"` // 128+n when killed by signal n
	Signal          string `json:"signal,omitempty"`
	TimedOut        bool   `json:"timed_out"`
	StdoutTruncated bool   `json:"stdout_truncated"`
	StderrTruncated bool   `json:"stderr_truncated"`
	StdoutBytes     int64  `json:"stdout_bytes"` // produced, including dropped bytes
	StderrBytes     int64  `json:"stderr_bytes"`
	DurationMS      int64  `json:"duration_ms"`
}

// ExecResponse answers POST /v1/sandboxes/{id}/exec. Stdout and Stderr are
// the output as UTF-8 (invalid sequences replaced by U+FFFD); when the output
// was not valid UTF-8 the exact bytes are in the *_base64 fields as well.
type ExecResponse struct {
	ExecStatus
	Stdout       string `json:"stdout"`
	Stderr       string `json:"stderr"`
	StdoutBase64 string `json:"stdout_base64,omitempty"`
	StderrBase64 string `json:"stderr_base64,omitempty"`
}

// Stream event types, one JSON object per line of an exec stream.
const (
	EventStdout = "stdout"
	EventStderr = "stderr"
	EventExit   = "exit"  // last line of a stream that ran to the end
	EventError  = "error" // last line of a stream that failed midway
)

// StreamEvent is one line of application/x-ndjson from exec/stream.
type StreamEvent struct {
	Type string `json:"type"`
	Data []byte `json:"data,omitempty"` // stdout/stderr chunk, base64
	*ExecStatus
	Error *ErrorBody `json:"error,omitempty"`
}

// EgressRequest is the body of PUT /v1/sandboxes/{id}/egress.
type EgressRequest = netpool.Policy

// WriteFileResponse answers a file upload.
type WriteFileResponse struct {
	Bytes int64 `json:"bytes"`
}

// FileInfo describes one guest path.
type FileInfo struct {
	Path          string    `json:"path"`
	Name          string    `json:"name"`
	Size          int64     `json:"size"`
	Mode          uint32    `json:"mode"`        // Go fs.FileMode bits
	ModeString    string    `json:"mode_string"` // e.g. "-rw-r--r--"
	IsDir         bool      `json:"is_dir"`
	ModTime       time.Time `json:"mod_time"`
	SymlinkTarget string    `json:"symlink_target,omitempty"`
}

// FileList answers GET .../files/list.
type FileList struct {
	Entries []FileInfo `json:"entries"`
}

// TemplateList answers GET /v1/templates.
type TemplateList struct {
	Templates []TemplateInfo `json:"templates"`
}

// AuditRecord is store.AuditRecord as JSON.
type AuditRecord struct {
	Seq        int64             `json:"seq"`
	Time       time.Time         `json:"time"`
	Tenant     string            `json:"tenant,omitempty"`
	SandboxID  string            `json:"sandbox_id,omitempty"`
	ParentID   string            `json:"parent_id,omitempty"`
	Template   string            `json:"template,omitempty"`
	Event      string            `json:"event"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	ExitCode   *int              `json:"exit_code,omitempty"`
	Bytes      int64             `json:"bytes"`
	DurationMS int64             `json:"duration_ms"`
	Outcome    string            `json:"outcome"`
	Detail     map[string]string `json:"detail,omitempty"`
	PrevHash   string            `json:"prev_hash"`
	Hash       string            `json:"hash"`
}

// AuditList answers GET /v1/audit. NextAfterSeq is set when the page is
// full: pass it as after_seq to get the next page.
type AuditList struct {
	Records      []AuditRecord `json:"records"`
	NextAfterSeq int64         `json:"next_after_seq,omitempty"`
}

// AuditRecordFromStore converts a stored record to its JSON shape (the CLI
// uses it too, so `airlock audit ls --json` prints what the API returns).
func AuditRecordFromStore(r store.AuditRecord) AuditRecord {
	return AuditRecord{
		Seq: r.Seq, Time: r.Time, Tenant: r.Tenant, SandboxID: r.SandboxID, ParentID: r.ParentID,
		Template: r.Template, Event: r.Event, Metadata: r.Metadata, ExitCode: r.ExitCode,
		Bytes: r.Bytes, DurationMS: r.DurationMS, Outcome: r.Outcome, Detail: r.Detail,
		PrevHash: r.PrevHash, Hash: r.Hash,
	}
}

func fileInfoFromPB(fi *agentpb.FileInfo) FileInfo {
	if fi == nil {
		return FileInfo{}
	}
	mode := fs.FileMode(fi.GetMode())
	return FileInfo{
		Path: fi.GetPath(), Name: fi.GetName(), Size: fi.GetSize(), Mode: fi.GetMode(),
		ModeString: mode.String(), IsDir: fi.GetIsDir(),
		ModTime:       time.Unix(0, fi.GetModUnixNanos()).UTC(),
		SymlinkTarget: fi.GetSymlinkTarget(),
	}
}
