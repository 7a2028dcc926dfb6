package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock/internal/store"
)

// ControlChain is the id of the API tier's own audit chain: sweeps,
// write-offs and other events no node makes.
const ControlChain = "00000000-0000-0000-0000-00000000c0de"

// sequenceLockKey names the advisory lock the sequencer holds, so one
// numbering runs at a time.
const sequenceLockKey = "airlock-audit-seq"

// SequenceAudit numbers every committed record that has no place in the
// paging order yet: a global number (Seq as QueryAudit returns it) and a
// number among its tenant's records (TenantSeq). Records are numbered in
// time order across chains and seq order within one. Numbering runs one
// at a time (an advisory lock) over committed rows only, so a reader
// paging by either number never skips a record that appears later. It
// returns how many it numbered. The API tier runs it every few hundred
// milliseconds (RunSequencer); records are invisible to QueryAudit until
// then.
func (s *Store) SequenceAudit(ctx context.Context) (int64, error) {
	var n int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, sequenceLockKey); err != nil {
			return err
		}
		// One statement, so the heads it reads and the rows it numbers
		// come from one snapshot.
		return tx.QueryRow(ctx, `
WITH pending AS (
	SELECT a.chain_id, a.seq, a.tenant, a.sandbox_id, a.time_ms
	  FROM audit_chains c JOIN audit a ON a.chain_id = c.chain_id AND a.seq > c.ordered_seq AND a.seq <= c.head_seq
), numbered AS (
	SELECT p.chain_id, p.seq, p.tenant, p.sandbox_id,
	       (SELECT coalesce(max(gseq), 0) FROM audit_order) + row_number() OVER (ORDER BY p.time_ms, p.chain_id, p.seq) AS gseq,
	       coalesce((SELECT max(o.tenant_seq) FROM audit_order o WHERE o.tenant = p.tenant), 0)
	         + row_number() OVER (PARTITION BY p.tenant ORDER BY p.time_ms, p.chain_id, p.seq) AS tenant_seq
	  FROM pending p
), ins AS (
	INSERT INTO audit_order (gseq, chain_id, seq, tenant, tenant_seq, sandbox_id)
	SELECT gseq, chain_id, seq, tenant, tenant_seq, sandbox_id FROM numbered
), moved AS (
	UPDATE audit_chains c SET ordered_seq = m.top
	  FROM (SELECT chain_id, max(seq) AS top FROM numbered GROUP BY chain_id) m
	 WHERE c.chain_id = m.chain_id
)
SELECT count(*) FROM numbered`).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("pgstore: sequence audit: %w", err)
	}
	return n, nil
}

// QueryAudit returns the numbered records matching f in paging order. In
// the records it returns Seq is the global paging number (AfterSeq pages
// by it), TenantSeq the tenant's; PrevHash and Hash are as their chain
// holds them (ChainRecords returns records with their chain seq, which is
// what the hash covers).
func (s *Store) QueryAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("pgstore: query audit: %w", err)
	}
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.Tenant != "" {
		where = append(where, `o.tenant = `+arg(f.Tenant))
	}
	if f.SandboxID != "" {
		where = append(where, `o.sandbox_id = `+arg(f.SandboxID))
	}
	if !f.Since.IsZero() {
		where = append(where, `a.time_ms >= `+arg(toMS(f.Since)))
	}
	if !f.Until.IsZero() {
		where = append(where, `a.time_ms < `+arg(toMS(f.Until)))
	}
	if len(f.Events) > 0 {
		where = append(where, `a.event = ANY(`+arg(f.Events)+`)`)
	}
	if f.AfterSeq > 0 {
		where = append(where, `o.gseq > `+arg(f.AfterSeq))
	}
	if f.AfterTenantSeq > 0 {
		where = append(where, `o.tenant_seq > `+arg(f.AfterTenantSeq))
	}
	if len(f.Metadata) > 0 {
		var pairs []string
		for k, v := range f.Metadata {
			pairs = append(pairs, `(m.key = `+arg(k)+` AND m.value = `+arg(v)+`)`)
		}
		where = append(where, `(a.chain_id, a.seq) IN (SELECT m.chain_id, m.seq FROM audit_metadata m WHERE `+
			strings.Join(pairs, ` OR `)+` GROUP BY m.chain_id, m.seq HAVING count(*) = `+arg(len(f.Metadata))+`)`)
	}
	q := `SELECT o.gseq, ` + auditColumns + `, o.tenant_seq FROM audit_order o JOIN audit a USING (chain_id, seq)`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY o.gseq`
	if f.Limit > 0 {
		q += ` LIMIT ` + arg(f.Limit)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("pgstore: query audit: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.AuditRecord, error) {
		var gseq, chainSeq, tseq int64
		rec, err := scanAudit(r, &gseq, &chainSeq, &tseq)
		rec.Seq, rec.TenantSeq = gseq, tseq
		return rec, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: query audit: %w", mapErr(err))
	}
	return out, nil
}

// ChainRecords returns up to limit records of chain after seq afterSeq,
// in chain order, with Seq the chain position the hash covers (store.
// AuditHash recomputes Hash from them) and TenantSeq 0.
func (s *Store) ChainRecords(ctx context.Context, chain string, afterSeq int64, limit int) ([]store.AuditRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT 0::bigint, `+auditColumns+`, 0::bigint FROM audit a
		WHERE a.chain_id = $1 AND a.seq > $2 ORDER BY a.seq LIMIT $3`, chain, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("pgstore: chain records: %w", mapErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.AuditRecord, error) {
		var ignore, chainSeq, tseq int64
		rec, err := scanAudit(r, &ignore, &chainSeq, &tseq)
		rec.Seq = chainSeq
		return rec, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: chain records: %w", mapErr(err))
	}
	return out, nil
}

const auditColumns = `a.seq, a.time_ms, a.tenant, a.sandbox_id, a.parent_id, a.template, a.event, a.metadata,
	a.exit_code, a.bytes, a.duration_ms, a.outcome, a.detail, a.prev_hash, a.hash`

// scanAudit reads first, then auditColumns (the chain seq into
// chainSeq), then last.
func scanAudit(r pgx.Row, first, chainSeq, last *int64) (store.AuditRecord, error) {
	var (
		rec        store.AuditRecord
		timeMS     int64
		md, detail string
		exit       *int32
	)
	if err := r.Scan(first, chainSeq, &timeMS, &rec.Tenant, &rec.SandboxID, &rec.ParentID, &rec.Template, &rec.Event,
		&md, &exit, &rec.Bytes, &rec.DurationMS, &rec.Outcome, &detail, &rec.PrevHash, &rec.Hash, last); err != nil {
		return store.AuditRecord{}, err
	}
	rec.Time = fromMS(timeMS)
	if exit != nil {
		c := int(*exit)
		rec.ExitCode = &c
	}
	var err error
	if rec.Metadata, err = store.DecodeMap(md); err != nil {
		return store.AuditRecord{}, fmt.Errorf("audit record %d: metadata: %w", *chainSeq, err)
	}
	if rec.Detail, err = store.DecodeMap(detail); err != nil {
		return store.AuditRecord{}, fmt.Errorf("audit record %d: detail: %w", *chainSeq, err)
	}
	return rec, nil
}
