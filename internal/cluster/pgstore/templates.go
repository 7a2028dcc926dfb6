package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// Build is one baked template build, published for nodes of one host
// class to pull. Its digests are the root of trust for the blobs.
type Build struct {
	// BuildID is the bake key (spec hash and host parts); the primary
	// key. A build is immutable once published.
	BuildID string
	// Name is the template it is a build of.
	Name string
	// HostClass is the class of node that can restore it.
	HostClass string
	// Manifest is the bake's manifest as JSON text.
	Manifest string
	// MemSHA256, StateSHA256 and RootSHA256 are the hex SHA-256 of the
	// memory, device state and root image blobs.
	MemSHA256, StateSHA256, RootSHA256 string
	// SizeBytes is the blobs' total size; >= 0.
	SizeBytes int64
	// MemoryMiB, VCPUs and DefaultTTL are what a sandbox of it takes.
	MemoryMiB, VCPUs int
	DefaultTTL       time.Duration
	// PublishedAt is when it was published (UTC, ms).
	PublishedAt time.Time
}

// PutBuild publishes b. Publishing the same build again is a no-op; a
// different build under an existing id is AlreadyExists (builds never
// change).
func (s *Store) PutBuild(ctx context.Context, b Build) error {
	if err := store.ValidateTemplateName(b.Name); err != nil {
		return fmt.Errorf("pgstore: put build: %w", err)
	}
	if err := store.ValidateID("build id", b.BuildID); err != nil {
		return fmt.Errorf("pgstore: put build: %w", err)
	}
	if b.PublishedAt.IsZero() {
		b.PublishedAt = time.Now()
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO template_builds (build_id, name, host_class, manifest, mem_sha256, state_sha256,
		root_sha256, size_bytes, memory_mib, vcpus, default_ttl_s, published_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (build_id) DO NOTHING`,
		b.BuildID, b.Name, b.HostClass, b.Manifest, b.MemSHA256, b.StateSHA256, b.RootSHA256, b.SizeBytes,
		b.MemoryMiB, b.VCPUs, int(b.DefaultTTL/time.Second), toMS(b.PublishedAt))
	if err != nil {
		return fmt.Errorf("pgstore: put build %s: %w", b.BuildID, mapErr(err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	have, err := s.GetBuild(ctx, b.BuildID)
	if err != nil {
		return err
	}
	have.PublishedAt = b.PublishedAt
	if have != b {
		return errdefs.AlreadyExists("build %s was published with other content", b.BuildID)
	}
	return nil
}

// SetCurrentBuild makes buildID the build new sandboxes of its template
// are placed for.
func (s *Store) SetCurrentBuild(ctx context.Context, name, buildID string) error {
	b, err := s.GetBuild(ctx, buildID)
	if err != nil {
		return err
	}
	if b.Name != name {
		return errdefs.InvalidArgument("build %s is of template %s, not %s", buildID, b.Name, name)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO templates (name, current_build) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET current_build = excluded.current_build`, name, buildID)
	if err != nil {
		return fmt.Errorf("pgstore: set current build of %s: %w", name, mapErr(err))
	}
	return nil
}

// CurrentBuild returns the build template name is placed for; NotFound
// when it has none.
func (s *Store) CurrentBuild(ctx context.Context, name string) (Build, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT current_build FROM templates WHERE name = $1`, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Build{}, errdefs.NotFound("template %s not found", name)
	}
	if err != nil {
		return Build{}, fmt.Errorf("pgstore: current build of %s: %w", name, mapErr(err))
	}
	return s.GetBuild(ctx, id)
}

// GetBuild returns build id; NotFound when unknown.
func (s *Store) GetBuild(ctx context.Context, id string) (Build, error) {
	var (
		b          Build
		ttlS       int
		publishedM int64
	)
	err := s.pool.QueryRow(ctx, `SELECT build_id, name, host_class, manifest, mem_sha256, state_sha256, root_sha256,
		size_bytes, memory_mib, vcpus, default_ttl_s, published_ms FROM template_builds WHERE build_id = $1`, id).
		Scan(&b.BuildID, &b.Name, &b.HostClass, &b.Manifest, &b.MemSHA256, &b.StateSHA256, &b.RootSHA256,
			&b.SizeBytes, &b.MemoryMiB, &b.VCPUs, &ttlS, &publishedM)
	if errors.Is(err, pgx.ErrNoRows) {
		return Build{}, errdefs.NotFound("build %s not found", id)
	}
	if err != nil {
		return Build{}, fmt.Errorf("pgstore: get build %s: %w", id, mapErr(err))
	}
	b.DefaultTTL, b.PublishedAt = time.Duration(ttlS)*time.Second, fromMS(publishedM)
	return b, nil
}

// SetNodeBuild records what node reports of build: pulling, ready or
// failed (with detail). Placement uses only ready.
func (s *Store) SetNodeBuild(ctx context.Context, node, buildID, state, detail string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO node_templates (node_id, build_id, state, detail) VALUES ($1, $2, $3, $4)
		ON CONFLICT (node_id, build_id) DO UPDATE SET state = excluded.state, detail = excluded.detail`,
		node, buildID, state, detail)
	if err != nil {
		return fmt.Errorf("pgstore: set build %s on %s: %w", buildID, node, mapErr(err))
	}
	return nil
}

// NodesWithBuild returns the nodes holding buildID ready, by id.
func (s *Store) NodesWithBuild(ctx context.Context, buildID string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT node_id FROM node_templates WHERE build_id = $1 AND state = 'ready' ORDER BY node_id`, buildID)
	if err != nil {
		return nil, fmt.Errorf("pgstore: nodes with build %s: %w", buildID, mapErr(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pgstore: nodes with build %s: %w", buildID, mapErr(err))
	}
	return ids, nil
}

// TemplatesChannel is the NOTIFY channel a publish signals on.
const TemplatesChannel = "airlock_templates"

// PublishBuild inserts b (a no-op when published before with the same
// content), makes it its template's current build and notifies
// TemplatesChannel, all in one transaction: nodes see the build only once
// its blobs (uploaded before) and its row are both there.
func (s *Store) PublishBuild(ctx context.Context, b Build) error {
	if err := store.ValidateTemplateName(b.Name); err != nil {
		return fmt.Errorf("pgstore: publish build: %w", err)
	}
	if err := store.ValidateID("build id", b.BuildID); err != nil {
		return fmt.Errorf("pgstore: publish build: %w", err)
	}
	if b.PublishedAt.IsZero() {
		b.PublishedAt = time.Now()
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO template_builds (build_id, name, host_class, manifest, mem_sha256, state_sha256,
			root_sha256, size_bytes, memory_mib, vcpus, default_ttl_s, published_ms)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (build_id) DO NOTHING`,
			b.BuildID, b.Name, b.HostClass, b.Manifest, b.MemSHA256, b.StateSHA256, b.RootSHA256, b.SizeBytes,
			b.MemoryMiB, b.VCPUs, int(b.DefaultTTL/time.Second), toMS(b.PublishedAt))
		if err != nil {
			return fmt.Errorf("pgstore: publish build %s: %w", b.BuildID, err)
		}
		var name, mem, state, root string
		if err := tx.QueryRow(ctx, `SELECT name, mem_sha256, state_sha256, root_sha256 FROM template_builds WHERE build_id = $1`,
			b.BuildID).Scan(&name, &mem, &state, &root); err != nil {
			return fmt.Errorf("pgstore: publish build %s: %w", b.BuildID, err)
		}
		if name != b.Name || mem != b.MemSHA256 || state != b.StateSHA256 || root != b.RootSHA256 {
			return errdefs.AlreadyExists("build %s was published with other content", b.BuildID)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO templates (name, current_build) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET current_build = excluded.current_build`, b.Name, b.BuildID); err != nil {
			return fmt.Errorf("pgstore: set current build of %s: %w", b.Name, err)
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, TemplatesChannel, b.BuildID)
		return err
	})
}

// CurrentBuilds returns every template's current build, by template name.
func (s *Store) CurrentBuilds(ctx context.Context) ([]Build, error) {
	rows, err := s.pool.Query(ctx, `SELECT b.build_id, b.name, b.host_class, b.manifest, b.mem_sha256, b.state_sha256,
		b.root_sha256, b.size_bytes, b.memory_mib, b.vcpus, b.default_ttl_s, b.published_ms
		FROM templates t JOIN template_builds b ON b.build_id = t.current_build ORDER BY t.name`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: current builds: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Build, error) {
		var (
			b          Build
			ttlS       int
			publishedM int64
		)
		err := r.Scan(&b.BuildID, &b.Name, &b.HostClass, &b.Manifest, &b.MemSHA256, &b.StateSHA256, &b.RootSHA256,
			&b.SizeBytes, &b.MemoryMiB, &b.VCPUs, &ttlS, &publishedM)
		b.DefaultTTL, b.PublishedAt = time.Duration(ttlS)*time.Second, fromMS(publishedM)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: current builds: %w", mapErr(err))
	}
	return out, nil
}

// NodeBuild is one node's report of one build.
type NodeBuild struct {
	Node, Build, State, Detail string
}

// NodeBuilds returns every node's reports of the current builds.
func (s *Store) NodeBuilds(ctx context.Context) ([]NodeBuild, error) {
	rows, err := s.pool.Query(ctx, `SELECT n.node_id, n.build_id, n.state, n.detail FROM node_templates n
		JOIN templates t ON t.current_build = n.build_id ORDER BY n.node_id, n.build_id`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: node builds: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (NodeBuild, error) {
		var nb NodeBuild
		return nb, r.Scan(&nb.Node, &nb.Build, &nb.State, &nb.Detail)
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: node builds: %w", mapErr(err))
	}
	return out, nil
}

// ListenTemplates calls fn after every notification on TemplatesChannel
// until ctx ends or the connection fails (the error; the caller listens
// again, and reads the builds itself meanwhile).
func (s *Store) ListenTemplates(ctx context.Context, fn func()) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: listen: %w", mapErr(err))
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+TemplatesChannel); err != nil {
		return fmt.Errorf("pgstore: listen: %w", mapErr(err))
	}
	defer func() {
		// The connection goes back to the pool: stop listening on it.
		_, _ = conn.Exec(context.WithoutCancel(ctx), "UNLISTEN *")
	}()
	for {
		if _, err := conn.Conn().WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("pgstore: listen: %w", mapErr(err))
		}
		fn()
	}
}
