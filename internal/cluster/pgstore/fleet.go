package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// SetSandboxPaused records that running sandbox id was paused (paused
// true, at the database clock) or resumed. A sandbox that is not running
// is FailedPrecondition: an end shipped meanwhile wins.
func (s *Store) SetSandboxPaused(ctx context.Context, id string, paused bool) error {
	tag, err := s.pool.Exec(ctx, `UPDATE sandboxes SET paused_ms = CASE WHEN $2 THEN
		(extract(epoch from clock_timestamp()) * 1000)::bigint END WHERE id = $1 AND state = 'running'`, id, paused)
	if err != nil {
		return fmt.Errorf("pgstore: set sandbox %s paused=%t: %w", id, paused, mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: set sandbox %s paused=%t: %w", id, paused, errdefs.FailedPrecondition("sandbox %s is not running", id))
	}
	return nil
}

// NodeStatus is a node's row with what the catalog holds on it, for
// operators (`airlock node ls`).
type NodeStatus struct {
	Node
	// Live counts the catalog's live (creating or running) sandboxes on
	// the node under its current epoch.
	Live int
	// Paused counts those of Live that are paused.
	Paused int
	// Now is the database clock when the row was read: lease and
	// heartbeat ages are measured against it, never the reader's clock.
	Now time.Time
}

// NodeStatuses returns every node's row and live sandbox counts, by id.
func (s *Store) NodeStatuses(ctx context.Context) ([]NodeStatus, error) {
	nodes, err := s.ListNodes(ctx)
	if err != nil {
		return nil, err
	}
	now, err := dbNow(ctx, s.pool)
	if err != nil {
		return nil, fmt.Errorf("pgstore: node statuses: %w", mapErr(err))
	}
	rows, err := s.pool.Query(ctx, `SELECT s.node_id, count(*), count(s.paused_ms) FROM sandboxes s JOIN nodes n USING (node_id)
		WHERE s.state IN ('creating', 'running') AND s.node_epoch = n.epoch GROUP BY s.node_id`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: node statuses: %w", mapErr(err))
	}
	defer rows.Close()
	type counts struct{ live, paused int }
	by := map[string]counts{}
	for rows.Next() {
		var id string
		var c counts
		if err := rows.Scan(&id, &c.live, &c.paused); err != nil {
			return nil, fmt.Errorf("pgstore: node statuses: %w", mapErr(err))
		}
		by[id] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: node statuses: %w", mapErr(err))
	}
	out := make([]NodeStatus, len(nodes))
	for i, n := range nodes {
		out[i] = NodeStatus{Node: n, Live: by[n.ID].live, Paused: by[n.ID].paused, Now: now}
	}
	return out, nil
}

// NodeStatusOf returns node id's status; NotFound when it has no row.
func (s *Store) NodeStatusOf(ctx context.Context, id string) (NodeStatus, error) {
	all, err := s.NodeStatuses(ctx)
	if err != nil {
		return NodeStatus{}, err
	}
	for _, n := range all {
		if n.ID == id {
			return n, nil
		}
	}
	return NodeStatus{}, fmt.Errorf("pgstore: node %s: %w", id, errdefs.NotFound("node %s is not registered", id))
}
