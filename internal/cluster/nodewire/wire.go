package nodewire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// The node's calls to the tier's internal listener.
const (
	PathRegister  = "/internal/v1/nodes/register"
	PathHeartbeat = "/internal/v1/nodes/{id}/heartbeat"
	PathShip      = "/internal/v1/nodes/{id}/ship"
	// PathView answers (to the join token) the nodes the replica sees.
	PathView = "/internal/v1/view"
)

// Headers.
const (
	// HeaderEpoch carries the epoch a node's call is made under (with its
	// session token in Authorization).
	HeaderEpoch = "X-Airlock-Node-Epoch"
	// HeaderSandboxID carries the id the tier chose for a create, or the
	// comma-separated ids of a fork's children, on calls to a node.
	HeaderSandboxID = "X-Airlock-Sandbox-Id"
)

// Bounds on what a node sends.
const (
	MaxBody      = 8 << 20 // one request body
	MaxRunning   = 20000   // sandbox ids in one heartbeat
	MaxShipEnded = 1000    // sandbox ends in one ship
	MaxShipAudit = 500     // audit records in one ship
	MaxTemplates = 256
)

// Capacity is what a node can hold, or holds.
type Capacity struct {
	Slots  int   `json:"slots"`
	MemMiB int64 `json:"mem_mib"`
	VCPUs  int   `json:"vcpus"`
}

// Template is one template a node can restore.
type Template struct {
	Name              string    `json:"name"`
	Hash              string    `json:"hash"`
	MemoryMiB         int       `json:"memory_mib"`
	VCPUs             int       `json:"vcpus"`
	DefaultTTLSeconds int       `json:"default_ttl_seconds"`
	BuiltAt           time.Time `json:"built_at"`
}

// RegisterRequest is a node starting (or fencing and starting again).
type RegisterRequest struct {
	NodeID  string `json:"node_id"`
	Addr    string `json:"addr"` // host:port the tier calls the node on
	Version string `json:"version"`
	// Epoch and Secret are what the daemon stored from its last
	// registration (0, "" for none): the current epoch with its secret
	// renews the lease and keeps the node's sandboxes.
	Epoch  int64  `json:"epoch"`
	Secret string `json:"secret"`
	// Chain is the node's audit chain id (a UUID kept in its state
	// directory).
	Chain     string     `json:"chain"`
	Capacity  Capacity   `json:"capacity"`
	Net       bool       `json:"net"`
	Templates []Template `json:"templates"`
	// HostClass is the class of bakes the node restores
	// (template.HostClass of its host parts); "" for none.
	HostClass string `json:"host_class"`
}

// RegisterResponse is an accepted registration.
type RegisterResponse struct {
	Epoch int64 `json:"epoch"`
	// Fence: the node's stored epoch is gone; it must destroy its
	// sandboxes before it serves.
	Fence bool `json:"fence"`
	// Token is the node's session token (HeaderEpoch + Authorization on
	// every later call); AssertKey verifies the tier's assertions.
	Token     string `json:"token"`
	AssertKey []byte `json:"assert_key"`
	// HeartbeatMS, TTLMS, GraceMS and FenceAfterMS are the lease timing.
	HeartbeatMS  int64 `json:"heartbeat_ms"`
	TTLMS        int64 `json:"ttl_ms"`
	GraceMS      int64 `json:"grace_ms"`
	FenceAfterMS int64 `json:"fence_after_ms"`
	// ChainSeq and ChainHash are the node chain's head in the shared
	// store: the shipper sends what follows.
	ChainSeq  int64  `json:"chain_seq"`
	ChainHash string `json:"chain_hash"`
}

// HeartbeatRequest renews the lease and reports use.
type HeartbeatRequest struct {
	Used Capacity       `json:"used"`
	Warm map[string]int `json:"warm"`
	// Running lists the node's sandboxes now (ids): the tier answers
	// with those no catalog row owns.
	Running []string `json:"running"`
}

// HeartbeatResponse is an accepted heartbeat. A refused one is an error
// answer: 409 failed_precondition means the lease is gone (fence).
type HeartbeatResponse struct {
	State string `json:"state"` // ready or draining
	// Orphans are ids of Running that no live catalog row of this node
	// and epoch owns: the node kills them.
	Orphans []string `json:"orphans"`
	// Builds are the current builds of the node's host class: the node's
	// template syncer pulls those it lacks.
	Builds []Build `json:"builds"`
}

// Ended is one sandbox's end as the node recorded it.
type Ended struct {
	ID      string    `json:"id"`
	State   string    `json:"state"` // killed, expired or failed
	EndedAt time.Time `json:"ended_at"`
}

// ShipRequest carries sandbox ends and the next records of the node's
// audit chain (exactly those after the head the tier last answered).
type ShipRequest struct {
	Ended []Ended       `json:"ended"`
	Audit []AuditRecord `json:"audit"`
	Chain string        `json:"chain"`
}

// ShipResponse gives the chain's head after the ship.
type ShipResponse struct {
	ChainSeq  int64  `json:"chain_seq"`
	ChainHash string `json:"chain_hash"`
}

// AuditRecord is store.AuditRecord as shipped: every hashed field.
type AuditRecord struct {
	Seq        int64             `json:"seq"`
	TimeMS     int64             `json:"time_ms"`
	Tenant     string            `json:"tenant"`
	SandboxID  string            `json:"sandbox_id"`
	ParentID   string            `json:"parent_id"`
	Template   string            `json:"template"`
	Event      string            `json:"event"`
	Metadata   map[string]string `json:"metadata"`
	ExitCode   *int              `json:"exit_code"`
	Bytes      int64             `json:"bytes"`
	DurationMS int64             `json:"duration_ms"`
	Outcome    string            `json:"outcome"`
	Detail     map[string]string `json:"detail"`
	PrevHash   string            `json:"prev_hash"`
	Hash       string            `json:"hash"`
}

// FromStore converts a local record for shipping.
func FromStore(r store.AuditRecord) AuditRecord {
	return AuditRecord{Seq: r.Seq, TimeMS: r.Time.UnixMilli(), Tenant: r.Tenant, SandboxID: r.SandboxID,
		ParentID: r.ParentID, Template: r.Template, Event: r.Event, Metadata: r.Metadata, ExitCode: r.ExitCode,
		Bytes: r.Bytes, DurationMS: r.DurationMS, Outcome: r.Outcome, Detail: r.Detail, PrevHash: r.PrevHash, Hash: r.Hash}
}

// ToStore converts a shipped record back; the store checks it.
func (r AuditRecord) ToStore() store.AuditRecord {
	return store.AuditRecord{Seq: r.Seq, Time: time.UnixMilli(r.TimeMS).UTC(), Tenant: r.Tenant, SandboxID: r.SandboxID,
		ParentID: r.ParentID, Template: r.Template, Event: r.Event, Metadata: r.Metadata, ExitCode: r.ExitCode,
		Bytes: r.Bytes, DurationMS: r.DurationMS, Outcome: r.Outcome, Detail: r.Detail, PrevHash: r.PrevHash, Hash: r.Hash}
}

// Decode reads exactly one JSON value of at most MaxBody bytes from r into
// v, refusing unknown fields (InvalidArgument).
func Decode(r io.Reader, v any) error {
	dec := json.NewDecoder(io.LimitReader(r, MaxBody+1))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errdefs.InvalidArgument("malformed body: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errdefs.InvalidArgument("malformed body: more than one value, or longer than %d bytes", MaxBody)
	}
	return nil
}

// sandboxIDRE is a sandbox id as the tier makes them.
var sandboxIDRE = regexp.MustCompile(`^sbx-[a-z2-7]{16}$`)

// ValidSandboxID reports whether id has the shape the tier gives ids.
func ValidSandboxID(id string) bool { return sandboxIDRE.MatchString(id) }

// Validate checks a registration's fields and bounds.
func (r *RegisterRequest) Validate() error {
	if err := store.ValidateID("node id", r.NodeID); err != nil {
		return err
	}
	switch {
	case r.Addr == "" || len(r.Addr) > 256:
		return errdefs.InvalidArgument("addr: want host:port")
	case r.Epoch < 0 || len(r.Secret) > 128 || len(r.Version) > 128:
		return errdefs.InvalidArgument("epoch, secret or version out of range")
	case r.Capacity.Slots < 0 || r.Capacity.MemMiB < 0 || r.Capacity.VCPUs < 0:
		return errdefs.InvalidArgument("capacity must not be negative")
	case len(r.Templates) > MaxTemplates:
		return errdefs.InvalidArgument("at most %d templates", MaxTemplates)
	case !uuidRE.MatchString(r.Chain):
		return errdefs.InvalidArgument("chain: want a UUID")
	case len(r.HostClass) > 128:
		return errdefs.InvalidArgument("host class: at most 128 bytes")
	}
	for _, t := range r.Templates {
		if err := store.ValidateTemplateName(t.Name); err != nil {
			return err
		}
		if t.MemoryMiB <= 0 || t.VCPUs <= 0 || t.DefaultTTLSeconds < 0 || len(t.Hash) > 128 {
			return errdefs.InvalidArgument("template %s: bad shape", t.Name)
		}
	}
	return nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Validate checks a heartbeat's bounds and ids.
func (h *HeartbeatRequest) Validate() error {
	if len(h.Running) > MaxRunning || len(h.Warm) > MaxTemplates {
		return errdefs.InvalidArgument("heartbeat: at most %d running ids and %d warm templates", MaxRunning, MaxTemplates)
	}
	if h.Used.Slots < 0 || h.Used.MemMiB < 0 || h.Used.VCPUs < 0 {
		return errdefs.InvalidArgument("heartbeat: use must not be negative")
	}
	for _, id := range h.Running {
		if err := store.ValidateID("sandbox id", id); err != nil {
			return err
		}
	}
	for name, n := range h.Warm {
		if err := store.ValidateTemplateName(name); err != nil || n < 0 {
			return errdefs.InvalidArgument("heartbeat: warm %q: %d", name, n)
		}
	}
	return nil
}

// Validate checks a ship's bounds, ids and states (the store checks every
// audit record and its hash again).
func (s *ShipRequest) Validate() error {
	if len(s.Ended) > MaxShipEnded || len(s.Audit) > MaxShipAudit {
		return errdefs.InvalidArgument("ship: at most %d ends and %d audit records", MaxShipEnded, MaxShipAudit)
	}
	if len(s.Audit) > 0 && !uuidRE.MatchString(s.Chain) {
		return errdefs.InvalidArgument("ship: chain: want a UUID")
	}
	for _, e := range s.Ended {
		if err := store.ValidateID("sandbox id", e.ID); err != nil {
			return err
		}
		switch e.State {
		case store.StateKilled, store.StateExpired, store.StateFailed:
		default:
			return errdefs.InvalidArgument("ship: sandbox %s ended %q: want killed, expired or failed", e.ID, e.State)
		}
		if e.EndedAt.IsZero() {
			return errdefs.InvalidArgument("ship: sandbox %s: no end time", e.ID)
		}
	}
	return nil
}

// String names a capacity, for logs.
func (c Capacity) String() string {
	return fmt.Sprintf("%d slots, %d MiB, %d vCPUs", c.Slots, c.MemMiB, c.VCPUs)
}

// View is the nodes one API replica sees (GET PathView).
type View struct {
	Nodes []ViewNode `json:"nodes"`
}

// ViewNode is one node in a View.
type ViewNode struct {
	ID    string `json:"id"`
	Addr  string `json:"addr"`
	Epoch int64  `json:"epoch"`
	State string `json:"state"`
}
