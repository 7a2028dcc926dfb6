package sandbox

import (
	"io/fs"
	"time"

	"github.com/airlock-dev/airlock/internal/guest/agentpb"
	"github.com/airlock-dev/airlock/internal/netpool"
)

// CreateRequest asks the Manager for a new sandbox restored from a template.
type CreateRequest struct {
	Tenant   string            // owner; every later call must name the same tenant
	Template string            // template name, e.g. "base"
	TTL      time.Duration     // 0 = the template's default; at most the server maximum
	Metadata map[string]string // caller's labels (matter, doc, class...); audited, filterable
	Egress   *netpool.Policy   // nil = deny everything
	// Probe runs the egress self-check (Manager.Probe) before Create
	// returns; if anything gets through, the sandbox is killed and Create
	// fails with FailedPrecondition.
	Probe bool
	// ID is the sandbox's id when the caller chose it (a cluster's API
	// tier does, so its catalog row exists before the VM): "sbx-" and 16
	// characters of [a-z2-7], as NewSandboxID makes. An id already known
	// to this host is AlreadyExists. "" = the machine's own id, as on a
	// single host.
	ID string
}

// Info is the externally visible state of a sandbox.
type Info struct {
	ID        string            `json:"id"`
	Tenant    string            `json:"tenant"`
	Template  string            `json:"template"`
	ParentID  string            `json:"parent_id,omitempty"` // set for forks
	Metadata  map[string]string `json:"metadata"`
	State     string            `json:"state"` // running, killed, expired, failed
	CreatedAt time.Time         `json:"created_at"`
	Deadline  time.Time         `json:"deadline"` // killed by the reaper at this time
	EndedAt   *time.Time        `json:"ended_at,omitempty"`
	Egress    netpool.Policy    `json:"egress"`
	// NetAddr is the address the sandbox's traffic leaves its namespace
	// with (its slot's NsIP), what an allowed server sees; empty without
	// networking or once ended.
	NetAddr string `json:"net_addr,omitempty"`
	// Jailed is whether the sandbox's VMM runs in a jail of its own (its
	// own uid, namespaces, root, cgroup: see vmm/jail). False only where
	// the operator turned jailing off.
	Jailed bool `json:"jailed"`
	// Usage is the sandbox's host CPU and memory, read when Get answers
	// for a running sandbox; nil in lists and once ended.
	Usage *Usage `json:"usage,omitempty"`
	// Node is the cluster node that runs the sandbox, set by a cluster's
	// API tier; "" on a single host.
	Node string `json:"node,omitempty"`
}

// StateLost is a cluster catalog's state for a sandbox whose node was
// written off. A Manager never puts a sandbox in it; List treats it as a
// state nothing is in.
const StateLost = "lost"

// ListFilter selects sandboxes of one tenant.
type ListFilter struct {
	Tenant   string
	Metadata map[string]string // all must match
	States   []string          // empty = running only
}

// TemplateInfo describes a baked template a sandbox can be created from.
type TemplateInfo struct {
	Name              string    `json:"name"`
	Hash              string    `json:"hash"` // content hash of the spec and its inputs
	MemoryMiB         int       `json:"memory_mib"`
	VCPUs             int       `json:"vcpus"`
	DefaultTTLSeconds int       `json:"default_ttl_seconds"`
	BuiltAt           time.Time `json:"built_at"`
}

// FileInfo describes one path in a sandbox.
type FileInfo struct {
	Path          string
	Name          string
	Size          int64
	Mode          fs.FileMode
	IsDir         bool
	ModTime       time.Time // UTC
	SymlinkTarget string    // for a symlink, where it points
}

// fileInfoFromAgent converts the agent protocol's description of a path.
func fileInfoFromAgent(fi *agentpb.FileInfo) FileInfo {
	if fi == nil {
		return FileInfo{ModTime: time.Unix(0, 0).UTC()}
	}
	return FileInfo{Path: fi.GetPath(), Name: fi.GetName(), Size: fi.GetSize(), Mode: fs.FileMode(fi.GetMode()),
		IsDir: fi.GetIsDir(), ModTime: time.Unix(0, fi.GetModUnixNanos()).UTC(), SymlinkTarget: fi.GetSymlinkTarget()}
}
