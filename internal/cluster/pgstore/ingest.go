package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// ErrDiverged marks an audit batch refused because it is not an exact
// extension of its chain's head in the database: a gap, a fork, a replay,
// records out of order, or a record that does not match its hash. It is
// FailedPrecondition as well; the node's local chain and the shared copy
// disagree, and an operator must look (the node should be drained).
var ErrDiverged = errors.New("audit chain diverged")

// MaxShipBatch bounds the records of one ShipAudit call.
const MaxShipBatch = 1000

// ChainHead is the last record the database holds of a chain.
type ChainHead struct {
	// Seq is the last record's chain position, 0 for an empty chain.
	Seq int64
	// Hash is that record's hash, "" for an empty chain.
	Hash string
	// TimeMS is that record's time in Unix ms, 0 for an empty chain.
	TimeMS int64
}

// GetChainHead returns chain's head, a zero head for a chain never
// shipped: a node's shipper resumes after it.
func (s *Store) GetChainHead(ctx context.Context, chain string) (ChainHead, error) {
	var h ChainHead
	err := s.pool.QueryRow(ctx, `SELECT head_seq, head_hash, head_time_ms FROM audit_chains WHERE chain_id = $1`, chain).
		Scan(&h.Seq, &h.Hash, &h.TimeMS)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return ChainHead{}, fmt.Errorf("pgstore: chain head %s: %w", chain, mapErr(err))
	}
	return h, nil
}

// diverged is a FailedPrecondition that is also ErrDiverged.
func diverged(format string, args ...any) error {
	return fmt.Errorf("%w: %w", errdefs.FailedPrecondition(format, args...), ErrDiverged)
}

// checkBatch verifies a shipped batch on its own, before the database is
// asked: every record valid and matching its hash (store.AuditHash),
// consecutive, linked, and never older than its predecessor.
func checkBatch(recs []store.AuditRecord) error {
	if len(recs) == 0 || len(recs) > MaxShipBatch {
		return errdefs.InvalidArgument("an audit batch holds 1-%d records, not %d", MaxShipBatch, len(recs))
	}
	for i, r := range recs {
		if err := store.ValidateAudit(r); err != nil {
			return err
		}
		if r.Seq < 1 {
			return diverged("audit record seq %d: want 1 or more", r.Seq)
		}
		if i > 0 {
			p := recs[i-1]
			switch {
			case r.Seq != p.Seq+1:
				return diverged("audit record %d follows record %d in the batch: out of order or missing", r.Seq, p.Seq)
			case r.PrevHash != p.Hash:
				return diverged("audit record %d does not link to record %d", r.Seq, p.Seq)
			case r.Time.Before(p.Time):
				return diverged("audit record %d is older than record %d", r.Seq, p.Seq)
			}
		}
		h, err := store.AuditHash(r)
		if err != nil {
			return errdefs.InvalidArgument("audit record %d: %v", r.Seq, err)
		}
		if h != r.Hash {
			return diverged("audit record %d does not match its hash (edited)", r.Seq)
		}
	}
	if recs[0].Seq == 1 && recs[0].PrevHash != "" {
		return diverged("audit record 1 links to a predecessor")
	}
	return nil
}

// ShipAudit accepts a batch of node's own chain, shipped under its
// current epoch: exactly the records after the chain's head in the
// database, as the node's store appended them. Anything else is refused
// with ErrDiverged and the head unchanged: a gap (records missing before
// the batch), a fork (the batch's first record links to something else
// than the head), a replay (records already accepted), a batch out of
// order, or a record edited after hashing. A node not holding its lease
// under epoch is refused (FailedPrecondition): an old incarnation must not
// write. A chain is bound to the node that shipped it first.
func (s *Store) ShipAudit(ctx context.Context, node string, epoch int64, chain string, recs []store.AuditRecord) (ChainHead, error) {
	head, err := s.appendChain(ctx, node, chain, recs, func(tx pgx.Tx) error { return holdsLease(ctx, tx, node, epoch) })
	if err != nil {
		return ChainHead{}, fmt.Errorf("pgstore: ship audit %s from %s: %w", chain, node, err)
	}
	return head, nil
}

// appendChain appends recs to node's chain in one transaction, after
// guard (nil: none) passes in it: the batch must be the exact extension
// of the chain's head (ErrDiverged otherwise, the head unchanged).
func (s *Store) appendChain(ctx context.Context, node, chain string, recs []store.AuditRecord, guard func(pgx.Tx) error) (ChainHead, error) {
	if err := checkBatch(recs); err != nil {
		return ChainHead{}, err
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if guard != nil {
			if err := guard(tx); err != nil {
				return err
			}
		}
		cur, err := lockNodeChain(ctx, tx, node, chain)
		if err != nil {
			return err
		}
		if err := casCheck(ctx, tx, chain, cur, recs); err != nil {
			return err
		}
		return s.extendChain(ctx, tx, chain, cur, recs)
	})
	if err != nil {
		return ChainHead{}, err
	}
	last := recs[len(recs)-1]
	return ChainHead{Seq: last.Seq, Hash: last.Hash, TimeMS: toMS(last.Time)}, nil
}

// holdsLease refuses a node that is not live under epoch, and holds its
// row (FOR SHARE) so a sweep cannot end the lease mid-transaction.
func holdsLease(ctx context.Context, tx pgx.Tx, node string, epoch int64) error {
	var cur int64
	var state string
	err := tx.QueryRow(ctx, `SELECT epoch, state FROM nodes WHERE node_id = $1 FOR SHARE`, node).Scan(&cur, &state)
	if errors.Is(err, pgx.ErrNoRows) {
		return errdefs.NotFound("node %s is not registered", node)
	}
	if err != nil {
		return err
	}
	if cur != epoch || (state != "ready" && state != "draining") {
		return fmt.Errorf("%w: %w", errdefs.FailedPrecondition("node %s epoch %d does not hold the lease (epoch %d, %s)", node, epoch, cur, state), ErrFenced)
	}
	return nil
}

// lockNodeChain returns chain's head with its row locked, creating the
// row bound to node on first use.
func lockNodeChain(ctx context.Context, tx pgx.Tx, node, chain string) (ChainHead, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO audit_chains (chain_id, kind, node_id) VALUES ($1, 'node', $2)
		ON CONFLICT (chain_id) DO NOTHING`, chain, node); err != nil {
		return ChainHead{}, err
	}
	var (
		h     ChainHead
		kind  string
		owner *string
	)
	err := tx.QueryRow(ctx, `SELECT kind, node_id, head_seq, head_hash, head_time_ms FROM audit_chains WHERE chain_id = $1 FOR UPDATE`, chain).
		Scan(&kind, &owner, &h.Seq, &h.Hash, &h.TimeMS)
	if err != nil {
		return ChainHead{}, err
	}
	if kind != "node" || owner == nil || *owner != node {
		return ChainHead{}, errdefs.PermissionDenied("audit chain %s is not node %s's", chain, node)
	}
	return h, nil
}

// casCheck accepts recs only as the exact extension of cur, and says
// which way they are not.
func casCheck(ctx context.Context, tx pgx.Tx, chain string, cur ChainHead, recs []store.AuditRecord) error {
	first := recs[0]
	switch {
	case first.Seq > cur.Seq+1:
		return diverged("gap: the batch starts at record %d, the chain holds up to %d", first.Seq, cur.Seq)
	case first.Seq <= cur.Seq:
		var have string
		err := tx.QueryRow(ctx, `SELECT hash FROM audit WHERE chain_id = $1 AND seq = $2`, chain, first.Seq).Scan(&have)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if have == first.Hash {
			return diverged("replay: record %d was accepted before (the chain holds up to %d)", first.Seq, cur.Seq)
		}
		return diverged("fork: record %d differs from the one accepted before", first.Seq)
	case first.PrevHash != cur.Hash:
		return diverged("fork: record %d does not link to the chain's record %d", first.Seq, cur.Seq)
	case toMS(first.Time) < cur.TimeMS:
		return diverged("record %d is older than the chain's record %d", first.Seq, cur.Seq)
	}
	return nil
}

// extendChain inserts recs after cur and moves the head by
// compare-and-swap; 0 rows moved means another transaction moved it.
func (s *Store) extendChain(ctx context.Context, tx pgx.Tx, chain string, cur ChainHead, recs []store.AuditRecord) error {
	if err := insertAudit(ctx, tx, chain, recs); err != nil {
		return err
	}
	last := recs[len(recs)-1]
	tag, err := tx.Exec(ctx, `UPDATE audit_chains SET head_seq = $1, head_hash = $2, head_time_ms = $3
		WHERE chain_id = $4 AND head_seq = $5 AND head_hash = $6`,
		last.Seq, last.Hash, toMS(last.Time), chain, cur.Seq, cur.Hash)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return diverged("the head of chain %s moved while the batch was checked", chain)
	}
	return nil
}

// insertAudit inserts records and their metadata index in one round
// trip; the schema's trigger checks every link again.
func insertAudit(ctx context.Context, tx pgx.Tx, chain string, recs []store.AuditRecord) error {
	b := &pgx.Batch{}
	for _, r := range recs {
		md, err := store.EncodeMap(r.Metadata)
		if err != nil {
			return err
		}
		detail, err := store.EncodeMap(r.Detail)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO audit (chain_id, seq, time_ms, tenant, sandbox_id, parent_id, template, event, metadata,
			exit_code, bytes, duration_ms, outcome, detail, prev_hash, hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
			chain, r.Seq, toMS(r.Time), r.Tenant, r.SandboxID, r.ParentID, r.Template, r.Event, md,
			r.ExitCode, r.Bytes, r.DurationMS, r.Outcome, detail, r.PrevHash, r.Hash)
		for k, v := range r.Metadata {
			b.Queue(`INSERT INTO audit_metadata (chain_id, seq, key, value) VALUES ($1, $2, $3, $4)`, chain, r.Seq, k, v)
		}
	}
	return tx.SendBatch(ctx, b).Close()
}

// AppendControl appends r to the control chain and returns it with Seq
// (its chain position), Time (the database clock, never before the
// previous record's), PrevHash and Hash (store.AuditHash) assigned.
// Concurrent appenders, in any process, queue on the chain's head row.
func (s *Store) AppendControl(ctx context.Context, r store.AuditRecord) (store.AuditRecord, error) {
	var out []store.AuditRecord
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = appendControlTx(ctx, tx, []store.AuditRecord{r})
		return err
	})
	if err != nil {
		return store.AuditRecord{}, fmt.Errorf("pgstore: append control %s: %w", r.Event, err)
	}
	return out[0], nil
}

// appendControlTx appends recs to the control chain inside tx, locking
// its head row until tx ends.
func appendControlTx(ctx context.Context, tx pgx.Tx, recs []store.AuditRecord) ([]store.AuditRecord, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	var head ChainHead
	if err := tx.QueryRow(ctx, `SELECT head_seq, head_hash, head_time_ms FROM audit_chains WHERE chain_id = $1 FOR UPDATE`,
		ControlChain).Scan(&head.Seq, &head.Hash, &head.TimeMS); err != nil {
		return nil, err
	}
	now, err := dbNow(ctx, tx)
	if err != nil {
		return nil, err
	}
	out := make([]store.AuditRecord, len(recs))
	prev := head
	for i, r := range recs {
		if err := store.ValidateAudit(r); err != nil {
			return nil, err
		}
		// What a reader gets back: nil for empty maps, so the hash made
		// here is the hash a verifier recomputes.
		r.Metadata, r.Detail = normalise(r.Metadata), normalise(r.Detail)
		r.Seq, r.PrevHash, r.TenantSeq = prev.Seq+1, prev.Hash, 0
		r.Time = fromMS(max(toMS(now), prev.TimeMS))
		if r.Hash, err = store.AuditHash(r); err != nil {
			return nil, err
		}
		out[i] = r
		prev = ChainHead{Seq: r.Seq, Hash: r.Hash, TimeMS: toMS(r.Time)}
	}
	if err := insertAudit(ctx, tx, ControlChain, out); err != nil {
		return nil, err
	}
	_, err = tx.Exec(ctx, `UPDATE audit_chains SET head_seq = $1, head_hash = $2, head_time_ms = $3 WHERE chain_id = $4`,
		prev.Seq, prev.Hash, prev.TimeMS, ControlChain)
	return out, err
}

func normalise(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
