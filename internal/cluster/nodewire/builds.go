package nodewire

import (
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// PathBuild is where a node reports one build's state on it.
const PathBuild = "/internal/v1/nodes/{id}/build"

// Build is one published template build as a node pulls it: its digests
// (from PostgreSQL, the root of trust) and its manifest.
type Build struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	HostClass   string `json:"host_class"`
	Manifest    string `json:"manifest"`
	MemSHA256   string `json:"mem_sha256"`
	StateSHA256 string `json:"state_sha256"`
	RootSHA256  string `json:"root_sha256"`
	SizeBytes   int64  `json:"size_bytes"`
}

// Build states a node reports.
const (
	BuildPulling = "pulling"
	BuildReady   = "ready"
	BuildFailed  = "failed"
)

// BuildReport is a node's state of one build.
type BuildReport struct {
	Build  string `json:"build"`
	State  string `json:"state"`
	Detail string `json:"detail"`
}

// Validate checks a report's id, state and detail.
func (b *BuildReport) Validate() error {
	if err := store.ValidateID("build id", b.Build); err != nil {
		return err
	}
	switch b.State {
	case BuildPulling, BuildReady, BuildFailed:
	default:
		return errdefs.InvalidArgument("build %s: state %q: want pulling, ready or failed", b.Build, b.State)
	}
	if len(b.Detail) > 1024 {
		return errdefs.InvalidArgument("build %s: detail longer than 1024 bytes", b.Build)
	}
	return nil
}
