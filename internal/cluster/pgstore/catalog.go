package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// Catalog states. The single-host states (store.State*) plus creating,
// before the node answered, and lost, written off with its node. States
// only move forward: creating -> running -> one terminal state, or
// creating -> a terminal state; a terminal row never changes again (the
// schema's trigger refuses it too).
const (
	StateCreating = "creating"
	StateRunning  = store.StateRunning
	StateKilled   = store.StateKilled
	StateExpired  = store.StateExpired
	StateFailed   = store.StateFailed
	StateLost     = "lost" // its node was swept or registered afresh
)

// Terminal reports whether state is one a sandbox never leaves.
func Terminal(state string) bool {
	switch state {
	case StateKilled, StateExpired, StateFailed, StateLost:
		return true
	}
	return false
}

// Sandbox is a catalog row: where a sandbox runs and how it ended. It
// holds no node-local facts (pid, state directory, network slot).
type Sandbox struct {
	// ID is chosen by the API tier before the node is called; unique,
	// immutable.
	ID string
	// Tenant owns it; immutable. Reads scoped to another tenant see
	// NotFound.
	Tenant string
	// Template and BuildID are what it was placed for; immutable.
	Template string
	BuildID  string
	// NodeID and NodeEpoch are the node and the lease epoch it was
	// created under; immutable. A sweep of that epoch writes it off.
	NodeID    string
	NodeEpoch int64
	// State is one of the State* constants; moves forward only.
	State string
	// EndReason says why it ended ("killed", "expired", "vm_exited",
	// "node_lost", ...); "" exactly while it is live.
	EndReason string
	// Metadata is the caller's labels; immutable.
	Metadata map[string]string
	// Egress is the egress policy as JSON, nil for none.
	Egress json.RawMessage
	// Jailed is whether its VMM runs jailed; immutable.
	Jailed bool
	// ParentID is the sandbox it was forked from (same tenant and
	// node), "" for none.
	ParentID string
	// IdemKey is the create's idempotency key, "" for none; unique per
	// tenant.
	IdemKey string
	// CreatedAt and Deadline (UTC, ms); immutable.
	CreatedAt, Deadline time.Time
	// EndedAt is when it ended; nil exactly while it is live.
	EndedAt *time.Time
	// PausedAt is when a running sandbox was paused (saved to its node's
	// disk), nil while it runs; meaningless once it ended.
	PausedAt *time.Time
}

// CreateSandbox records a placement before (creating) or after (running)
// the node made the VM. The node must hold a ready lease under
// sb.NodeEpoch (held FOR SHARE, so no sweep ends it mid-insert), the
// tenant must be enabled and under its quota of live sandboxes
// (ResourceExhausted otherwise), and a parent must be the tenant's, on
// the same node.
func (s *Store) CreateSandbox(ctx context.Context, sb Sandbox) error {
	if err := validateSandbox(sb); err != nil {
		return fmt.Errorf("pgstore: create sandbox: %w", err)
	}
	md, err := store.EncodeMap(sb.Metadata)
	if err != nil {
		return fmt.Errorf("pgstore: create sandbox %s: %w", sb.ID, err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := admitTenant(ctx, tx, sb.Tenant); err != nil {
			return err
		}
		if err := nodeTakesSandboxes(ctx, tx, sb.NodeID, sb.NodeEpoch); err != nil {
			return err
		}
		if err := checkParent(ctx, tx, sb); err != nil {
			return err
		}
		return insertSandbox(ctx, tx, sb, md)
	})
	if err != nil {
		return fmt.Errorf("pgstore: create sandbox %s: %w", sb.ID, err)
	}
	return nil
}

func validateSandbox(sb Sandbox) error {
	if err := store.ValidateID("sandbox id", sb.ID); err != nil {
		return err
	}
	if err := store.ValidateTenant(sb.Tenant); err != nil {
		return err
	}
	if err := store.ValidateTemplateName(sb.Template); err != nil {
		return err
	}
	if err := store.ValidateMetadata("metadata", sb.Metadata); err != nil {
		return err
	}
	switch {
	case sb.State != StateCreating && sb.State != StateRunning:
		return errdefs.InvalidArgument("a new sandbox is creating or running, not %q", sb.State)
	case sb.NodeID == "" || sb.NodeEpoch < 1:
		return errdefs.InvalidArgument("a sandbox needs a node and its epoch")
	case sb.Deadline.Before(sb.CreatedAt):
		return errdefs.InvalidArgument("deadline before creation")
	case sb.Egress != nil && !json.Valid(sb.Egress):
		return errdefs.InvalidArgument("egress is not valid JSON")
	}
	return nil
}

// admitTenant locks tenant's row (creates serialise per tenant) and
// refuses a disabled tenant or one at its quota.
func admitTenant(ctx context.Context, tx pgx.Tx, tenant string) error {
	if err := ensureTenant(ctx, tx, tenant); err != nil {
		return err
	}
	var max int
	var disabled *int64
	if err := tx.QueryRow(ctx, `SELECT max_sandboxes, disabled_ms FROM tenants WHERE name = $1 FOR UPDATE`, tenant).
		Scan(&max, &disabled); err != nil {
		return err
	}
	if disabled != nil {
		return errdefs.PermissionDenied("tenant %s is disabled", tenant)
	}
	var live int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM sandboxes WHERE tenant = $1 AND state IN ('creating', 'running')`, tenant).
		Scan(&live); err != nil {
		return err
	}
	if live >= max {
		return errdefs.ResourceExhausted("tenant %s runs its maximum of %d sandboxes", tenant, max)
	}
	return nil
}

// nodeTakesSandboxes refuses a node that is not ready under epoch, and
// holds its row until the transaction ends.
func nodeTakesSandboxes(ctx context.Context, tx pgx.Tx, node string, epoch int64) error {
	var cur int64
	var state string
	err := tx.QueryRow(ctx, `SELECT epoch, state FROM nodes WHERE node_id = $1 FOR SHARE`, node).Scan(&cur, &state)
	if errors.Is(err, pgx.ErrNoRows) {
		return errdefs.NotFound("node %s is not registered", node)
	}
	if err != nil {
		return err
	}
	if cur != epoch || state != "ready" {
		return errdefs.FailedPrecondition("node %s takes no sandboxes under epoch %d (epoch %d, %s)", node, epoch, cur, state)
	}
	return nil
}

func checkParent(ctx context.Context, tx pgx.Tx, sb Sandbox) error {
	if sb.ParentID == "" {
		return nil
	}
	var tenant, node string
	err := tx.QueryRow(ctx, `SELECT tenant, node_id FROM sandboxes WHERE id = $1`, sb.ParentID).Scan(&tenant, &node)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && tenant != sb.Tenant) {
		// The same answer for "missing" and "someone else's": ids do
		// not leak across tenants.
		return errdefs.NotFound("parent sandbox %s not found", sb.ParentID)
	}
	if err != nil {
		return err
	}
	if node != sb.NodeID {
		return errdefs.InvalidArgument("a fork runs on its parent's node %s", node)
	}
	return nil
}

func insertSandbox(ctx context.Context, tx pgx.Tx, sb Sandbox, md string) error {
	var egress, parent, idem any
	if sb.Egress != nil {
		egress = string(sb.Egress)
	}
	if sb.ParentID != "" {
		parent = sb.ParentID
	}
	if sb.IdemKey != "" {
		idem = sb.IdemKey
	}
	_, err := tx.Exec(ctx, `INSERT INTO sandboxes (id, tenant, template, build_id, node_id, node_epoch, state, metadata,
		egress, jailed, parent_id, idem_key, created_ms, deadline_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		sb.ID, sb.Tenant, sb.Template, sb.BuildID, sb.NodeID, sb.NodeEpoch, sb.State, md, egress, sb.Jailed, parent, idem,
		toMS(sb.CreatedAt), toMS(sb.Deadline))
	if err != nil {
		return err
	}
	for k, v := range sb.Metadata {
		if _, err := tx.Exec(ctx, `INSERT INTO sandbox_metadata (sandbox_id, key, value) VALUES ($1, $2, $3)`, sb.ID, k, v); err != nil {
			return err
		}
	}
	return nil
}

// KillSandbox ends tenant's live sandbox id as killed. ended reports
// whether this call ended it: false when it had ended already (a
// terminal state is never overwritten). Another tenant's or an unknown
// id is NotFound.
func (s *Store) KillSandbox(ctx context.Context, tenant, id string) (ended bool, err error) {
	if tenant == "" {
		return false, fmt.Errorf("pgstore: kill sandbox %s: %w", id, errdefs.InvalidArgument("a kill names its tenant"))
	}
	ended, err = s.end(ctx, id, StateKilled, "killed", nil, scope{tenant: tenant})
	if err != nil {
		return false, fmt.Errorf("pgstore: kill sandbox %s: %w", id, err)
	}
	return ended, nil
}

// ExpireDue ends as expired up to limit live sandboxes whose deadline
// passed by the database clock, skipping rows another transaction holds,
// and returns their ids. The node's reaper expires its sandboxes itself;
// this is the catalog's catch-up for rows whose node never said.
func (s *Store) ExpireDue(ctx context.Context, limit int) ([]string, error) {
	var ids []string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE sandboxes SET state = 'expired', end_reason = 'expired',
			ended_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint
			WHERE id IN (SELECT id FROM sandboxes WHERE state IN ('creating', 'running')
				AND deadline_ms < (extract(epoch FROM clock_timestamp()) * 1000)::bigint
				ORDER BY deadline_ms LIMIT $1 FOR UPDATE SKIP LOCKED)
			AND state IN ('creating', 'running')
			RETURNING id`, limit)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: expire due sandboxes: %w", err)
	}
	return ids, nil
}

// ShipSandboxState records what node, holding its lease under epoch,
// reports of its sandbox id: running (from creating), or a terminal
// state with its reason and time. ended reports whether a terminal state
// was recorded by this call. A node not holding its lease under epoch,
// or reporting a sandbox it does not hold, is refused: an old
// incarnation never writes the catalog.
func (s *Store) ShipSandboxState(ctx context.Context, node string, epoch int64, id, state, reason string, at time.Time) (bool, error) {
	var ended bool
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := holdsLease(ctx, tx, node, epoch); err != nil {
			return err
		}
		if state == StateRunning {
			_, err := tx.Exec(ctx, `UPDATE sandboxes SET state = 'running' WHERE id = $1 AND node_id = $2 AND node_epoch = $3
				AND state = 'creating'`, id, node, epoch)
			return err
		}
		if !Terminal(state) || state == StateLost || reason == "" {
			return errdefs.InvalidArgument("a node reports running or killed/expired/failed with a reason, not %q (%q)", state, reason)
		}
		var err error
		ended, err = endTx(ctx, tx, id, state, reason, &at, scope{node: node, epoch: epoch})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("pgstore: ship state of %s from %s: %w", id, node, err)
	}
	return ended, nil
}

// scope narrows which rows an ending may touch; zero fields match any.
type scope struct {
	tenant string // the caller's tenant
	node   string // the reporting node, with epoch
	epoch  int64
}

// end is endTx in a transaction of its own.
func (s *Store) end(ctx context.Context, id, state, reason string, at *time.Time, sc scope) (bool, error) {
	var ended bool
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		ended, err = endTx(ctx, tx, id, state, reason, at, sc)
		return err
	})
	return ended, err
}

// endTx moves sandbox id to a terminal state if it is live and in sc:
// the one guarded UPDATE every ending but a write-off goes through. Two
// enders racing on a row queue on its lock and the second finds it
// ended, so exactly one wins. An id that does not exist in sc is
// NotFound; one that ended before returns false.
func endTx(ctx context.Context, tx pgx.Tx, id, state, reason string, at *time.Time, sc scope) (bool, error) {
	var atMS *int64
	if at != nil {
		ms := toMS(*at)
		atMS = &ms
	}
	tag, err := tx.Exec(ctx, `UPDATE sandboxes SET state = $2, end_reason = $3,
		ended_ms = coalesce($4::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
		WHERE id = $1 AND state IN ('creating', 'running')
		AND ($5 = '' OR tenant = $5) AND ($6 = '' OR (node_id = $6 AND node_epoch = $7))`,
		id, state, reason, atMS, sc.tenant, sc.node, sc.epoch)
	if err != nil || tag.RowsAffected() == 1 {
		return err == nil, err
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM sandboxes WHERE id = $1
		AND ($2 = '' OR tenant = $2) AND ($3 = '' OR (node_id = $3 AND node_epoch = $4)))`,
		id, sc.tenant, sc.node, sc.epoch).Scan(&exists); err != nil {
		return false, err
	}
	if !exists {
		return false, errdefs.NotFound("sandbox %s not found", id)
	}
	return false, nil
}

// GetSandbox returns tenant's sandbox id ("" tenant: any tenant's).
func (s *Store) GetSandbox(ctx context.Context, tenant, id string) (Sandbox, error) {
	sb, err := scanSandbox(s.pool.QueryRow(ctx, `SELECT `+sandboxColumns+` FROM sandboxes WHERE id = $1 AND ($2 = '' OR tenant = $2)`, id, tenant))
	if errors.Is(err, pgx.ErrNoRows) {
		return Sandbox{}, errdefs.NotFound("sandbox %s not found", id)
	}
	if err != nil {
		return Sandbox{}, fmt.Errorf("pgstore: get sandbox %s: %w", id, mapErr(err))
	}
	return sb, nil
}

// LiveSandboxes returns node's live sandboxes under epoch: what a node's
// orphan check compares its VMs with.
func (s *Store) LiveSandboxes(ctx context.Context, node string, epoch int64) ([]Sandbox, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+sandboxColumns+` FROM sandboxes
		WHERE node_id = $1 AND node_epoch = $2 AND state IN ('creating', 'running') ORDER BY created_ms, id`, node, epoch)
	if err != nil {
		return nil, fmt.Errorf("pgstore: live sandboxes of %s: %w", node, mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Sandbox, error) { return scanSandbox(r) })
	if err != nil {
		return nil, fmt.Errorf("pgstore: live sandboxes of %s: %w", node, mapErr(err))
	}
	return out, nil
}

const sandboxColumns = `id, tenant, template, build_id, node_id, node_epoch, state, coalesce(end_reason, ''), metadata,
	egress::text, jailed, coalesce(parent_id, ''), coalesce(idem_key, ''), created_ms, deadline_ms, ended_ms, paused_ms`

func scanSandbox(r pgx.Row) (Sandbox, error) {
	var (
		sb            Sandbox
		md            string
		egress        *string
		created, dead int64
		ended, paused *int64
	)
	if err := r.Scan(&sb.ID, &sb.Tenant, &sb.Template, &sb.BuildID, &sb.NodeID, &sb.NodeEpoch, &sb.State, &sb.EndReason,
		&md, &egress, &sb.Jailed, &sb.ParentID, &sb.IdemKey, &created, &dead, &ended, &paused); err != nil {
		return Sandbox{}, err
	}
	if egress != nil {
		sb.Egress = json.RawMessage(*egress)
	}
	sb.CreatedAt, sb.Deadline, sb.EndedAt, sb.PausedAt = fromMS(created), fromMS(dead), fromNullMS(ended), fromNullMS(paused)
	var err error
	sb.Metadata, err = store.DecodeMap(md)
	return sb, err
}
