// Package lease holds the decisions of node leases, as pure functions over
// node rows and a time: which nodes a sweep marks lost, when a sweep grants
// amnesty instead, whether a heartbeat renews a lease, whether a
// registration renews, starts afresh or is refused, and what a node must do
// to itself when the control plane stops answering. The SQL that stores the
// rows and the simulation of a thousand nodes call the same functions, so
// the rules are written and tested once.
//
// The rules, with their defaults (Defaults):
//
//   - A node heartbeats every 5 s; an accepted heartbeat sets its lease to
//     now + TTL (30 s). A heartbeat is accepted only with the node's current
//     epoch and while the node is ready or draining; a refused one tells the
//     node it was swept.
//   - A sweep runs every 2 s and marks lost every ready or draining node
//     whose lease ended more than the grace (10 s) ago, raising its epoch by
//     one; a silent node is lost 40 to 42 s after its last heartbeat, and
//     every sandbox it held with an older epoch is written off.
//   - Amnesty: a sweep that finds the previous sweep more than TTL/2 ago
//     concludes that the database, or every sweeper, was away, and extends
//     every live lease to max(lease, now + TTL) instead of sweeping. A
//     database failover of a minute therefore never marks the whole fleet
//     lost; a node that really died is swept one TTL later.
//   - Renewal and sweep exclude each other: after a sweep the renewal's
//     epoch no longer matches, and after a renewal the sweep's expiry test
//     fails; with the row locked, exactly one of them wins.
//   - Registration with the current epoch while the row is ready or
//     draining is a renewal by a restarted daemon whose VMs survived: the
//     epoch stays. Otherwise it is allowed only when the row is absent,
//     lost, left or its lease has ended, and starts a new epoch; a live
//     lease held by another claimant is refused (FailedPrecondition).
//     Telling a claimant from the holder (the incarnation secret) is the
//     caller's job before it calls Register.
//   - On the node: no acknowledged heartbeat for more than TTL/2 refuses
//     creates; being told it was swept, or no acknowledgement for
//     FenceAfter (5 min; 0 disables), fences: every local VM is destroyed
//     before the node registers again.
//
// All times of one decision come from one clock: the database's for the
// rows, the node's monotonic clock (measured from when it sent the last
// acknowledged heartbeat) for the node's own rules.
//
// It never does I/O, reads a clock, sleeps, logs or keeps state between
// calls: callers pass the rows and the time, and store what comes back.
package lease
