package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// What the API tier (internal/cluster/apitier) reads and writes beyond
// part 1's: its secret, the catalog as tenants list it, creates it
// confirms or gives up, and what nodes report.

// ClusterSecret returns the API tier's secret called name, made (32
// random bytes) by whichever replica asks first. Only API processes read
// this database, so the secret never reaches a node.
func (s *Store) ClusterSecret(ctx context.Context, name string) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	var out []byte
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO cluster_secrets (name, secret, created_ms) VALUES ($1, $2, $3)
			ON CONFLICT (name) DO NOTHING`, name, fresh, toMS(time.Now())); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT secret FROM cluster_secrets WHERE name = $1`, name).Scan(&out)
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: cluster secret %s: %w", name, err)
	}
	return out, nil
}

// Ping checks the database answers (readiness).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("pgstore: ping: %w", mapErr(err))
	}
	return nil
}

// SandboxByIdemKey returns tenant's sandbox created with Idempotency-Key
// key; NotFound when there is none.
func (s *Store) SandboxByIdemKey(ctx context.Context, tenant, key string) (Sandbox, error) {
	sb, err := scanSandbox(s.pool.QueryRow(ctx, `SELECT `+sandboxColumns+` FROM sandboxes WHERE tenant = $1 AND idem_key = $2`, tenant, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return Sandbox{}, errdefs.NotFound("no sandbox with that idempotency key")
	}
	if err != nil {
		return Sandbox{}, fmt.Errorf("pgstore: sandbox by idempotency key: %w", mapErr(err))
	}
	return sb, nil
}

// ListSandboxes returns tenant's sandboxes in any of states (empty: every
// state) whose metadata holds every pair of md, oldest first.
func (s *Store) ListSandboxes(ctx context.Context, tenant string, states []string, md map[string]string) ([]Sandbox, error) {
	if err := store.ValidateTenant(tenant); err != nil {
		return nil, fmt.Errorf("pgstore: list sandboxes: %w", err)
	}
	args := []any{tenant}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	where := []string{`tenant = $1`}
	if len(states) > 0 {
		where = append(where, `state = ANY(`+arg(states)+`)`)
	}
	if len(md) > 0 {
		var pairs []string
		for k, v := range md {
			pairs = append(pairs, `(m.key = `+arg(k)+` AND m.value = `+arg(v)+`)`)
		}
		where = append(where, `id IN (SELECT m.sandbox_id FROM sandbox_metadata m WHERE `+strings.Join(pairs, ` OR `)+
			` GROUP BY m.sandbox_id HAVING count(*) = `+arg(len(md))+`)`)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+sandboxColumns+` FROM sandboxes WHERE `+strings.Join(where, ` AND `)+
		` ORDER BY created_ms, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list sandboxes: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Sandbox, error) { return scanSandbox(r) })
	if err != nil {
		return nil, fmt.Errorf("pgstore: list sandboxes: %w", mapErr(err))
	}
	return out, nil
}

// ConfirmSandbox records that sandbox id's node made it: creating ->
// running, with the deadline, creation time and jail the node answered. A row
// that is no longer creating (written off with its node, given up by the
// reconciler) is FailedPrecondition naming its state: the caller must not
// hand the sandbox out.
func (s *Store) ConfirmSandbox(ctx context.Context, id string, created, deadline time.Time, jailed bool) error {
	tag, err := s.pool.Exec(ctx, `UPDATE sandboxes SET state = 'running', created_ms = $2, deadline_ms = $3, jailed = $4
		WHERE id = $1 AND state = 'creating'`, id, toMS(created), toMS(deadline), jailed)
	if err != nil {
		return fmt.Errorf("pgstore: confirm sandbox %s: %w", id, mapErr(err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	sb, err := s.GetSandbox(ctx, "", id)
	if err != nil {
		return fmt.Errorf("pgstore: confirm sandbox %s: %w", id, err)
	}
	if sb.State == StateRunning {
		return nil
	}
	return fmt.Errorf("pgstore: confirm sandbox %s: %w", id, errdefs.FailedPrecondition("sandbox %s is %s (%s)", id, sb.State, sb.EndReason))
}

// FailSandbox ends live sandbox id as failed with reason (a create given
// up, a node that answered "not here"); ended reports whether this call
// ended it.
func (s *Store) FailSandbox(ctx context.Context, id, reason string) (bool, error) {
	ended, err := s.end(ctx, id, StateFailed, reason, nil, scope{})
	if err != nil {
		return false, fmt.Errorf("pgstore: fail sandbox %s: %w", id, err)
	}
	return ended, nil
}

// EndSandbox ends live sandbox id in state (killed, expired, failed) with
// reason, whoever's it is: what the tier records after a node answered
// that it ended the sandbox.
func (s *Store) EndSandbox(ctx context.Context, id, state, reason string) (bool, error) {
	if !Terminal(state) || state == StateLost {
		return false, errdefs.InvalidArgument("end state %q", state)
	}
	ended, err := s.end(ctx, id, state, reason, nil, scope{})
	if err != nil {
		return false, fmt.Errorf("pgstore: end sandbox %s: %w", id, err)
	}
	return ended, nil
}

// StaleCreating returns up to limit sandboxes still creating that were
// recorded more than age ago by the database clock: creates whose API
// process died or gave up between the row and the answer.
func (s *Store) StaleCreating(ctx context.Context, age time.Duration, limit int) ([]Sandbox, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+sandboxColumns+` FROM sandboxes WHERE state = 'creating'
		AND created_ms < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $1 ORDER BY created_ms LIMIT $2`,
		age.Milliseconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("pgstore: stale creating: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Sandbox, error) { return scanSandbox(r) })
	if err != nil {
		return nil, fmt.Errorf("pgstore: stale creating: %w", mapErr(err))
	}
	return out, nil
}

// SetSandboxDeadline copies a live sandbox's new deadline (its node's
// answer to a TTL change) into the catalog.
func (s *Store) SetSandboxDeadline(ctx context.Context, id string, deadline time.Time) error {
	if _, err := s.pool.Exec(ctx, `UPDATE sandboxes SET deadline_ms = $2 WHERE id = $1 AND state IN ('creating', 'running')`,
		id, toMS(deadline)); err != nil {
		return fmt.Errorf("pgstore: set deadline of %s: %w", id, mapErr(err))
	}
	return nil
}

// SetSandboxEgress copies a live sandbox's new egress policy (JSON) into
// the catalog.
func (s *Store) SetSandboxEgress(ctx context.Context, id string, egress json.RawMessage) error {
	if !json.Valid(egress) {
		return errdefs.InvalidArgument("egress is not valid JSON")
	}
	if _, err := s.pool.Exec(ctx, `UPDATE sandboxes SET egress = $2 WHERE id = $1 AND state IN ('creating', 'running')`,
		id, string(egress)); err != nil {
		return fmt.Errorf("pgstore: set egress of %s: %w", id, mapErr(err))
	}
	return nil
}

// NodeReport is what a node told the tier of itself that placement and
// the template list read: its templates (registration) and warm clones
// (heartbeats), kept as JSON in the node's row.
type NodeReport struct {
	Capabilities map[string]any
	Warm         map[string]int
}

// NodeReports returns every node's capabilities and warm clones by id.
func (s *Store) NodeReports(ctx context.Context) (map[string]NodeReport, error) {
	rows, err := s.pool.Query(ctx, `SELECT node_id, capabilities::text, warm::text FROM nodes`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: node reports: %w", mapErr(err))
	}
	defer rows.Close()
	out := map[string]NodeReport{}
	for rows.Next() {
		var id, caps, warm string
		if err := rows.Scan(&id, &caps, &warm); err != nil {
			return nil, fmt.Errorf("pgstore: node reports: %w", mapErr(err))
		}
		var r NodeReport
		if err := json.Unmarshal([]byte(caps), &r.Capabilities); err != nil {
			return nil, fmt.Errorf("pgstore: node %s capabilities: %w", id, err)
		}
		if err := json.Unmarshal([]byte(warm), &r.Warm); err != nil {
			return nil, fmt.Errorf("pgstore: node %s warm: %w", id, err)
		}
		out[id] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: node reports: %w", mapErr(err))
	}
	return out, nil
}

// Chain is one audit chain's row.
type Chain struct {
	ID   string
	Kind string // node or control
	Node string // the node that ships it, "" for the control chain
	Head ChainHead
}

// ListChains returns every audit chain, the control chain first.
func (s *Store) ListChains(ctx context.Context) ([]Chain, error) {
	rows, err := s.pool.Query(ctx, `SELECT chain_id::text, kind, coalesce(node_id, ''), head_seq, head_hash, head_time_ms
		FROM audit_chains ORDER BY kind = 'node', node_id, chain_id`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list chains: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Chain, error) {
		var c Chain
		err := r.Scan(&c.ID, &c.Kind, &c.Node, &c.Head.Seq, &c.Head.Hash, &c.Head.TimeMS)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: list chains: %w", mapErr(err))
	}
	return out, nil
}

// LiveOffLease counts sandboxes the catalog holds live (creating or
// running) although their node does not hold a lease under their epoch:
// none should exist, since a sweep or a new registration writes them off
// in the same transaction that ends the lease.
func (s *Store) LiveOffLease(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM sandboxes s JOIN nodes n USING (node_id)
		WHERE s.state IN ('creating', 'running') AND (n.state NOT IN ('ready', 'draining') OR s.node_epoch <> n.epoch)`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("pgstore: live sandboxes off lease: %w", mapErr(err))
	}
	return n, nil
}

// CountByState counts the catalog's sandboxes by state.
func (s *Store) CountByState(ctx context.Context) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT state, count(*) FROM sandboxes GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: count by state: %w", mapErr(err))
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("pgstore: count by state: %w", mapErr(err))
		}
		out[st] = n
	}
	return out, mapErr(rows.Err())
}
