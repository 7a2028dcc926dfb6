package templatepub

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/template"
)

// Published is what Publish did.
type Published struct {
	Build pgstore.Build
	// Uploaded is the bytes sent to the blob store (0 when every blob was
	// there already); Took is the whole publish.
	Uploaded int64
	Took     time.Duration
}

// Publish uploads template name's current bake from reg to bs (each blob
// unless present), then records it in st as the template's current build
// and notifies the nodes (one transaction).
func Publish(ctx context.Context, reg *template.Registry, name string, bs blobs.Store, st *pgstore.Store) (Published, error) {
	start := time.Now()
	t, err := reg.Get(name)
	if err != nil {
		return Published{}, err
	}
	if t.DefaultTTLSeconds <= 0 {
		return Published{}, errdefs.FailedPrecondition("template %s has no default TTL: a cluster build needs one", name)
	}
	var out Published
	var size int64
	for _, f := range []struct{ what, path, want string }{
		{"memory file", t.MemPath(), t.MemSHA256}, {"device state", t.StatePath(), t.StateSHA256}, {"root image", t.RootImage, t.RootImageSHA256},
	} {
		digest, sent, err := blobs.Upload(ctx, bs, f.path)
		if err != nil {
			return out, fmt.Errorf("publish %s: %s: %w", name, f.what, err)
		}
		if digest != f.want {
			return out, errdefs.FailedPrecondition("publish %s: the %s hashes to %s, its manifest says %s: rebuild the template", name, f.what, digest, f.want)
		}
		n, err := bs.Stat(ctx, digest)
		if err != nil {
			return out, fmt.Errorf("publish %s: %s: %w", name, f.what, err)
		}
		out.Uploaded += sent
		size += n
	}
	manifest, err := json.Marshal(t.Manifest)
	if err != nil {
		return out, err
	}
	out.Build = pgstore.Build{BuildID: t.Key, Name: t.Name, HostClass: t.HostClass(), Manifest: string(manifest),
		MemSHA256: t.MemSHA256, StateSHA256: t.StateSHA256, RootSHA256: t.RootImageSHA256, SizeBytes: size,
		MemoryMiB: t.MemoryMiB, VCPUs: t.VCPUs, DefaultTTL: time.Duration(t.DefaultTTLSeconds) * time.Second}
	if err := st.PublishBuild(ctx, out.Build); err != nil {
		return out, fmt.Errorf("publish %s: %w", name, err)
	}
	out.Took = time.Since(start)
	return out, nil
}

// Offer is b as a node is offered it (nodewire.HeartbeatResponse.Builds).
func Offer(b pgstore.Build) nodewire.Build {
	return nodewire.Build{ID: b.BuildID, Name: b.Name, HostClass: b.HostClass, Manifest: b.Manifest,
		MemSHA256: b.MemSHA256, StateSHA256: b.StateSHA256, RootSHA256: b.RootSHA256, SizeBytes: b.SizeBytes}
}
