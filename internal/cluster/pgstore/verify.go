package pgstore

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock/internal/store"
)

// VerifyChain walks chain in one snapshot and reports the first place it
// breaks, as store.VerifyAudit does for one host: a record that does not
// match its hash (store.AuditHash), a missing record, a broken link, a
// time going backwards, a metadata index unlike its record, or a head
// that is not the last record. A broken chain is a report, not an error.
func (s *Store) VerifyChain(ctx context.Context, chain string) (store.VerifyReport, error) {
	var rep store.VerifyReport
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var head ChainHead
		err := tx.QueryRow(ctx, `SELECT head_seq, head_hash FROM audit_chains WHERE chain_id = $1`, chain).Scan(&head.Seq, &head.Hash)
		if errors.Is(err, pgx.ErrNoRows) {
			rep = store.VerifyReport{OK: false, FirstBadSeq: 1, Problem: "no such chain"}
			return nil
		}
		if err != nil {
			return err
		}
		rep, err = walkChain(ctx, tx, chain, head)
		return err
	})
	if err != nil {
		return store.VerifyReport{}, fmt.Errorf("pgstore: verify chain %s: %w", chain, mapErr(err))
	}
	return rep, nil
}

func walkChain(ctx context.Context, tx pgx.Tx, chain string, head ChainHead) (store.VerifyReport, error) {
	rows, err := tx.Query(ctx, `SELECT 0::bigint, `+auditColumns+`,
		0::bigint, (SELECT coalesce(jsonb_object_agg(m.key, m.value), '{}')::text FROM audit_metadata m
			WHERE m.chain_id = a.chain_id AND m.seq = a.seq)
		FROM audit a WHERE a.chain_id = $1 ORDER BY a.seq`, chain)
	if err != nil {
		return store.VerifyReport{}, err
	}
	defer rows.Close()
	rep := store.VerifyReport{OK: true}
	bad := func(seq int64, format string, args ...any) {
		rep.OK, rep.FirstBadSeq, rep.Problem = false, seq, fmt.Sprintf(format, args...)
	}
	var last, prevMS int64
	for rows.Next() && rep.OK {
		var ignore, chainSeq, ignore2 int64
		var indexed string
		r, err := scanAuditIndexed(rows, &ignore, &chainSeq, &ignore2, &indexed)
		if err != nil {
			return store.VerifyReport{}, err
		}
		r.Seq = chainSeq
		h, herr := store.AuditHash(r)
		idx, _ := store.DecodeMap(indexed)
		switch {
		case r.Seq != last+1:
			bad(last+1, "record %d is missing (the next record is %d)", last+1, r.Seq)
		case r.PrevHash != rep.LastHash:
			bad(r.Seq, "record %d does not link to record %d", r.Seq, last)
		case toMS(r.Time) < prevMS:
			bad(r.Seq, "record %d is older than record %d", r.Seq, last)
		case herr != nil || h != r.Hash:
			bad(r.Seq, "record %d does not match its hash (modified)", r.Seq)
		case !maps.Equal(idx, r.Metadata):
			bad(r.Seq, "metadata index of record %d does not match the record", r.Seq)
		default:
			rep.Records++
			rep.LastHash, last, prevMS = r.Hash, r.Seq, toMS(r.Time)
		}
	}
	if err := rows.Err(); err != nil {
		return store.VerifyReport{}, err
	}
	switch {
	case !rep.OK:
	case head.Seq != last:
		bad(min(head.Seq, last)+1, "the head is at record %d but the chain ends at %d", head.Seq, last)
	case head.Hash != rep.LastHash:
		bad(max(last, 1), "the head's hash does not match record %d", last)
	}
	return rep, nil
}

// scanAuditIndexed is scanAudit with the metadata index after it.
func scanAuditIndexed(r pgx.Rows, first, chainSeq, last *int64, indexed *string) (store.AuditRecord, error) {
	return scanAudit(extraRow{r, indexed}, first, chainSeq, last)
}

// extraRow scans one more column than its caller asks for.
type extraRow struct {
	pgx.Rows
	extra *string
}

func (e extraRow) Scan(dest ...any) error { return e.Rows.Scan(append(dest, e.extra)...) }
