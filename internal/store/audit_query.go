package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// AuditFilter selects audit records for QueryAudit. Zero fields match
// everything.
type AuditFilter struct {
	// Tenant restricts to one tenant; "" means every tenant.
	Tenant string
	// SandboxID restricts to records about one sandbox.
	SandboxID string
	// Metadata lists pairs the record's metadata must all contain.
	Metadata map[string]string
	// Since keeps records at or after this time (inclusive).
	Since time.Time
	// Until keeps records strictly before this time (exclusive).
	Until time.Time
	// Events keeps records whose event is any of these.
	Events []string
	// AfterSeq keeps records with Seq > AfterSeq: the cursor for paging
	// (pass the last Seq of the previous page).
	AfterSeq int64
	// AfterTenantSeq keeps records with TenantSeq > AfterTenantSeq: a
	// tenant's cursor; only with Tenant.
	AfterTenantSeq int64
	// Limit caps the number of records returned; 0 means no cap.
	Limit int
}

// Validate reports, as InvalidArgument, a filter no store answers: a
// malformed tenant, a tenant cursor without a tenant, an oversized
// metadata filter or a negative limit.
func (f AuditFilter) Validate() error {
	if f.Tenant != "" {
		if err := ValidateTenant(f.Tenant); err != nil {
			return err
		}
	}
	if f.AfterTenantSeq > 0 && f.Tenant == "" {
		return errdefs.InvalidArgument("a tenant cursor needs a tenant")
	}
	if err := validateStringMap("metadata filter", f.Metadata, maxMetadataValue); err != nil {
		return err
	}
	if f.Limit < 0 {
		return errdefs.InvalidArgument("negative limit")
	}
	return nil
}

// QueryAudit returns the records matching f in seq order.
func (s *Store) QueryAudit(ctx context.Context, f AuditFilter) ([]AuditRecord, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("store: query audit: %w", err)
	}
	var (
		where []string
		args  []any
	)
	if f.Tenant != "" {
		where = append(where, `tenant = ?`)
		args = append(args, f.Tenant)
	}
	if f.SandboxID != "" {
		where = append(where, `sandbox_id = ?`)
		args = append(args, f.SandboxID)
	}
	if !f.Since.IsZero() {
		where = append(where, `time_ms >= ?`)
		args = append(args, toMS(f.Since))
	}
	if !f.Until.IsZero() {
		where = append(where, `time_ms < ?`)
		args = append(args, toMS(f.Until))
	}
	if len(f.Events) > 0 {
		where = append(where, `event IN (`+placeholders(len(f.Events))+`)`)
		for _, e := range f.Events {
			args = append(args, e)
		}
	}
	if f.AfterSeq > 0 {
		where = append(where, `seq > ?`)
		args = append(args, f.AfterSeq)
	}
	if f.AfterTenantSeq > 0 {
		where = append(where, `tenant_seq > ?`)
		args = append(args, f.AfterTenantSeq)
	}
	if len(f.Metadata) > 0 {
		cond, cargs := metadataMatch("audit_metadata", "seq", f.Metadata)
		where = append(where, `seq IN (`+cond+`)`)
		args = append(args, cargs...)
	}
	q := `SELECT ` + auditColumns + ` FROM audit`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY seq`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: query audit: %w", mapErr(err))
	}
	defer rows.Close()
	var out []AuditRecord
	for rows.Next() {
		r, err := scanAudit(rows)
		if err != nil {
			return nil, fmt.Errorf("store: query audit: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: query audit: %w", mapErr(err))
	}
	return out, nil
}

const auditColumns = `seq, time_ms, tenant, sandbox_id, parent_id, template, event, metadata, exit_code,
	bytes, duration_ms, outcome, detail, prev_hash, hash, tenant_seq`

// decodeError is a stored audit row whose JSON columns do not decode.
type decodeError struct {
	seq int64
	err error
}

func (e *decodeError) Error() string { return fmt.Sprintf("audit record %d: %v", e.seq, e.err) }
func (e *decodeError) Unwrap() error { return e.err }

// scanAudit reads one audit row; extra receives any columns selected after
// auditColumns.
func scanAudit(r rowScanner, extra ...any) (AuditRecord, error) {
	var (
		rec        AuditRecord
		timeMS     int64
		md, detail string
		exit       sql.NullInt64
		tseq       sql.NullInt64
	)
	dest := append([]any{&rec.Seq, &timeMS, &rec.Tenant, &rec.SandboxID, &rec.ParentID, &rec.Template,
		&rec.Event, &md, &exit, &rec.Bytes, &rec.DurationMS, &rec.Outcome, &detail, &rec.PrevHash, &rec.Hash, &tseq},
		extra...)
	if err := r.Scan(dest...); err != nil {
		return AuditRecord{}, err
	}
	rec.Time = fromMS(timeMS)
	rec.TenantSeq = tseq.Int64
	if exit.Valid {
		c := int(exit.Int64)
		rec.ExitCode = &c
	}
	var err error
	if rec.Metadata, err = DecodeMap(md); err != nil {
		return AuditRecord{}, &decodeError{seq: rec.Seq, err: fmt.Errorf("metadata: %w", err)}
	}
	if rec.Detail, err = DecodeMap(detail); err != nil {
		return AuditRecord{}, &decodeError{seq: rec.Seq, err: fmt.Errorf("detail: %w", err)}
	}
	return rec, nil
}
