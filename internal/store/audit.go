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
	"maps"
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

// VerifyReport is the result of walking the audit chain.
type VerifyReport struct {
	// Records is the number of records that verified before the walk
	// stopped: all of them when OK.
	Records int64
	// OK is true when every record, the links between them and the head
	// agree.
	OK bool
	// FirstBadSeq is the lowest seq at which the chain stops being
	// trustworthy (0 when OK): the modified record, the first missing record
	// of a gap or of a deleted tail, or the first record whose link to its
	// predecessor is broken. Records below it verified.
	FirstBadSeq int64
	// Problem says what is wrong at FirstBadSeq, "" when OK.
	Problem string
	// Anchor is the file outside the database the head is also written
	// to; AnchorSeq the newest record it saw (checked against the log);
	// AnchorAppendOnly whether it carries the append-only flag.
	Anchor           string
	AnchorSeq        int64
	AnchorAppendOnly bool
	// LastHash is the hash of the last record that verified. Recording it
	// outside this database (a log line, another host) is what lets a later
	// Verify detect a rewrite of the whole chain by someone with write
	// access to the file.
	LastHash string
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

// VerifyAudit walks the whole chain in seq order, one row at a time, inside
// one read transaction (a consistent snapshot; appends continue meanwhile),
// and reports the first place it breaks: a record whose content no longer
// matches its hash, a record that does not link to its predecessor (a
// deletion, insertion or reordering), a gap in seq, a time that goes
// backwards, a metadata index that disagrees with its record, or a head that
// does not match the last record (a deleted tail).
//
// A broken chain is a report, not an error; the error is for failing to read
// the chain at all.
//
// What it cannot detect on its own: someone with write access to the file
// who rewrites every record from some point on and the head to match. Compare
// LastHash with a copy kept elsewhere for that.
func (s *Store) VerifyAudit(ctx context.Context) (VerifyReport, error) {
	// The anchor's length first: it is written after each commit, so what
	// it held then is at most what the snapshot read below will hold.
	anchorLen := anchorSize(s.anchor.path)
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return VerifyReport{}, fmt.Errorf("store: verify audit: %w", mapErr(err))
	}
	defer tx.Rollback() //nolint:errcheck // read-only; nothing to undo

	// Reading the head first starts the snapshot the walk below sees.
	var (
		headSeq  int64
		headHash string
		haveHead = true
	)
	err = tx.QueryRowContext(ctx, `SELECT seq, hash FROM audit_head WHERE id = 1`).Scan(&headSeq, &headHash)
	if errors.Is(err, sql.ErrNoRows) {
		haveHead = false
	} else if err != nil {
		return VerifyReport{}, fmt.Errorf("store: verify audit: read head: %w", mapErr(err))
	}

	rep, last, err := walkAudit(ctx, tx)
	if err != nil {
		return VerifyReport{}, fmt.Errorf("store: verify audit: %w", err)
	}
	if !rep.OK {
		return rep, nil
	}
	bad := func(seq int64, format string, args ...any) (VerifyReport, error) {
		rep.OK, rep.FirstBadSeq, rep.Problem = false, seq, fmt.Sprintf(format, args...)
		return rep, nil
	}
	switch {
	case !haveHead:
		return bad(last+1, "audit head row is missing")
	case headSeq > last:
		return bad(last+1, "records %d..%d are missing: the head is at %d but the last record is %d (tail deleted)",
			last+1, headSeq, headSeq, last)
	case headSeq < last:
		return bad(headSeq+1, "records after %d are not covered by the head (head rolled back or records added around it)", headSeq)
	case headHash != rep.LastHash:
		return bad(max(headSeq, 1), "head hash does not match record %d", headSeq)
	}
	// The anchor outside the database: every line of it must name a
	// record that is still there with the same hash. That catches a tail
	// deleted together with a rewritten head, a chain recomputed from some
	// record on, and either of them followed by new appends.
	rep.Anchor = s.anchor.path
	rep.AnchorAppendOnly = s.anchor.appendOnly
	return checkAnchor(ctx, tx, s.anchor.path, anchorLen, rep, last)
}

// checkAnchor compares every anchor line with the record of its seq in
// the chain walked to last (contiguous, verified), completing rep.
func checkAnchor(ctx context.Context, tx *sql.Tx, path string, anchorLen int64, rep VerifyReport, last int64) (VerifyReport, error) {
	bad := func(seq int64, format string, args ...any) (VerifyReport, error) {
		rep.OK, rep.FirstBadSeq, rep.Problem = false, seq, fmt.Sprintf(format, args...)
		return rep, nil
	}
	cur, err := openAnchorCursor(path, anchorLen)
	if err != nil {
		return bad(last+1, "audit anchor unreadable: %v", err)
	}
	defer cur.close()
	rows, err := tx.QueryContext(ctx, `SELECT seq, hash FROM audit ORDER BY seq`)
	if err != nil {
		return VerifyReport{}, fmt.Errorf("store: verify audit: %w", mapErr(err))
	}
	defer rows.Close()
	for rows.Next() && cur.ok {
		var seq int64
		var hash string
		if err := rows.Scan(&seq, &hash); err != nil {
			return VerifyReport{}, fmt.Errorf("store: verify audit: %w", mapErr(err))
		}
		if seq < cur.cur.seq {
			continue
		}
		rep.AnchorSeq = cur.cur.seq
		if hash != cur.cur.hash {
			return bad(seq, "record %d is not the one the anchor saw (the chain was rewritten from there or before)", seq)
		}
		cur.next()
	}
	if err := rows.Err(); err != nil {
		return VerifyReport{}, fmt.Errorf("store: verify audit: %w", mapErr(err))
	}
	for cur.ok {
		rep.AnchorSeq = cur.cur.seq
		cur.next()
	}
	switch {
	case cur.err != nil:
		return bad(last+1, "audit anchor: %v", cur.err)
	case rep.AnchorSeq > last:
		return bad(last+1, "records %d..%d are missing: the anchor outside the database saw record %d, the log ends at %d (tail deleted and head rewritten)",
			last+1, rep.AnchorSeq, rep.AnchorSeq, last)
	}
	return rep, nil
}

// walkAudit streams the chain and checks each record against its
// predecessor. It returns the report so far (OK if every record verified)
// and the last seq that verified.
func walkAudit(ctx context.Context, tx *sql.Tx) (rep VerifyReport, last int64, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+auditColumns+`,
		(SELECT json_group_object(m.key, m.value) FROM audit_metadata m WHERE m.seq = audit.seq)
		FROM audit ORDER BY seq`)
	if err != nil {
		return rep, 0, mapErr(err)
	}
	defer rows.Close()

	rep.OK = true
	bad := func(seq int64, format string, args ...any) {
		rep.OK, rep.FirstBadSeq, rep.Problem = false, seq, fmt.Sprintf(format, args...)
	}
	var prevMS int64
	tenantSeqs := map[string]int64{} // tenant -> its last record's number
	for rows.Next() {
		var indexed string
		r, err := scanAudit(rows, &indexed)
		if err != nil {
			// A row whose JSON columns do not decode was written by
			// something other than AppendAudit: report it, do not fail.
			// (Rows come in seq order, so the first undecodable row is at
			// last+1 or later; anything between is missing.)
			var de *decodeError
			if !errors.As(err, &de) {
				return rep, last, mapErr(err)
			}
			bad(last+1, "record %d cannot be decoded: %v", de.seq, de.err)
			break
		}
		want := last + 1
		switch {
		case r.Seq != want:
			bad(want, "record %d is missing (the next record is %d)", want, r.Seq)
		case r.PrevHash != rep.LastHash:
			bad(r.Seq, "record %d does not link to record %d (deleted, inserted or reordered)", r.Seq, last)
		case toMS(r.Time) < prevMS:
			bad(r.Seq, "record %d is older than record %d", r.Seq, last)
		}
		if !rep.OK {
			break
		}
		h, err := AuditHash(r)
		if err != nil {
			return rep, last, err
		}
		if h != r.Hash {
			bad(r.Seq, "record %d does not match its hash (modified)", r.Seq)
			break
		}
		idx, err := DecodeMap(indexed)
		if err != nil || !maps.Equal(idx, r.Metadata) {
			bad(r.Seq, "metadata index of record %d does not match the record", r.Seq)
			break
		}
		if want := tenantSeqs[r.Tenant] + 1; r.TenantSeq != want {
			bad(r.Seq, "record %d is numbered %d among its tenant's records, want %d", r.Seq, r.TenantSeq, want)
			break
		}
		tenantSeqs[r.Tenant] = r.TenantSeq
		rep.Records++
		rep.LastHash = r.Hash
		last = r.Seq
		prevMS = toMS(r.Time)
	}
	if err := rows.Err(); err != nil {
		return rep, last, mapErr(err)
	}
	return rep, last, nil
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
