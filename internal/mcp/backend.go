package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/jobs"
	"github.com/airlock-dev/airlock/internal/netpool"
)

// Backend is what the server needs of airlock, bound to one tenant: the
// tenant never appears in a call, so a session cannot name another.
// Errors carry an errdefs class; another tenant's sandbox is NotFound,
// exactly like a missing one. ManagerBackend and ClientBackend implement
// it.
type Backend interface {
	Create(ctx context.Context, req CreateRequest) (Sandbox, error)
	// List returns the tenant's sandboxes carrying every pair of metadata,
	// running ones only unless all.
	List(ctx context.Context, metadata map[string]string, all bool) ([]Sandbox, error)
	Kill(ctx context.Context, id string) error
	// Exec runs cmd with /bin/sh -c, keeping at most req.MaxOutput bytes
	// of each stream.
	Exec(ctx context.Context, id string, req ExecRequest) (ExecResult, error)
	WriteFile(ctx context.Context, id, path string, data []byte) (int64, error)
	// ReadFile refuses (ResourceExhausted) a file over max bytes before
	// any of it moves.
	ReadFile(ctx context.Context, id, path string, max int64) ([]byte, error)
	// Jobs are the sandboxes the document jobs make (each created with
	// egress denied and proven closed, killed after the document).
	Jobs() jobs.Sandboxes
}

// CreateRequest describes a sandbox to create.
type CreateRequest struct {
	Template string
	TTL      time.Duration     // 0 = the template's default
	Metadata map[string]string // labels: audited, never content
	Allow    []netpool.Rule    // egress allowed beyond deny-all
}

// Sandbox is what the tools show of a sandbox.
type Sandbox struct {
	ID        string
	Template  string
	State     string // running, killed, expired, failed
	CreatedAt time.Time
	Deadline  time.Time
	Metadata  map[string]string
}

// ExecRequest is one command.
type ExecRequest struct {
	Cmd       string
	Timeout   time.Duration // the guest kills the whole tree after it
	MaxOutput int64         // per stream
}

// ExecResult is how a command ended; Stdout and Stderr hold at most the
// request's MaxOutput bytes each.
type ExecResult struct {
	ExitCode                         int
	TimedOut                         bool
	Stdout, Stderr                   []byte
	StdoutBytes, StderrBytes         int64 // produced, including what was dropped
	StdoutTruncated, StderrTruncated bool
}

// EgressRules are the egress exceptions the operator lets an agent ask
// for by name (sandbox_create's egress): an agent, which a document may
// have talked into exfiltrating it, never writes a rule itself.
type EgressRules map[string]netpool.Rule

// ParseEgressRules reads a JSON list of rules as the API's egress policy
// writes them ({"name", "domain"} or {"name", "cidr", "ports",
// "protocol"}), each valid and its name unique.
func ParseEgressRules(data []byte) (EgressRules, error) {
	var rules []netpool.Rule
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rules); err != nil {
		return nil, errdefs.InvalidArgument("egress rules: want a JSON list of rules: %v", err)
	}
	out := EgressRules{}
	for _, r := range rules {
		if _, dup := out[r.Name]; dup {
			return nil, errdefs.InvalidArgument("egress rules: %q is named twice", r.Name)
		}
		p := netpool.DenyAll()
		p.Allow = []netpool.Rule{r}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("egress rule %q: %w", r.Name, err)
		}
		out[r.Name] = r
	}
	return out, nil
}

// resolve turns names into rules, refusing names the operator did not
// define.
func (e EgressRules) resolve(names []string) ([]netpool.Rule, error) {
	var out []netpool.Rule
	seen := map[string]bool{}
	for _, n := range names {
		r, ok := e[n]
		if !ok {
			return nil, errdefs.InvalidArgument("egress %q: no such rule; the operator allows %v", n, e.names())
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, r)
		}
	}
	return out, nil
}

func (e EgressRules) names() []string {
	out := make([]string, 0, len(e))
	for n := range e {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
