package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Sandbox states. A sandbox is inserted running (or directly in a terminal
// state when its creation failed) and moves at most once, from running to one
// of the terminal states.
const (
	StateRunning = "running" // its VM may exist; the reaper owns it past Deadline
	StateKilled  = "killed"  // ended by a client's kill
	StateExpired = "expired" // ended by the TTL reaper
	StateFailed  = "failed"  // ended by an error (create, restore or crash)
)

// NoNetSlot is Sandbox.NetSlot for a sandbox that holds no network slot.
const NoNetSlot = -1

func validState(s string) bool {
	switch s {
	case StateRunning, StateKilled, StateExpired, StateFailed:
		return true
	}
	return false
}

// Sandbox is the persisted state of one sandbox: enough for a restarted
// daemon to find its QEMU process, state directory and network slot and reap
// them. It holds no document content.
type Sandbox struct {
	// ID is the sandbox id (UUID or other opaque id, no '/'); unique,
	// immutable.
	ID string
	// Tenant owns the sandbox; a valid tenant name, immutable. Reads scoped
	// to another tenant see NotFound.
	Tenant string
	// Template is the name of the template the sandbox was restored from;
	// immutable. DeleteTemplate refuses while a running sandbox names it.
	Template string
	// Metadata is the caller's labels (at most 64 pairs); immutable after
	// PutSandbox. Nil and empty are the same.
	Metadata map[string]string
	// State is one of the State* constants; it changes once at most, from
	// running to a terminal state, through UpdateSandboxState.
	State string
	// CreatedAt is when the sandbox was created (UTC, ms); immutable.
	CreatedAt time.Time
	// Deadline is when the reaper kills the sandbox if it is still running
	// (UTC, ms); not before CreatedAt; immutable.
	Deadline time.Time
	// EndedAt is when the sandbox left the running state: nil exactly while
	// State is running.
	EndedAt *time.Time
	// PID is the host pid of the sandbox's VMM process, 0 when unknown or not
	// started. A restarted daemon must check the process still is that VMM
	// (pids are reused) before signalling it.
	PID int
	// StateDir is the host directory holding the sandbox's private state
	// (memory file, sockets), "" when none; removed when the sandbox ends.
	StateDir string
	// Jailed is whether its VMM runs in a jail (vmm/jail); immutable. False
	// only where the operator turned jailing off.
	Jailed bool
	// ParentID is the sandbox this one was forked from, "" for none. The
	// parent exists, and belongs to the same tenant.
	ParentID string
	// Egress is the current egress policy as JSON, nil when none was set.
	// Its shape belongs to netpool; the store only checks it is valid JSON.
	Egress json.RawMessage
	// NetSlot is the index of the network slot (netns, tap, /30) the sandbox
	// holds, NoNetSlot (-1) for none. No two running sandboxes share a slot;
	// the schema enforces it.
	NetSlot int
	// PausedDir is where a paused sandbox's saved state is on disk, ""
	// unless paused. A paused sandbox is running (not ended; the reaper
	// still owns it past Deadline) with no VMM: PID 0, StateDir "" and
	// NetSlot NoNetSlot. Set by PauseSandbox, cleared by ResumeSandbox.
	PausedDir string
}

// SandboxFilter selects sandboxes for ListSandboxes. Zero fields match
// everything.
type SandboxFilter struct {
	// Tenant restricts to one tenant; "" means every tenant.
	Tenant string
	// Metadata lists pairs that must all be present with exactly these
	// values.
	Metadata map[string]string
	// States restricts to sandboxes in any of these states; empty means all.
	States []string
}

// PutSandbox inserts a new sandbox. An existing id is AlreadyExists, as is a
// network slot already held by a running sandbox; a parent that does not
// exist or belongs to another tenant is NotFound.
func (s *Store) PutSandbox(ctx context.Context, sb Sandbox) error {
	if err := validateSandbox(sb); err != nil {
		return fmt.Errorf("store: put sandbox: %w", err)
	}
	md, err := EncodeMap(sb.Metadata)
	if err != nil {
		return fmt.Errorf("store: put sandbox %s: encode metadata: %w", sb.ID, err)
	}
	var endedMS sql.NullInt64
	if sb.EndedAt != nil {
		endedMS = sql.NullInt64{Int64: toMS(*sb.EndedAt), Valid: true}
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sandboxes WHERE id = ?)`, sb.ID).Scan(&exists); err != nil {
			return mapErr(err)
		}
		if exists {
			return errdefs.AlreadyExists("sandbox %s already exists", sb.ID)
		}
		if sb.ParentID != "" {
			// A fork never crosses tenants. Same message for "missing" and
			// "someone else's", so ids do not leak.
			var parentTenant string
			err := tx.QueryRowContext(ctx, `SELECT tenant FROM sandboxes WHERE id = ?`, sb.ParentID).Scan(&parentTenant)
			if errors.Is(err, sql.ErrNoRows) || (err == nil && parentTenant != sb.Tenant) {
				return errdefs.NotFound("parent sandbox %s not found", sb.ParentID)
			}
			if err != nil {
				return mapErr(err)
			}
		}
		if sb.State == StateRunning && sb.NetSlot >= 0 {
			var holder string
			err := tx.QueryRowContext(ctx,
				`SELECT id FROM sandboxes WHERE state = 'running' AND net_slot = ?`, sb.NetSlot).Scan(&holder)
			if err == nil {
				return errdefs.AlreadyExists("network slot %d is held by running sandbox %s", sb.NetSlot, holder)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return mapErr(err)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sandboxes
			(id, tenant, template, metadata, state, created_ms, deadline_ms, ended_ms, pid, state_dir, parent_id, egress, net_slot, jailed)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sb.ID, sb.Tenant, sb.Template, md, sb.State, toMS(sb.CreatedAt), toMS(sb.Deadline), endedMS,
			sb.PID, sb.StateDir, nullString(sb.ParentID), nullJSON(sb.Egress), sb.NetSlot, sb.Jailed)
		if err != nil {
			return mapErr(err)
		}
		for k, v := range sb.Metadata {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO sandbox_metadata (sandbox_id, key, value) VALUES (?, ?, ?)`, sb.ID, k, v); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: put sandbox %s: %w", sb.ID, err)
	}
	return nil
}

func validateSandbox(sb Sandbox) error {
	if err := ValidateID("sandbox id", sb.ID); err != nil {
		return err
	}
	if err := ValidateTenant(sb.Tenant); err != nil {
		return err
	}
	if err := ValidateTemplateName(sb.Template); err != nil {
		return err
	}
	if err := validateStringMap("metadata", sb.Metadata, maxMetadataValue); err != nil {
		return err
	}
	if !validState(sb.State) {
		return errdefs.InvalidArgument("invalid sandbox state %q", sb.State)
	}
	if sb.CreatedAt.IsZero() || sb.Deadline.IsZero() {
		return errdefs.InvalidArgument("sandbox %s: CreatedAt and Deadline are required", sb.ID)
	}
	if sb.Deadline.Before(sb.CreatedAt) {
		return errdefs.InvalidArgument("sandbox %s: deadline before creation", sb.ID)
	}
	if (sb.State == StateRunning) != (sb.EndedAt == nil) {
		return errdefs.InvalidArgument("sandbox %s: EndedAt must be set exactly when state is not running", sb.ID)
	}
	if sb.PID < 0 {
		return errdefs.InvalidArgument("sandbox %s: negative pid", sb.ID)
	}
	if sb.NetSlot < NoNetSlot {
		return errdefs.InvalidArgument("sandbox %s: net slot %d, want >= -1", sb.ID, sb.NetSlot)
	}
	if sb.ParentID != "" {
		if err := ValidateID("parent sandbox id", sb.ParentID); err != nil {
			return err
		}
		if sb.ParentID == sb.ID {
			return errdefs.InvalidArgument("sandbox %s is its own parent", sb.ID)
		}
	}
	if len(sb.Egress) > 0 && !json.Valid(sb.Egress) {
		return errdefs.InvalidArgument("sandbox %s: egress is not valid JSON", sb.ID)
	}
	return nil
}

// UpdateSandboxState moves a running sandbox to a terminal state (killed,
// expired or failed) ended at endedAt. A sandbox that has already ended is
// FailedPrecondition, so of a kill racing the reaper exactly one wins and the
// other learns it lost.
func (s *Store) UpdateSandboxState(ctx context.Context, id, state string, endedAt time.Time) error {
	if err := ValidateID("sandbox id", id); err != nil {
		return fmt.Errorf("store: update sandbox state: %w", err)
	}
	if !validState(state) || state == StateRunning {
		return fmt.Errorf("store: update sandbox %s: %w",
			id, errdefs.InvalidArgument("invalid target state %q: want killed, expired or failed", state))
	}
	if endedAt.IsZero() {
		return fmt.Errorf("store: update sandbox %s: %w", id, errdefs.InvalidArgument("endedAt is required"))
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var cur string
		err := tx.QueryRowContext(ctx, `SELECT state FROM sandboxes WHERE id = ?`, id).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return errdefs.NotFound("sandbox %s not found", id)
		}
		if err != nil {
			return mapErr(err)
		}
		if cur != StateRunning {
			return errdefs.FailedPrecondition("sandbox %s already %s", id, cur)
		}
		_, err = tx.ExecContext(ctx, `UPDATE sandboxes SET state = ?, ended_ms = ? WHERE id = ?`, state, toMS(endedAt), id)
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("store: update sandbox %s to %s: %w", id, state, err)
	}
	return nil
}

// GetSandbox returns the sandbox with the given id. When tenant is not "",
// a sandbox of any other tenant is NotFound, exactly like a missing one,
// so that one tenant cannot probe another's ids.
func (s *Store) GetSandbox(ctx context.Context, tenant, id string) (Sandbox, error) {
	if err := ValidateID("sandbox id", id); err != nil {
		return Sandbox{}, fmt.Errorf("store: get sandbox: %w", err)
	}
	q := `SELECT ` + sandboxColumns + ` FROM sandboxes WHERE id = ?`
	args := []any{id}
	if tenant != "" {
		if err := ValidateTenant(tenant); err != nil {
			return Sandbox{}, fmt.Errorf("store: get sandbox: %w", err)
		}
		q += ` AND tenant = ?`
		args = append(args, tenant)
	}
	sb, err := scanSandbox(s.db.QueryRowContext(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Sandbox{}, errdefs.NotFound("sandbox %s not found", id)
	}
	if err != nil {
		return Sandbox{}, fmt.Errorf("store: get sandbox %s: %w", id, mapErr(err))
	}
	return sb, nil
}

// ListSandboxes returns the sandboxes matching f, oldest first.
func (s *Store) ListSandboxes(ctx context.Context, f SandboxFilter) ([]Sandbox, error) {
	var (
		where []string
		args  []any
	)
	if f.Tenant != "" {
		if err := ValidateTenant(f.Tenant); err != nil {
			return nil, fmt.Errorf("store: list sandboxes: %w", err)
		}
		where = append(where, `tenant = ?`)
		args = append(args, f.Tenant)
	}
	if len(f.States) > 0 {
		for _, st := range f.States {
			if !validState(st) {
				return nil, fmt.Errorf("store: list sandboxes: %w", errdefs.InvalidArgument("invalid state %q", st))
			}
		}
		where = append(where, `state IN (`+placeholders(len(f.States))+`)`)
		for _, st := range f.States {
			args = append(args, st)
		}
	}
	if len(f.Metadata) > 0 {
		if err := validateStringMap("metadata filter", f.Metadata, maxMetadataValue); err != nil {
			return nil, fmt.Errorf("store: list sandboxes: %w", err)
		}
		cond, cargs := metadataMatch("sandbox_metadata", "sandbox_id", f.Metadata)
		where = append(where, `id IN (`+cond+`)`)
		args = append(args, cargs...)
	}
	return s.querySandboxes(ctx, "list sandboxes", where, args)
}

// OverdueSandboxes returns the running sandboxes whose deadline is at or
// before now: the reaper's work list, oldest deadline first.
func (s *Store) OverdueSandboxes(ctx context.Context, now time.Time) ([]Sandbox, error) {
	return s.querySandboxes(ctx, "overdue sandboxes",
		[]string{`state = 'running'`, `deadline_ms <= ?`}, []any{toMS(now)}, "deadline_ms, rowid")
}

// EndedSince returns up to limit sandboxes that ended at or after since,
// in the order they ended: what a cluster node ships to its control
// plane. Ends are stamped before they are written, so a reader that pages
// by time must read again a little before its last time.
func (s *Store) EndedSince(ctx context.Context, since time.Time, limit int) ([]Sandbox, error) {
	return s.querySandboxes(ctx, "ended sandboxes",
		[]string{`state <> 'running'`, `ended_ms >= ?`}, []any{toMS(since)}, fmt.Sprintf("ended_ms, id LIMIT %d", max(limit, 1)))
}

// LiveSandboxes returns every running sandbox, oldest first: what a
// restarted daemon must either re-adopt or reap.
func (s *Store) LiveSandboxes(ctx context.Context) ([]Sandbox, error) {
	return s.querySandboxes(ctx, "live sandboxes", []string{`state = 'running'`}, nil)
}

// SetSandboxDeadline moves a running sandbox's deadline (the reaper's and
// recovery's); an ended or missing sandbox is NotFound.
func (s *Store) SetSandboxDeadline(ctx context.Context, id string, deadline time.Time) error {
	if err := ValidateID("sandbox id", id); err != nil {
		return fmt.Errorf("store: set deadline: %w", err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE sandboxes SET deadline_ms = ? WHERE id = ? AND state = 'running' AND created_ms <= ?`,
		toMS(deadline), id, toMS(deadline))
	if err != nil {
		return fmt.Errorf("store: set deadline of sandbox %s: %w", id, mapErr(err))
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errdefs.NotFound("sandbox %s not found running", id)
	}
	return nil
}

// PauseSandbox records that a running sandbox's VMM is gone and its
// state saved in dir: it keeps running (its deadline counts), with no
// pid, state directory or network slot until ResumeSandbox. A sandbox
// that is not running, or is paused already, is FailedPrecondition.
func (s *Store) PauseSandbox(ctx context.Context, id, dir string) error {
	if err := ValidateID("sandbox id", id); err != nil {
		return fmt.Errorf("store: pause sandbox: %w", err)
	}
	if dir == "" {
		return fmt.Errorf("store: pause sandbox %s: %w", id, errdefs.InvalidArgument("paused state directory is required"))
	}
	return s.setRuntime(ctx, "pause", id, `paused_dir = ''`,
		`pid = 0, state_dir = '', net_slot = -1, paused_dir = ?`, dir)
}

// ResumeSandbox records that a paused sandbox runs again in the VMM pid
// with stateDir, holding netSlot (NoNetSlot: none), and is no longer
// paused. One that is not paused is FailedPrecondition; a slot another
// running sandbox holds is AlreadyExists.
func (s *Store) ResumeSandbox(ctx context.Context, id string, pid int, stateDir string, netSlot int) error {
	if err := ValidateID("sandbox id", id); err != nil {
		return fmt.Errorf("store: resume sandbox: %w", err)
	}
	if pid < 0 || netSlot < NoNetSlot {
		return fmt.Errorf("store: resume sandbox %s: %w", id, errdefs.InvalidArgument("pid %d or net slot %d out of range", pid, netSlot))
	}
	return s.setRuntime(ctx, "resume", id, `paused_dir != ''`,
		`pid = ?, state_dir = ?, net_slot = ?, paused_dir = ''`, pid, stateDir, netSlot)
}

// setRuntime updates a running sandbox's runtime columns (set, with
// args) where cond holds, or says why it could not.
func (s *Store) setRuntime(ctx context.Context, op, id, cond, set string, args ...any) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var state, paused string
		err := tx.QueryRowContext(ctx, `SELECT state, paused_dir FROM sandboxes WHERE id = ?`, id).Scan(&state, &paused)
		if errors.Is(err, sql.ErrNoRows) {
			return errdefs.NotFound("sandbox %s not found", id)
		}
		if err != nil {
			return mapErr(err)
		}
		if state != StateRunning {
			return errdefs.FailedPrecondition("sandbox %s is %s", id, state)
		}
		res, err := tx.ExecContext(ctx, `UPDATE sandboxes SET `+set+` WHERE id = ? AND state = 'running' AND `+cond, append(args, id)...)
		if err != nil {
			return mapErr(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if paused != "" {
				return errdefs.FailedPrecondition("sandbox %s is paused", id)
			}
			return errdefs.FailedPrecondition("sandbox %s is not paused", id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: %s sandbox %s: %w", op, id, err)
	}
	return nil
}

// SetSandboxEgress records the sandbox's current egress policy (valid JSON;
// nil or empty clears it).
func (s *Store) SetSandboxEgress(ctx context.Context, id string, egress json.RawMessage) error {
	if err := ValidateID("sandbox id", id); err != nil {
		return fmt.Errorf("store: set egress: %w", err)
	}
	if len(egress) > 0 && !json.Valid(egress) {
		return fmt.Errorf("store: set egress of sandbox %s: %w", id, errdefs.InvalidArgument("egress is not valid JSON"))
	}
	res, err := s.db.ExecContext(ctx, `UPDATE sandboxes SET egress = ? WHERE id = ?`, nullJSON(egress), id)
	if err != nil {
		return fmt.Errorf("store: set egress of sandbox %s: %w", id, mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: set egress of sandbox %s: %w", id, err)
	}
	if n == 0 {
		return errdefs.NotFound("sandbox %s not found", id)
	}
	return nil
}

// metadataMatch returns a subquery selecting the owner ids (column idCol of
// table) whose metadata contains every pair of want, and its arguments. A row
// per pair matches at most once per owner (the (owner, key) primary key), so
// "matched as many pairs as wanted" is "matched all of them".
func metadataMatch(table, idCol string, want map[string]string) (string, []any) {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys) // stable SQL text, so the statement cache can help
	pairs := make([]string, len(keys))
	args := make([]any, 0, 2*len(keys)+1)
	for i, k := range keys {
		pairs[i] = `(key = ? AND value = ?)`
		args = append(args, k, want[k])
	}
	args = append(args, len(keys))
	q := `SELECT ` + idCol + ` FROM ` + table + ` WHERE ` + strings.Join(pairs, ` OR `) +
		` GROUP BY ` + idCol + ` HAVING count(*) = ?`
	return q, args
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

const sandboxColumns = `id, tenant, template, metadata, state, created_ms, deadline_ms, ended_ms,
	pid, state_dir, parent_id, egress, net_slot, jailed, paused_dir`

func (s *Store) querySandboxes(ctx context.Context, op string, where []string, args []any, orderBy ...string) ([]Sandbox, error) {
	q := `SELECT ` + sandboxColumns + ` FROM sandboxes`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	order := "created_ms, rowid" // rowid: insertion order among equal times
	if len(orderBy) > 0 {
		order = orderBy[0]
	}
	q += ` ORDER BY ` + order
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", op, mapErr(err))
	}
	defer rows.Close()
	var out []Sandbox
	for rows.Next() {
		sb, err := scanSandbox(rows)
		if err != nil {
			return nil, fmt.Errorf("store: %s: %w", op, err)
		}
		out = append(out, sb)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: %s: %w", op, mapErr(err))
	}
	return out, nil
}

func scanSandbox(r rowScanner) (Sandbox, error) {
	var (
		sb                Sandbox
		md                string
		created, deadline int64
		ended             sql.NullInt64
		parentID, egress  sql.NullString
	)
	if err := r.Scan(&sb.ID, &sb.Tenant, &sb.Template, &md, &sb.State, &created, &deadline, &ended,
		&sb.PID, &sb.StateDir, &parentID, &egress, &sb.NetSlot, &sb.Jailed, &sb.PausedDir); err != nil {
		return Sandbox{}, err
	}
	m, err := DecodeMap(md)
	if err != nil {
		return Sandbox{}, fmt.Errorf("sandbox %s: decode metadata: %w", sb.ID, err)
	}
	sb.Metadata = m
	sb.CreatedAt = fromMS(created)
	sb.Deadline = fromMS(deadline)
	sb.EndedAt = fromNullMS(ended)
	sb.ParentID = parentID.String
	if egress.Valid {
		sb.Egress = json.RawMessage(egress.String)
	}
	return sb, nil
}

func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

func nullJSON(b json.RawMessage) sql.NullString {
	return sql.NullString{String: string(b), Valid: len(b) > 0}
}
