package nodeagent

import (
	"context"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/store"
)

// maxShipRounds bounds the batches one heartbeat's ship sends; a backlog
// drains over the next heartbeats.
const maxShipRounds = 20

// ship sends the sandbox ends and audit records the tier does not have
// yet: ends by time (again from a little before the last one, minus
// those already sent), records exactly after the chain's head in the
// shared store, which the tier's answer moves.
func (a *Agent) ship(ctx context.Context) {
	for range maxShipRounds {
		req, latest, err := a.nextShip(ctx)
		if err != nil {
			a.cfg.Log.Warn("read what to ship", "err", err)
			return
		}
		if len(req.Ended) == 0 && len(req.Audit) == 0 {
			return
		}
		a.mu.Lock()
		token, epoch := a.token, a.id.Epoch
		a.mu.Unlock()
		var resp nodewire.ShipResponse
		if err := a.call(ctx, a.nodePath(nodewire.PathShip), "Bearer "+token, epoch, req, &resp); err != nil {
			a.cfg.Log.Warn("cluster ship refused", "node", a.cfg.NodeID, "err", err)
			return
		}
		a.mu.Lock()
		a.head = chainHead{seq: resp.ChainSeq, hash: resp.ChainHash}
		for _, e := range req.Ended {
			a.shipped[e.ID] = e.EndedAt
		}
		if latest.After(a.endCursor) {
			a.endCursor = latest
		}
		for id, t := range a.shipped {
			if t.Before(a.endCursor.Add(-2 * endOverlap)) {
				delete(a.shipped, id)
			}
		}
		a.mu.Unlock()
		if len(req.Audit) < nodewire.MaxShipAudit && len(req.Ended) < nodewire.MaxShipEnded {
			return
		}
	}
}

// nextShip reads the next batch; latest is the newest end in it.
func (a *Agent) nextShip(ctx context.Context) (nodewire.ShipRequest, time.Time, error) {
	a.mu.Lock()
	cursor, head, chain := a.endCursor, a.head, a.id.Chain
	shipped := make(map[string]bool, len(a.shipped))
	for id := range a.shipped {
		shipped[id] = true
	}
	a.mu.Unlock()
	req := nodewire.ShipRequest{Chain: chain}
	var latest time.Time
	since := time.Time{}
	if !cursor.IsZero() {
		since = cursor.Add(-endOverlap)
	}
	ends, err := a.cfg.Store.EndedSince(ctx, since, nodewire.MaxShipEnded+len(shipped))
	if err != nil {
		return req, latest, err
	}
	for _, sb := range ends {
		if shipped[sb.ID] || sb.EndedAt == nil || len(req.Ended) == nodewire.MaxShipEnded {
			continue
		}
		req.Ended = append(req.Ended, nodewire.Ended{ID: sb.ID, State: sb.State, EndedAt: *sb.EndedAt})
		if sb.EndedAt.After(latest) {
			latest = *sb.EndedAt
		}
	}
	recs, err := a.cfg.Store.QueryAudit(ctx, store.AuditFilter{AfterSeq: head.seq, Limit: nodewire.MaxShipAudit})
	if err != nil {
		return req, latest, err
	}
	for _, r := range recs {
		req.Audit = append(req.Audit, nodewire.FromStore(r))
	}
	return req, latest, nil
}
