package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// What `airlock cluster import` writes: a single host's keys, ended
// sandboxes and audit chain, under the node id the host will have in the
// cluster. Every step is idempotent: what is already there is left as
// it is, so importing twice changes nothing.

// importEpoch is the epoch imported sandboxes are recorded under: the
// host's row is made "left" at it, so the host's first registration
// starts epoch 2 and writes off nothing (every imported row has ended).
const importEpoch = 1

// ImportHostNode makes node's row, as a node that has left, unless the
// node has one: imported sandboxes name it.
func (s *Store) ImportHostNode(ctx context.Context, node, hostClass string) error {
	if err := store.ValidateID("node id", node); err != nil {
		return fmt.Errorf("pgstore: import node: %w", err)
	}
	sec := make([]byte, 32)
	if _, err := rand.Read(sec); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO nodes (node_id, epoch, incarnation, secret_sha256, state, addr, host_class,
		cap_slots, cap_mem_mib, cap_vcpus, version, registered_at, heartbeat_at, lease_expires_at)
		VALUES ($1, $2, $3, $4, 'left', '', $5, 0, 0, 0, 'imported', clock_timestamp(), clock_timestamp(), clock_timestamp())
		ON CONFLICT (node_id) DO NOTHING`, node, importEpoch, uuid.NewString(), store.HashKey(hex.EncodeToString(sec)), hostClass)
	if err != nil {
		return fmt.Errorf("pgstore: import node %s: %w", node, mapErr(err))
	}
	return nil
}

// ImportKeys copies keys (their hashes, as stored) with their tenants; a
// key already present keeps its row, except that a revocation is copied
// onto a key not yet revoked. It returns how many keys were new. A key
// whose hash another key holds is AlreadyExists.
func (s *Store) ImportKeys(ctx context.Context, keys []store.StoredKey) (added int, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		added = 0
		for _, k := range keys {
			if err := ensureTenant(ctx, tx, k.Tenant); err != nil {
				return err
			}
			var revoked *int64
			if k.RevokedAt != nil {
				ms := toMS(*k.RevokedAt)
				revoked = &ms
			}
			var inserted bool
			err := tx.QueryRow(ctx, `INSERT INTO api_keys (id, tenant, name, prefix, hash, created_ms, revoked_ms)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (id) DO UPDATE SET revoked_ms = coalesce(api_keys.revoked_ms, excluded.revoked_ms)
				WHERE api_keys.hash = excluded.hash
				RETURNING xmax = 0`, k.ID, k.Tenant, k.Name, k.Prefix, k.Hash, toMS(k.CreatedAt), revoked).Scan(&inserted)
			if errors.Is(err, pgx.ErrNoRows) {
				return errdefs.AlreadyExists("key %s is in the cluster with another hash", k.ID)
			}
			if err != nil {
				return fmt.Errorf("key %s: %w", k.ID, err)
			}
			if inserted {
				added++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("pgstore: import keys: %w", mapErr(err))
	}
	return added, nil
}

// ImportEnded records sbs, sandboxes that ended on node before it joined
// the cluster, as ended catalog rows (end reason: their state). Live ones
// are InvalidArgument: they run on the host, not in the cluster. A
// parent that is not in the catalog is dropped from its child. It
// returns how many rows were new; an id held by another node's sandbox
// is AlreadyExists.
func (s *Store) ImportEnded(ctx context.Context, node string, sbs []store.Sandbox) (added int, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		added = 0
		for _, sb := range sbs {
			n, err := importEnded(ctx, tx, node, sb)
			if err != nil {
				return fmt.Errorf("sandbox %s: %w", sb.ID, err)
			}
			added += n
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("pgstore: import sandboxes of %s: %w", node, mapErr(err))
	}
	return added, nil
}

func importEnded(ctx context.Context, tx pgx.Tx, node string, sb store.Sandbox) (int, error) {
	if sb.EndedAt == nil || !Terminal(sb.State) {
		return 0, errdefs.InvalidArgument("sandbox %s is %s: only ended sandboxes are imported", sb.ID, sb.State)
	}
	if err := ensureTenant(ctx, tx, sb.Tenant); err != nil {
		return 0, err
	}
	md, err := store.EncodeMap(sb.Metadata)
	if err != nil {
		return 0, err
	}
	var egress *string
	if len(sb.Egress) > 0 {
		e := string(sb.Egress)
		egress = &e
	}
	tag, err := tx.Exec(ctx, `INSERT INTO sandboxes (id, tenant, template, build_id, node_id, node_epoch, state, end_reason,
		metadata, egress, jailed, parent_id, created_ms, deadline_ms, ended_ms)
		VALUES ($1, $2, $3, '', $4, $5, $6, $6, $7, $8::jsonb, $9, (SELECT id FROM sandboxes WHERE id = nullif($10, '')), $11, $12, $13)
		ON CONFLICT (id) DO NOTHING`, sb.ID, sb.Tenant, sb.Template, node, importEpoch, sb.State, md, egress, sb.Jailed,
		sb.ParentID, toMS(sb.CreatedAt), toMS(sb.Deadline), toMS(*sb.EndedAt))
	if err != nil {
		return 0, err
	}
	if tag.RowsAffected() == 0 {
		var owner string
		if err := tx.QueryRow(ctx, `SELECT node_id FROM sandboxes WHERE id = $1`, sb.ID).Scan(&owner); err != nil {
			return 0, err
		}
		if owner != node {
			return 0, errdefs.AlreadyExists("sandbox %s is in the cluster as node %s's", sb.ID, owner)
		}
		return 0, nil
	}
	for k, v := range sb.Metadata {
		if _, err := tx.Exec(ctx, `INSERT INTO sandbox_metadata (sandbox_id, key, value) VALUES ($1, $2, $3)`, sb.ID, k, v); err != nil {
			return 0, err
		}
	}
	return 1, nil
}

// ImportChain appends recs to chain, node's, as ShipAudit does but with
// no lease: the records of a host's own chain from before it joined. They
// must be the exact extension of the chain's head (else ErrDiverged, the
// head unchanged); the chain is bound to node on first use.
func (s *Store) ImportChain(ctx context.Context, node, chain string, recs []store.AuditRecord) (ChainHead, error) {
	head, err := s.appendChain(ctx, node, chain, recs, nil)
	if err != nil {
		return ChainHead{}, fmt.Errorf("pgstore: import audit %s of %s: %w", chain, node, err)
	}
	return head, nil
}

// ChainRecordHash returns the hash of record seq of chain, "" when the
// database does not hold it.
func (s *Store) ChainRecordHash(ctx context.Context, chain string, seq int64) (string, error) {
	var h string
	err := s.pool.QueryRow(ctx, `SELECT hash FROM audit WHERE chain_id = $1 AND seq = $2`, chain, seq).Scan(&h)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("pgstore: chain %s record %d: %w", chain, seq, mapErr(err))
	}
	return h, nil
}
