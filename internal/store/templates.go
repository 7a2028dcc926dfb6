package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Template is a baked template: a spec and the snapshot built from it.
type Template struct {
	// Name identifies the template ([a-z0-9][a-z0-9._-]{0,62}); the primary
	// key, so PutTemplate with an existing name replaces that row.
	Name string
	// Hash is the content hash of the spec and its pinned inputs; equal
	// hashes mean an equivalent bake. Non-empty.
	Hash string
	// Spec is the template spec as JSON; its shape belongs to the template
	// package, the store only checks that it is valid JSON.
	Spec json.RawMessage
	// Dir is the host directory holding the baked snapshot. Non-empty.
	Dir string
	// BuiltAt is when the bake finished (UTC, ms). Non-zero.
	BuiltAt time.Time
	// SizeBytes is the on-disk size of Dir; >= 0.
	SizeBytes int64
}

// PutTemplate inserts t, or replaces the template of the same name.
func (s *Store) PutTemplate(ctx context.Context, t Template) error {
	if err := ValidateTemplateName(t.Name); err != nil {
		return fmt.Errorf("store: put template: %w", err)
	}
	switch {
	case t.Hash == "":
		return fmt.Errorf("store: put template %s: %w", t.Name, errdefs.InvalidArgument("empty hash"))
	case t.Dir == "":
		return fmt.Errorf("store: put template %s: %w", t.Name, errdefs.InvalidArgument("empty dir"))
	case t.BuiltAt.IsZero():
		return fmt.Errorf("store: put template %s: %w", t.Name, errdefs.InvalidArgument("BuiltAt is required"))
	case t.SizeBytes < 0:
		return fmt.Errorf("store: put template %s: %w", t.Name, errdefs.InvalidArgument("negative size"))
	case !json.Valid(t.Spec):
		return fmt.Errorf("store: put template %s: %w", t.Name, errdefs.InvalidArgument("spec is not valid JSON"))
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO templates (name, hash, spec, dir, built_ms, size_bytes)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, spec = excluded.spec, dir = excluded.dir,
			built_ms = excluded.built_ms, size_bytes = excluded.size_bytes`,
		t.Name, t.Hash, string(t.Spec), t.Dir, toMS(t.BuiltAt), t.SizeBytes)
	if err != nil {
		return fmt.Errorf("store: put template %s: %w", t.Name, mapErr(err))
	}
	return nil
}

// GetTemplate returns the template called name, NotFound if there is none.
func (s *Store) GetTemplate(ctx context.Context, name string) (Template, error) {
	if err := ValidateTemplateName(name); err != nil {
		return Template{}, fmt.Errorf("store: get template: %w", err)
	}
	t, err := scanTemplate(s.db.QueryRowContext(ctx, `SELECT `+templateColumns+` FROM templates WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return Template{}, errdefs.NotFound("template %s not found", name)
	}
	if err != nil {
		return Template{}, fmt.Errorf("store: get template %s: %w", name, mapErr(err))
	}
	return t, nil
}

// ListTemplates returns every template, by name.
func (s *Store) ListTemplates(ctx context.Context) ([]Template, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+templateColumns+` FROM templates ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: list templates: %w", mapErr(err))
	}
	defer rows.Close()
	var out []Template
	for rows.Next() {
		t, err := scanTemplate(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list templates: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list templates: %w", mapErr(err))
	}
	return out, nil
}

// DeleteTemplate removes the template called name. It is NotFound if there
// is none, and FailedPrecondition while a running sandbox was restored from
// it: that sandbox's memory is still mapped from the template's files.
func (s *Store) DeleteTemplate(ctx context.Context, name string) error {
	if err := ValidateTemplateName(name); err != nil {
		return fmt.Errorf("store: delete template: %w", err)
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var running int
		if err := tx.QueryRowContext(ctx,
			`SELECT count(*) FROM sandboxes WHERE template = ? AND state = 'running'`, name).Scan(&running); err != nil {
			return mapErr(err)
		}
		if running > 0 {
			return errdefs.FailedPrecondition("template %s is in use by %d running sandbox(es)", name, running)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM templates WHERE name = ?`, name)
		if err != nil {
			return mapErr(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return errdefs.NotFound("template %s not found", name)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: delete template %s: %w", name, err)
	}
	return nil
}

const templateColumns = `name, hash, spec, dir, built_ms, size_bytes`

func scanTemplate(r rowScanner) (Template, error) {
	var (
		t     Template
		spec  string
		built int64
	)
	if err := r.Scan(&t.Name, &t.Hash, &spec, &t.Dir, &built, &t.SizeBytes); err != nil {
		return Template{}, err
	}
	t.Spec = json.RawMessage(spec)
	t.BuiltAt = fromMS(built)
	return t, nil
}
