// Package nodeagent turns a host's daemon into a cluster node: the part
// internal/daemon (and the test node over local machines) wires in when
// `airlock serve --cluster-api=...` is given. It registers the node with
// the API tier, renews its lease by heartbeats, ships the node's sandbox
// ends and its audit chain, kills orphans the tier names, fences itself
// when told its lease was lost, and guards the node's API. With a
// template registry and a blob store it also pulls published templates:
// the heartbeat answer lists the current builds of the node's host class
// (reported at registration), a template syncer
// (internal/cluster/templatesync) pulls those it lacks, and the agent
// reports each build pulling, ready or failed.
//
// What the node serves (Handler): the same HTTP API as a single host
// (internal/api over the sandbox Manager), but authenticated only by the
// tier's assertions (internal/cluster/nodewire): a tenant key, or an
// assertion for another node or an older epoch, is refused. A create
// must carry the id the tier chose (its catalog row exists before the
// VM); a fork the ids of its children. /v1/audit and /v1/keys are not
// served (the tier answers them from PostgreSQL).
//
// The lease rules are internal/cluster/lease's, on the node's monotonic
// clock measured from when the last acknowledged heartbeat was sent: no
// acknowledgement for TTL/2 refuses creates (calls into running
// sandboxes go on); a heartbeat refused because the lease is gone, or no
// acknowledgement for FenceAfter, fences: every local sandbox is
// destroyed (failed, reason node_fenced, audited in the node's own
// chain), then the node registers again and gets a new epoch. While it
// fences it answers every call 503.
//
// What it must never do: hold PostgreSQL credentials or tenant keys (it
// talks to the tier's internal listener only, with the cluster join
// token once and its session token after), act on an assertion it did
// not verify, or keep a sandbox the control plane wrote off: a node that
// learns its epoch ended fences before it serves again.
package nodeagent
