package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// AuditRecord is one entry of the audit log. It names who did what to which
// sandbox and how it went; it never holds command text, file content or file
// paths (put a path's SHA-256 in Detail if it must be correlated).
//
// Seq, Time, PrevHash and Hash are assigned by AppendAudit; values the
// caller puts there are ignored.
type AuditRecord struct {
	// Seq is the record's position in the chain: 1 for the first record,
	// then consecutive with no gaps.
	Seq int64
	// Time is when the record was appended (UTC, ms precision). It never
	// decreases along the chain: if the wall clock steps back, the previous
	// record's time is used.
	Time time.Time
	// Tenant is the tenant acting, "" for operator and system events.
	Tenant string
	// SandboxID is the sandbox concerned, "" for none.
	SandboxID string
	// ParentID is the sandbox it was forked from, "" for none.
	ParentID string
	// Template is the template concerned, "" for none.
	Template string
	// Event is what happened: one of the Event* names (events.go);
	// [a-z][a-z0-9_]{0,31}, required.
	Event string
	// Metadata is the sandbox's (or request's) caller labels, copied so the
	// record answers "what touched document X" on its own. At most 64
	// pairs; nil and empty are the same.
	Metadata map[string]string
	// ExitCode is the exit status of an exec, nil when the event has none.
	ExitCode *int
	// Bytes is the number of bytes moved (file written or read, output
	// returned); >= 0.
	Bytes int64
	// DurationMS is how long the operation took in milliseconds; >= 0.
	DurationMS int64
	// Outcome is "ok" or the errdefs code of the failure ("not_found",
	// "deadline_exceeded", ...); [a-z][a-z0-9_]{0,31}, required.
	Outcome string
	// Detail holds small non-content facts ("path_hmac", "timed_out",
	// "signal"); at most 64 pairs, values at most 256 bytes, and keys that
	// name content ("cmd", "path", "stdout", ...) are refused.
	Detail map[string]string
	// TenantSeq is the record's number among its tenant's records: 1,
	// 2, ... with no gaps (what a tenant sees as "seq" through the API; the
	// global Seq would tell it how much the other tenants did). Assigned
	// by AppendAudit; not hashed, checked by VerifyAudit against the chain.
	TenantSeq int64
	// PrevHash is the Hash of record Seq-1, "" for the first record.
	PrevHash string
	// Hash is hex(sha256(PrevHash || canonical JSON of every other field)).
	Hash string
}

// auditHashVersion is part of every hashed record, so the canonical form can
// change later without old records becoming unverifiable.
const auditHashVersion = 1

// canonicalAudit is the exact structure hashed. Its JSON is Go's
// encoding/json output (struct fields in this order, map keys sorted, nil
// maps as {}, no HTML escaping, no trailing newline). Never reorder, rename
// or drop a field: bump auditHashVersion and branch instead.
type canonicalAudit struct {
	V          int               `json:"v"`
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
}

// AuditHash computes r's Hash: hex(sha256(PrevHash || canonicalJSON(r))).
// It is the one canonical audit hash: every store that keeps audit
// records (this one, and the cluster's) calls it rather than hashing on
// its own, so a record verifies wherever it is kept.
func AuditHash(r AuditRecord) (string, error) {
	body, err := canonicalJSON(r)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(r.PrevHash))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// canonicalJSON is the hashed form of every field of r except Hash.
func canonicalJSON(r AuditRecord) ([]byte, error) {
	c := canonicalAudit{
		V:          auditHashVersion,
		Seq:        r.Seq,
		TimeMS:     toMS(r.Time),
		Tenant:     r.Tenant,
		SandboxID:  r.SandboxID,
		ParentID:   r.ParentID,
		Template:   r.Template,
		Event:      r.Event,
		Metadata:   nonNil(r.Metadata),
		ExitCode:   r.ExitCode,
		Bytes:      r.Bytes,
		DurationMS: r.DurationMS,
		Outcome:    r.Outcome,
		Detail:     nonNil(r.Detail),
		PrevHash:   r.PrevHash,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("encode audit record %d: %w", r.Seq, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

var auditWordRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// contentDetailKeys are Detail keys that could only hold what the audit log
// must never hold. A denylist cannot catch everything; it catches the
// obvious mistake of logging the command or the path itself.
var contentDetailKeys = map[string]bool{
	"cmd": true, "command": true, "args": true, "argv": true, "env": true,
	"path": true, "file": true, "filename": true, "dir": true,
	"content": true, "data": true, "body": true, "text": true,
	"stdin": true, "stdout": true, "stderr": true, "output": true,
}

const maxDetailValue = 256

// ValidateAudit reports, as InvalidArgument, a record no audit log may
// hold: a malformed event, outcome, tenant, id or template, negative
// counts, oversized maps, or detail keys that name content.
func ValidateAudit(r AuditRecord) error {
	if !auditWordRE.MatchString(r.Event) {
		return errdefs.InvalidArgument("invalid audit event %q: want [a-z][a-z0-9_]{0,31}", r.Event)
	}
	if !auditWordRE.MatchString(r.Outcome) {
		return errdefs.InvalidArgument("invalid audit outcome %q: want \"ok\" or an error code", r.Outcome)
	}
	if r.Tenant != "" {
		if err := ValidateTenant(r.Tenant); err != nil {
			return err
		}
	}
	if r.SandboxID != "" {
		if err := ValidateID("sandbox id", r.SandboxID); err != nil {
			return err
		}
	}
	if r.ParentID != "" {
		if err := ValidateID("parent sandbox id", r.ParentID); err != nil {
			return err
		}
	}
	if r.Template != "" {
		if err := ValidateTemplateName(r.Template); err != nil {
			return err
		}
	}
	if r.Bytes < 0 || r.DurationMS < 0 {
		return errdefs.InvalidArgument("negative bytes or duration in audit record")
	}
	if err := validateStringMap("audit metadata", r.Metadata, maxMetadataValue); err != nil {
		return err
	}
	if err := validateStringMap("audit detail", r.Detail, maxDetailValue); err != nil {
		return err
	}
	for k := range r.Detail {
		if contentDetailKeys[strings.ToLower(k)] {
			return errdefs.InvalidArgument("audit detail key %q would hold content; the audit log stores ids and metadata only", k)
		}
	}
	return nil
}

// AppendAudit appends r to the audit log and returns it with Seq, Time,
// PrevHash and Hash assigned. Reading the head, inserting the record and
// moving the head happen in one IMMEDIATE transaction, so any number of
// concurrent appenders (goroutines or processes) produce one linear chain.
func (s *Store) AppendAudit(ctx context.Context, r AuditRecord) (AuditRecord, error) {
	if err := ValidateAudit(r); err != nil {
		return AuditRecord{}, fmt.Errorf("store: append audit %s: %w", r.Event, err)
	}
	r, err := roundTripMaps(r)
	if err != nil {
		return AuditRecord{}, fmt.Errorf("store: append audit %s: %w", r.Event, err)
	}
	if s.auditRefused != nil {
		return AuditRecord{}, fmt.Errorf("store: append audit %s: %w", r.Event, s.auditRefused)
	}
	// The anchor's lock spans the append and its anchor line, so lines
	// are written in the chain's order.
	unlock, err := s.anchor.lock()
	if err != nil {
		return AuditRecord{}, fmt.Errorf("store: append audit %s: %w", r.Event, err)
	}
	defer unlock()
	out, err := s.appendChained(ctx, r)
	if err != nil {
		return AuditRecord{}, fmt.Errorf("store: append audit %s: %w", r.Event, err)
	}
	if err := s.anchor.record(out.Seq, out.Hash); err != nil {
		return out, fmt.Errorf("store: audit record %d appended but not anchored: %w", out.Seq, err)
	}
	return out, nil
}

// appendChained chains r after the head and writes it, in one
// transaction.
func (s *Store) appendChained(ctx context.Context, r AuditRecord) (AuditRecord, error) {
	var out AuditRecord
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		rec, err := s.chainAudit(ctx, tx, r)
		if err != nil {
			return err
		}
		if err := insertAudit(ctx, tx, rec); err != nil {
			return err
		}
		out = rec
		return nil
	})
	return out, err
}

// roundTripMaps returns r with its maps as a reader will get them back,
// so the hash computed on append is the hash VerifyAudit recomputes.
func roundTripMaps(r AuditRecord) (AuditRecord, error) {
	md, err := EncodeMap(r.Metadata)
	if err != nil {
		return AuditRecord{}, err
	}
	detail, err := EncodeMap(r.Detail)
	if err != nil {
		return AuditRecord{}, err
	}
	r.Metadata, _ = DecodeMap(md)
	r.Detail, _ = DecodeMap(detail)
	return r, nil
}

// chainAudit numbers r after the chain's head (globally and among its
// tenant's records), times it no earlier than the head and hashes it.
// It refuses a head behind the anchor.
func (s *Store) chainAudit(ctx context.Context, tx *sql.Tx, r AuditRecord) (AuditRecord, error) {
	var headSeq int64
	var headHash string
	err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM audit_head WHERE id = 1`).Scan(&headSeq, &headHash)
	if errors.Is(err, sql.ErrNoRows) {
		return r, errdefs.FailedPrecondition("audit head is missing; the log has been tampered with")
	}
	if err != nil {
		return r, mapErr(err)
	}
	if err := behindAnchor(s.anchor, headSeq, headHash); err != nil {
		return r, err
	}
	now := toMS(s.now())
	if headSeq > 0 {
		var prevMS int64
		err := tx.QueryRowContext(ctx, `SELECT time_ms FROM audit WHERE seq = ?`, headSeq).Scan(&prevMS)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return r, mapErr(err)
		}
		now = max(now, prevMS)
	}
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(tenant_seq), 0) + 1 FROM audit WHERE tenant = ?`, r.Tenant).Scan(&r.TenantSeq); err != nil {
		return r, mapErr(err)
	}
	r.Seq = headSeq + 1
	r.Time = fromMS(now)
	r.PrevHash = headHash
	if r.Hash, err = AuditHash(r); err != nil {
		return r, err
	}
	return r, nil
}

// insertAudit writes a chained record, its metadata index rows, and moves
// the head to it.
func insertAudit(ctx context.Context, tx *sql.Tx, rec AuditRecord) error {
	md, err := EncodeMap(rec.Metadata)
	if err != nil {
		return err
	}
	detail, err := EncodeMap(rec.Detail)
	if err != nil {
		return err
	}
	var exit sql.NullInt64
	if rec.ExitCode != nil {
		exit = sql.NullInt64{Int64: int64(*rec.ExitCode), Valid: true}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO audit
		(seq, time_ms, tenant, sandbox_id, parent_id, template, event, metadata, exit_code,
		 bytes, duration_ms, outcome, detail, prev_hash, hash, tenant_seq)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		rec.Seq, toMS(rec.Time), rec.Tenant, rec.SandboxID, rec.ParentID, rec.Template, rec.Event, md, exit,
		rec.Bytes, rec.DurationMS, rec.Outcome, detail, rec.PrevHash, rec.Hash, rec.TenantSeq); err != nil {
		return mapErr(err)
	}
	for k, v := range rec.Metadata {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO audit_metadata (seq, key, value) VALUES (?, ?, ?)`, rec.Seq, k, v); err != nil {
			return mapErr(err)
		}
	}
	if _, err := tx.ExecContext(ctx,
		`UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1`, rec.Seq, rec.Hash); err != nil {
		return mapErr(err)
	}
	return nil
}

// behindAnchor refuses to extend a chain whose head is behind what the
// anchor saw (records deleted) or differs from it at the same record (the
// chain rewritten): appending would bury the evidence under new records.
func behindAnchor(a *anchor, headSeq int64, headHash string) error {
	last := a.newest()
	switch {
	case headSeq < last.seq:
		return errdefs.FailedPrecondition("the audit log ends at record %d but its anchor %s saw record %d: records were deleted; "+
			"the log is not written to until an operator investigates (airlock audit verify)", headSeq, a.path, last.seq)
	case headSeq == last.seq && headHash != last.hash:
		return errdefs.FailedPrecondition("audit record %d is not the one its anchor %s saw: the log was rewritten; "+
			"it is not written to until an operator investigates (airlock audit verify)", headSeq, a.path)
	}
	return nil
}
