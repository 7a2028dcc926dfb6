package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// SweepReport is what one Sweep did.
type SweepReport struct {
	// Amnesty: the previous sweep was more than TTL/2 ago, so live
	// leases were extended (Extended of them) and nothing was swept.
	Amnesty  bool
	Extended int
	// Lost are the nodes marked lost, in the order swept.
	Lost []SweptNode
}

// SweptNode is one node a sweep marked lost.
type SweptNode struct {
	ID string
	// OldEpoch is the epoch the lease was held under; the node's
	// sandboxes of it and older were written off.
	OldEpoch int64
	// LeaseExpired is when its lease had ended, by the database clock.
	LeaseExpired time.Time
	// Sandboxes are the live sandboxes written off (lost).
	Sandboxes []string
}

// maxSweepNodes bounds the nodes one Sweep marks lost, so a call ends;
// the next interval's sweep takes the rest.
const maxSweepNodes = 1000

// Sweep is one pass of a sweeper; every API replica may run it every
// SweepInterval at once. It first decides amnesty (lease.NeedsAmnesty on
// the last sweep's time, under that row's lock): after a gap of more
// than TTL/2 it extends every live lease (lease.Extend) and sweeps
// nothing. Otherwise it marks lost, one node per transaction, every node
// lease.Expired finds past its grace, skipping rows another transaction
// holds (a heartbeat renewing, another sweeper), and writes off the
// node's live sandboxes, audited in the control chain.
func (s *Store) Sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	if err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		rep.Amnesty, rep.Extended, err = s.amnesty(ctx, tx)
		return err
	}); err != nil {
		return SweepReport{}, fmt.Errorf("pgstore: sweep: %w", err)
	}
	if rep.Amnesty {
		return rep, nil
	}
	for len(rep.Lost) < maxSweepNodes {
		var swept *SweptNode
		if err := s.inTx(ctx, func(tx pgx.Tx) error {
			var err error
			swept, err = s.sweepOne(ctx, tx)
			return err
		}); err != nil {
			return rep, fmt.Errorf("pgstore: sweep: %w", err)
		}
		if swept == nil {
			break
		}
		rep.Lost = append(rep.Lost, *swept)
	}
	return rep, nil
}

// amnesty records this sweep's time and, after a gap, extends every live
// lease. Concurrent sweepers queue on cluster_state, so exactly the first
// one after a gap grants it.
func (s *Store) amnesty(ctx context.Context, tx pgx.Tx) (granted bool, extended int, err error) {
	var last *time.Time
	if err := tx.QueryRow(ctx, `SELECT last_sweep_at FROM cluster_state WHERE id = 1 FOR UPDATE`).Scan(&last); err != nil {
		return false, 0, err
	}
	now, err := dbNow(ctx, tx)
	if err != nil {
		return false, 0, err
	}
	var lastSweep time.Time // zero: no sweep ever ran
	if last != nil {
		lastSweep = *last
	}
	if _, err := tx.Exec(ctx, `UPDATE cluster_state SET last_sweep_at = $1 WHERE id = 1`, now); err != nil {
		return false, 0, err
	}
	if !lease.NeedsAmnesty(lastSweep, now, s.lease.TTL) {
		return false, 0, nil
	}
	extended, err = s.extendLeases(ctx, tx, now)
	return true, extended, err
}

// extendLeases applies lease.Extend to every live row, locked in id
// order.
func (s *Store) extendLeases(ctx context.Context, tx pgx.Tx, now time.Time) (int, error) {
	rows, err := tx.Query(ctx, `SELECT node_id, state, epoch, lease_expires_at FROM nodes
		WHERE state IN ('ready', 'draining') ORDER BY node_id FOR UPDATE`)
	if err != nil {
		return 0, err
	}
	nodes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (lease.Node, error) {
		var n lease.Node
		var state string
		err := r.Scan(&n.ID, &state, &n.Epoch, &n.LeaseExpires)
		n.State = lease.State(state)
		return n, err
	})
	if err != nil {
		return 0, err
	}
	var ids []string
	var until []time.Time
	for _, n := range nodes {
		if e := lease.Extend(n, now, s.lease.TTL); !e.LeaseExpires.Equal(n.LeaseExpires) {
			ids, until = append(ids, n.ID), append(until, e.LeaseExpires)
		}
	}
	_, err = tx.Exec(ctx, `UPDATE nodes n SET lease_expires_at = u.until
		FROM unnest($1::text[], $2::timestamptz[]) AS u(id, until) WHERE n.node_id = u.id`, ids, until)
	return len(ids), err
}

// sweepOne marks one expired node lost, or returns nil when none is left
// that no other transaction holds.
func (s *Store) sweepOne(ctx context.Context, tx pgx.Tx) (*SweptNode, error) {
	// The WHERE only narrows the candidates by the index (and is never
	// looser than lease.Expired, which decides below on the locked row).
	var (
		n     lease.Node
		state string
	)
	err := tx.QueryRow(ctx, `SELECT node_id, state, epoch, lease_expires_at FROM nodes
		WHERE state IN ('ready', 'draining') AND lease_expires_at < clock_timestamp() - $1::interval
		ORDER BY lease_expires_at FOR UPDATE SKIP LOCKED LIMIT 1`, s.lease.Grace).Scan(&n.ID, &state, &n.Epoch, &n.LeaseExpires)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	n.State = lease.State(state)
	now, err := dbNow(ctx, tx)
	if err != nil {
		return nil, err
	}
	if !lease.Expired(n, now, s.lease.Grace) {
		return nil, errdefs.Unavailable("node %s was selected as expired but is not at %s", n.ID, now) // cannot happen: the clock only advances
	}
	lost := lease.MarkLost(n)
	if _, err := tx.Exec(ctx, `UPDATE nodes SET state = $2, epoch = $3, lost_at = $4 WHERE node_id = $1`,
		n.ID, string(lost.State), lost.Epoch, now); err != nil {
		return nil, err
	}
	ids, err := writeOff(ctx, tx, n.ID, n.Epoch, "node_lost", now)
	if err != nil {
		return nil, err
	}
	// Every replica listening cancels its calls to the node at once.
	if _, err := tx.Exec(ctx, `SELECT pg_notify('airlock_node_lost', $1)`, n.ID); err != nil {
		return nil, err
	}
	return &SweptNode{ID: n.ID, OldEpoch: n.Epoch, LeaseExpired: n.LeaseExpires, Sandboxes: ids}, nil
}

// writeOff marks lost every live sandbox of node with an epoch up to
// maxEpoch, and appends one control-chain fail record for each.
func writeOff(ctx context.Context, tx pgx.Tx, node string, maxEpoch int64, reason string, now time.Time) ([]string, error) {
	rows, err := tx.Query(ctx, `UPDATE sandboxes SET state = 'lost', end_reason = $3, ended_ms = $4
		WHERE node_id = $1 AND node_epoch <= $2 AND state IN ('creating', 'running')
		RETURNING id, tenant, template, metadata, coalesce(parent_id, '')`, node, maxEpoch, reason, toMS(now))
	if err != nil {
		return nil, err
	}
	recs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.AuditRecord, error) {
		var rec store.AuditRecord
		var md string
		if err := r.Scan(&rec.SandboxID, &rec.Tenant, &rec.Template, &md, &rec.ParentID); err != nil {
			return rec, err
		}
		m, err := store.DecodeMap(md)
		rec.Metadata = m
		rec.Event, rec.Outcome = store.EventFail, "unavailable"
		rec.Detail = map[string]string{"reason": reason, "node": node}
		return rec, err
	})
	if err != nil {
		return nil, err
	}
	if _, err := appendControlTx(ctx, tx, recs); err != nil {
		return nil, err
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.SandboxID
	}
	return ids, nil
}
