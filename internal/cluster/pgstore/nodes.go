package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// ErrFenced marks a node call refused because the node does not hold its
// lease under the epoch it presented: it was swept, or another
// incarnation registered. It is FailedPrecondition as well; the node must
// fence (destroy its VMs) and register again.
var ErrFenced = errors.New("node fenced")

// Capacity is what a node can hold, or holds.
type Capacity struct {
	Slots  int   // sandboxes; >= 0
	MemMiB int64 // guest memory in MiB; >= 0
	VCPUs  int   // guest vCPUs; >= 0
}

// NodeSpec is what a registering node says of itself.
type NodeSpec struct {
	// ID names the node (its host name, or --node-id); a valid id.
	ID string
	// Addr is where the API tier reaches the node (host:port).
	Addr string
	// HostClass names the kernel, initramfs, QEMU and accelerator a bake
	// needs to restore: builds go only to nodes of their class.
	HostClass string
	// Capabilities and Labels are opaque to the store (JSON objects).
	Capabilities map[string]any
	Labels       map[string]string
	// Capacity is the node's total.
	Capacity Capacity
	// Version is the daemon's version string.
	Version string
	// Epoch is the epoch the daemon stored from its last registration, 0
	// for none.
	Epoch int64
	// Secret is this daemon's registration secret (random, kept by the
	// node); only its hash is stored. Presenting the current epoch
	// renews a lease only with the secret that registered it.
	Secret string
}

// Registered is how a registration was accepted.
type Registered struct {
	// Epoch is the node's epoch now; the daemon stores it.
	Epoch int64
	// How: lease.Renewed (epoch kept, VMs adopted) or lease.Fresh.
	How lease.Registration
	// Fence: the daemon must destroy its local sandboxes before it
	// serves (lease.FenceOnRegister).
	Fence bool
	// LeaseExpires is the lease's end by the database clock.
	LeaseExpires time.Time
	// WrittenOff are the node's live sandboxes of older epochs that a
	// fresh registration marked lost.
	WrittenOff []string
}

// Node is a node's row as placement reads it: a snapshot, stale as soon
// as it is read (the node's own refusal is the final word on capacity).
type Node struct {
	// Node is the lease part: state, epoch and lease times, all by the
	// database clock.
	lease.Node
	// Addr is where the node API listens, as the node registered it.
	Addr string
	// HostClass is the class of builds the node can restore.
	HostClass string
	// Capacity is the node's total as registered; Used what its last
	// heartbeat reported (never above Capacity for an honest node).
	Capacity Capacity
	Used     Capacity
	// CPUUsage is the host's CPU use at the last heartbeat, 0..1.
	CPUUsage float64
	// Version is the node daemon's version string.
	Version string
	// LostAt is when a sweep marked the node lost; nil unless lost.
	LostAt *time.Time
}

// lockNode reads node id's lease row FOR UPDATE; exists is false when
// there is none.
func lockNode(ctx context.Context, tx pgx.Tx, id string) (n lease.Node, secret string, exists bool, err error) {
	var state string
	err = tx.QueryRow(ctx, `SELECT node_id, state, epoch, lease_expires_at, heartbeat_at, secret_sha256
		FROM nodes WHERE node_id = $1 FOR UPDATE`, id).
		Scan(&n.ID, &state, &n.Epoch, &n.LeaseExpires, &n.HeartbeatAt, &secret)
	if errors.Is(err, pgx.ErrNoRows) {
		return lease.Node{}, "", false, nil
	}
	n.State = lease.State(state)
	return n, secret, err == nil, err
}

// RegisterNode registers spec's node, deciding by lease.Register with the
// database clock: a restarted daemon presenting the current epoch (and
// its secret) of a live row renews; otherwise a new epoch starts if the
// row is absent, lost, left or its lease ended, and every live sandbox of
// older epochs is written off (lost, audited in the control chain). A
// live lease held by another claimant is FailedPrecondition.
func (s *Store) RegisterNode(ctx context.Context, spec NodeSpec) (Registered, error) {
	if err := store.ValidateID("node id", spec.ID); err != nil {
		return Registered{}, fmt.Errorf("pgstore: register node: %w", err)
	}
	caps, err := json.Marshal(orEmpty(spec.Capabilities))
	if err != nil {
		return Registered{}, fmt.Errorf("pgstore: register node %s: %w", spec.ID, errdefs.InvalidArgument("capabilities: %v", err))
	}
	labels, _ := json.Marshal(orEmptyStrings(spec.Labels))
	var out Registered
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		row, secret, exists, err := lockNode(ctx, tx, spec.ID)
		if err != nil {
			return err
		}
		now, err := dbNow(ctx, tx)
		if err != nil {
			return err
		}
		presented := spec.Epoch
		if exists && secret != store.HashKey(spec.Secret) {
			presented = 0 // the epoch number alone does not make the holder
		}
		next, how, err := lease.Register(row, exists, spec.ID, presented, now, s.lease.TTL)
		if err != nil {
			return err
		}
		if err := writeNode(ctx, tx, spec, next, exists, caps, labels, now); err != nil {
			return err
		}
		out = Registered{Epoch: next.Epoch, How: how, Fence: lease.FenceOnRegister(spec.Epoch, how), LeaseExpires: next.LeaseExpires}
		if how == lease.Fresh && exists {
			out.WrittenOff, err = writeOff(ctx, tx, spec.ID, next.Epoch-1, "node_reregistered", now)
		}
		return err
	})
	if err != nil {
		return Registered{}, fmt.Errorf("pgstore: register node %s: %w", spec.ID, err)
	}
	return out, nil
}

// writeNode stores a registration's row. Two first registrations racing
// both find no row; the loser's insert conflicts and is retried as a
// serialization failure, so it then sees the winner's lease.
func writeNode(ctx context.Context, tx pgx.Tx, spec NodeSpec, n lease.Node, exists bool, caps, labels []byte, now time.Time) error {
	args := []any{spec.ID, n.Epoch, uuid.NewString(), store.HashKey(spec.Secret), string(n.State), spec.Addr, spec.HostClass,
		string(caps), string(labels), spec.Capacity.Slots, spec.Capacity.MemMiB, spec.Capacity.VCPUs, spec.Version,
		now, n.HeartbeatAt, n.LeaseExpires}
	if exists {
		_, err := tx.Exec(ctx, `UPDATE nodes SET epoch = $2, incarnation = $3, secret_sha256 = $4, state = $5, addr = $6,
			host_class = $7, capabilities = $8, labels = $9, cap_slots = $10, cap_mem_mib = $11, cap_vcpus = $12,
			version = $13, registered_at = $14, heartbeat_at = $15, lease_expires_at = $16, lost_at = NULL
			WHERE node_id = $1`, args...)
		return err
	}
	tag, err := tx.Exec(ctx, `INSERT INTO nodes (node_id, epoch, incarnation, secret_sha256, state, addr, host_class,
		capabilities, labels, cap_slots, cap_mem_mib, cap_vcpus, version, registered_at, heartbeat_at, lease_expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT (node_id) DO NOTHING`, args...)
	if err == nil && tag.RowsAffected() == 0 {
		return &pgconn.PgError{Code: codeSerializationFailure, Message: "node " + spec.ID + " registered concurrently"}
	}
	return err
}

// Usage is what a heartbeat reports.
type Usage struct {
	Used Capacity
	CPU  float64 // host CPU use, 0..1
	// Warm maps a template to its ready clones on the node.
	Warm map[string]int
}

// HeartbeatAck is an accepted heartbeat's answer.
type HeartbeatAck struct {
	// State is the node's state (draining: the operator asked; take no
	// new sandboxes).
	State lease.State
	// LeaseExpires is the renewed lease's end by the database clock.
	LeaseExpires time.Time
}

// Heartbeat renews node id's lease under epoch, by lease.Renew with the
// database clock, and records its usage. A refused renewal (swept, or
// another epoch) is FailedPrecondition and ErrFenced: the node fences.
func (s *Store) Heartbeat(ctx context.Context, id string, epoch int64, u Usage) (HeartbeatAck, error) {
	warm, err := json.Marshal(orEmptyInts(u.Warm))
	if err != nil {
		return HeartbeatAck{}, fmt.Errorf("pgstore: heartbeat %s: %w", id, errdefs.InvalidArgument("warm: %v", err))
	}
	var ack HeartbeatAck
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		row, _, exists, err := lockNode(ctx, tx, id)
		if err != nil {
			return err
		}
		if !exists {
			return errdefs.NotFound("node %s is not registered", id)
		}
		now, err := dbNow(ctx, tx)
		if err != nil {
			return err
		}
		next, ok := lease.Renew(row, epoch, now, s.lease.TTL)
		if !ok {
			return fmt.Errorf("%w: %w", errdefs.FailedPrecondition("node %s: epoch %d does not hold the lease (epoch %d, %s)",
				id, epoch, row.Epoch, row.State), ErrFenced)
		}
		_, err = tx.Exec(ctx, `UPDATE nodes SET lease_expires_at = $2, heartbeat_at = $3, used_slots = $4, used_mem_mib = $5,
			used_vcpus = $6, cpu_usage = $7, warm = $8 WHERE node_id = $1`,
			id, next.LeaseExpires, next.HeartbeatAt, u.Used.Slots, u.Used.MemMiB, u.Used.VCPUs, u.CPU, string(warm))
		ack = HeartbeatAck{State: next.State, LeaseExpires: next.LeaseExpires}
		return err
	})
	if err != nil {
		return HeartbeatAck{}, fmt.Errorf("pgstore: heartbeat %s: %w", id, err)
	}
	return ack, nil
}

// DrainNode stops placement on a live node; its sandboxes go on.
func (s *Store) DrainNode(ctx context.Context, id string) error {
	return s.setLiveState(ctx, id, lease.Draining)
}

// UndrainNode lets placement use a draining node again.
func (s *Store) UndrainNode(ctx context.Context, id string) error {
	return s.setLiveState(ctx, id, lease.Ready)
}

func (s *Store) setLiveState(ctx context.Context, id string, to lease.State) error {
	tag, err := s.pool.Exec(ctx, `UPDATE nodes SET state = $2 WHERE node_id = $1 AND state IN ('ready', 'draining')`, id, string(to))
	if err != nil {
		return fmt.Errorf("pgstore: set node %s %s: %w", id, to, mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: set node %s %s: %w", id, to, errdefs.FailedPrecondition("node %s is not registered or holds no lease", id))
	}
	return nil
}

// LeaveNode ends node id's lease on a clean shutdown under epoch. It is
// refused (FailedPrecondition) while the node has a live sandbox.
func (s *Store) LeaveNode(ctx context.Context, id string, epoch int64) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		row, _, exists, err := lockNode(ctx, tx, id)
		if err != nil {
			return err
		}
		if !exists || row.Epoch != epoch || !row.State.Live() {
			return fmt.Errorf("%w: %w", errdefs.FailedPrecondition("node %s epoch %d does not hold the lease", id, epoch), ErrFenced)
		}
		var live int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM sandboxes WHERE node_id = $1 AND state IN ('creating', 'running')`, id).Scan(&live); err != nil {
			return err
		}
		if live > 0 {
			return errdefs.FailedPrecondition("node %s still has %d live sandboxes", id, live)
		}
		_, err = tx.Exec(ctx, `UPDATE nodes SET state = 'left' WHERE node_id = $1`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgstore: leave node %s: %w", id, err)
	}
	return nil
}

// ListNodes returns every node's row, by id.
func (s *Store) ListNodes(ctx context.Context) ([]Node, error) {
	rows, err := s.pool.Query(ctx, `SELECT node_id, state, epoch, lease_expires_at, heartbeat_at, addr, host_class,
		cap_slots, cap_mem_mib, cap_vcpus, used_slots, used_mem_mib, used_vcpus, cpu_usage, version, lost_at
		FROM nodes ORDER BY node_id`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list nodes: %w", mapErr(err))
	}
	nodes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Node, error) {
		var (
			n     Node
			state string
			cpu   float32
		)
		err := r.Scan(&n.ID, &state, &n.Epoch, &n.LeaseExpires, &n.HeartbeatAt, &n.Addr, &n.HostClass,
			&n.Capacity.Slots, &n.Capacity.MemMiB, &n.Capacity.VCPUs, &n.Used.Slots, &n.Used.MemMiB, &n.Used.VCPUs,
			&cpu, &n.Version, &n.LostAt)
		n.State, n.CPUUsage = lease.State(state), float64(cpu)
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: list nodes: %w", mapErr(err))
	}
	return nodes, nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func orEmptyStrings(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func orEmptyInts(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}
