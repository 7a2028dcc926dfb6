package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
)

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
