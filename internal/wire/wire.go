package wire

import "time"

// ErrorBody is the one error shape every failure uses.
type ErrorBody struct {
	Code    string `json:"code"`    // an errdefs code: not_found, invalid_argument, ...
	Message string `json:"message"` // for humans; may change between versions
	// Reason refines Code for a failure callers decide on ("egress_open":
	// the sandbox's egress self-check found a way out); absent otherwise.
	Reason string `json:"reason,omitempty"`
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
	Egress     *EgressPolicy     `json:"egress,omitempty"` // absent = deny everything
	// Probe runs the egress self-check before answering; if anything gets
	// through, the sandbox is killed and the create fails (409 failed_precondition).
	Probe bool `json:"probe,omitempty"`
}

// ProbeResponse answers POST /v1/sandboxes/{id}/probe when every probe was
// blocked; otherwise the route fails with failed_precondition naming the
// probes that got through.
type ProbeResponse struct {
	OK     bool          `json:"ok"`
	Probes []ProbeResult `json:"probes"`
}

// ProbeResult is one egress self-check.
type ProbeResult struct {
	Name   string `json:"name"`   // stable: tcp-gateway, tcp-host, tcp-public, tcp-metadata, dns-denied
	Target string `json:"target"` // what was tried, e.g. "1.1.1.1:443"
	// Reachable means traffic got through: the check failed.
	Reachable bool   `json:"reachable"`
	Detail    string `json:"detail,omitempty"` // the guest tool's short error
}

// Sandbox is the externally visible state of a sandbox.
type Sandbox struct {
	ID       string            `json:"id"`
	Tenant   string            `json:"tenant"`
	Template string            `json:"template"`
	ParentID string            `json:"parent_id,omitempty"` // set for forks
	Metadata map[string]string `json:"metadata"`
	// State is running, paused (saved to disk, no VMM: resume it), or
	// how it ended: killed, expired, failed; lost in a cluster.
	State     string       `json:"state"`
	CreatedAt time.Time    `json:"created_at"`
	Deadline  time.Time    `json:"deadline"` // killed by the reaper at this time
	EndedAt   *time.Time   `json:"ended_at,omitempty"`
	Egress    EgressPolicy `json:"egress"`
	// NetAddr is the address the sandbox's traffic leaves its namespace
	// with, what an allowed server sees; empty without networking or once
	// ended.
	NetAddr string `json:"net_addr,omitempty"`
	// Jailed is whether the sandbox's VMM runs in a jail of its own
	// (false only where the daemon runs with --jail=off).
	Jailed bool `json:"jailed"`
	// Usage is the sandbox's host CPU and memory: in GET of one running
	// sandbox only, nil in lists and once it ended.
	Usage *Usage `json:"usage,omitempty"`
	// Node is the cluster node that runs the sandbox: set by a cluster's
	// API tier, absent on a single host.
	Node string `json:"node,omitempty"`
}

// Usage is what a running sandbox's VMM has used on the host.
type Usage struct {
	CPUSeconds     float64 `json:"cpu_seconds"`
	MemoryPSSBytes int64   `json:"memory_pss_bytes"` // shared pages divided among their sharers
	MemoryRSSBytes int64   `json:"memory_rss_bytes"`
	// MemoryPrivateBytes is what only this sandbox holds.
	MemoryPrivateBytes int64     `json:"memory_private_bytes"`
	MeasuredAt         time.Time `json:"measured_at"`
}

// EgressPolicy is a sandbox's egress policy: deny (or allow) by default,
// with allow rules by CIDR or domain, and the TLS mode of domain rules.
// Validation is the sandbox network's (netpool.Policy.Validate).
type EgressPolicy struct {
	Default string       `json:"default"` // "deny" or "allow"
	Allow   []EgressRule `json:"allow,omitempty"`
	// TLS is how the egress proxy treats TLS to domain rules: "passthrough"
	// (the default, also "": the server name is checked, the stream is not
	// opened) or "inspect" (terminated with a per-sandbox CA the guest
	// trusts; a request for any other host than the server name is
	// refused, which closes domain fronting).
	TLS string `json:"tls,omitempty"`
}

// EgressRule is one allow rule: a CIDR (with ports and protocol) or a
// domain (exact, or a leading "*.").
type EgressRule struct {
	Name     string   `json:"name"`
	CIDR     string   `json:"cidr,omitempty"`
	Ports    []uint16 `json:"ports,omitempty"`
	Protocol string   `json:"protocol,omitempty"` // tcp, udp, icmp, any
	Domain   string   `json:"domain,omitempty"`
	// Credential: Domain must be one of the tenant's credential routes,
	// else the request is refused (failed_precondition).
	Credential bool `json:"credential,omitempty"`
}

// SandboxList answers list and fork.
type SandboxList struct {
	Sandboxes []Sandbox `json:"sandboxes"`
}

// TTLRequest is the body of PUT /v1/sandboxes/{id}/ttl: the sandbox ends
// ttl_seconds from now (longer or shorter than before), within the
// daemon's maximum lifetime counted from its creation.
type TTLRequest struct {
	TTLSeconds int64 `json:"ttl_seconds"`
}

// ForkRequest is the body of POST /v1/sandboxes/{id}/fork.
type ForkRequest struct {
	Count *int `json:"count,omitempty"` // absent = 1; 1..MaxForkCount
}

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
	// User runs the command as this guest user (a name in the template's
	// /etc/passwd, or a uid), unable to become root again; "" = root. An
	// unknown user is 400 invalid_argument.
	User string `json:"user,omitempty"`
	// Pty runs the command on a terminal of this size: stdout carries
	// stdout and stderr merged, stdin's end is the terminal's EOF (^D).
	Pty *WindowSize `json:"pty,omitempty"`
}

// WindowSize is a terminal's size in characters: rows and cols 1..1000.
type WindowSize struct {
	Rows uint32 `json:"rows"`
	Cols uint32 `json:"cols"`
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
type EgressRequest = EgressPolicy

// WriteFileResponse answers a file upload.
type WriteFileResponse struct {
	Bytes int64 `json:"bytes"`
}

// WriteArchiveResponse answers an archive upload: what the guest wrote.
type WriteArchiveResponse struct {
	Entries int64 `json:"entries"` // directories, files and links
	Bytes   int64 `json:"bytes"`   // bytes of regular files
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

// TemplateInfo describes a baked template sandboxes can be created from.
type TemplateInfo struct {
	Name              string    `json:"name"`
	Hash              string    `json:"hash"` // content hash of the spec and its inputs
	MemoryMiB         int       `json:"memory_mib"`
	VCPUs             int       `json:"vcpus"`
	DefaultTTLSeconds int       `json:"default_ttl_seconds"`
	BuiltAt           time.Time `json:"built_at"`
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

// KeyList answers GET /v1/keys: the caller's tenant's API keys.
type KeyList struct {
	Keys []Key `json:"keys"`
}

// Key is an API key's record; the key itself is shown once, at creation,
// and never again.
type Key struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"`
	Name      string     `json:"name"`
	Prefix    string     `json:"prefix"` // the key's first characters, to tell keys apart
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	// Current: the key this request was made with.
	Current bool `json:"current,omitempty"`
}

// ProcessRequest is the body of POST /v1/sandboxes/{id}/processes: an
// exec request without max_output_bytes (a background process keeps the
// latest ProcessOutputKeep bytes of each stream). Stdin, if given, is fed
// and closed, unless stdin_open keeps it open for .../stdin writes after
// those bytes; without either stdin is /dev/null. A process on a pty
// always has stdin open.
type ProcessRequest struct {
	Cmd            string            `json:"cmd,omitempty"`  // run with /bin/sh -c; exactly one of cmd and argv
	Argv           []string          `json:"argv,omitempty"` // run directly
	Env            map[string]string `json:"env,omitempty"`
	Cwd            string            `json:"cwd,omitempty"`
	TimeoutSeconds float64           `json:"timeout_seconds,omitempty"` // 0 = none
	Stdin          *string           `json:"stdin,omitempty"`
	StdinBase64    *string           `json:"stdin_base64,omitempty"`
	StdinOpen      bool              `json:"stdin_open,omitempty"`
	User           string            `json:"user,omitempty"`
	Pty            *WindowSize       `json:"pty,omitempty"`
}

// ProcessStdinRequest is the body of POST .../processes/{pid}/stdin:
// bytes appended to the process's stdin (data as UTF-8 text, or
// data_base64; not both; at most 1 MiB), then, with close, its end.
type ProcessStdinRequest struct {
	Data       *string `json:"data,omitempty"`
	DataBase64 *string `json:"data_base64,omitempty"`
	Close      bool    `json:"close,omitempty"`
}

// ProcessResizeRequest is the body of POST .../processes/{pid}/resize:
// the new size of a pty process's terminal.
type ProcessResizeRequest = WindowSize

// Process states.
const (
	ProcessRunning = "running"
	ProcessExited  = "exited" // ended on its own
	ProcessKilled  = "killed" // ended after a kill or at its timeout
	ProcessFailed  = "failed" // no exit status: the sandbox ended under it (see Error)
)

// Process is a background process of a sandbox.
type Process struct {
	ID             string   `json:"id"` // "p-1", "p-2", ... per sandbox
	SandboxID      string   `json:"sandbox_id"`
	Cmd            string   `json:"cmd,omitempty"`
	Argv           []string `json:"argv,omitempty"`
	Cwd            string   `json:"cwd"`
	TimeoutSeconds float64  `json:"timeout_seconds,omitempty"`
	// State is running, exited (on its own), killed (after a kill or at
	// its timeout) or failed (the guest call failed; see error).
	State    string `json:"state"`
	ExitCode *int   `json:"exit_code,omitempty"` // once ended (not failed); 128+n for signal n
	Signal   string `json:"signal,omitempty"`
	TimedOut bool   `json:"timed_out"`
	Error    string `json:"error,omitempty"`
	// StdoutBytes and StderrBytes are the bytes that arrived so far: each
	// stream's end offset.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
	// Truncated: the guest dropped output past its per-stream cap.
	StdoutTruncated bool       `json:"stdout_truncated"`
	StderrTruncated bool       `json:"stderr_truncated"`
	StartedAt       time.Time  `json:"started_at"`
	EndedAt         *time.Time `json:"ended_at,omitempty"`
	User            string     `json:"user,omitempty"` // the guest user it runs as; "" = root
	// Pty is its terminal's size; absent when it runs on pipes.
	Pty *WindowSize `json:"pty,omitempty"`
	// StdinOpen: its stdin takes .../stdin writes now.
	StdinOpen bool `json:"stdin_open,omitempty"`
}

// Running reports whether the process was running when last read.
func (p *Process) Running() bool { return p.State == ProcessRunning }

// ProcessList answers GET /v1/sandboxes/{id}/processes.
type ProcessList struct {
	Processes []Process `json:"processes"`
}

// ProcessOutput answers GET .../processes/{pid}/output: the bytes of one
// stream from offset on (only the latest ProcessOutputKeep are kept).
type ProcessOutput struct {
	Stream string `json:"stream"` // stdout or stderr
	Data   []byte `json:"data"`   // base64
	// Offset is the stream offset of data's first byte; NextOffset the
	// one to ask for next.
	Offset     int64 `json:"offset"`
	NextOffset int64 `json:"next_offset"`
	// Dropped is how many bytes between the requested offset and Offset
	// are no longer kept.
	Dropped int64 `json:"dropped"`
	// EOF: the process ended and NextOffset is the stream's end.
	EOF bool `json:"eof"`
}
