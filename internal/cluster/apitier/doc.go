// Package apitier is `airlock api`: the cluster's public HTTP API, one of
// N stateless replicas in front of PostgreSQL (internal/cluster/pgstore)
// and any number of nodes (`airlock serve --cluster-api`, with
// internal/cluster/nodeagent).
//
// It answers the public API with the same handlers as a single host
// (internal/api), its Backend being a Router: every sandbox call is
// looked up in the catalog and proxied to the owning node with the Go
// client, carrying a short-lived assertion for that node and epoch
// (internal/cluster/nodewire), never a tenant key. Bodies stream both
// ways (exec/stream events are flushed one by one, uploads, downloads
// and archives are copied through, process output is long-polled), so
// the tier holds no whole body. A create chooses its node
// (internal/cluster/placement, over a view of the nodes refreshed every
// second), records the sandbox as creating under an id the tier chose
// before the node is called, and marks it running once the node
// answered; Idempotency-Key makes a retried create return the first
// one's sandbox. Keys and the audit log come from PostgreSQL.
//
// Published templates (internal/cluster/templatepub): a create of a
// template with a current build is placed only on nodes of the build's
// host class that reported it ready; with none ready it fails
// failed_precondition naming how many are pulling. The replica reads the
// current builds and the nodes' reports of them at every view refresh and
// at every NOTIFY of a publish, and hands each node the current builds of
// its host class in its heartbeat answer (nodes hold no database
// credentials). A template never published is placed as before: on any
// node that reported it by name at registration.
//
// Beside the public API it serves an internal listener for nodes
// (register, heartbeat, ship, build state), and runs on every replica, each safe to
// run concurrently: the sweeper (leases, with amnesty), the audit
// sequencer, the reconciler of creates left creating (asks the node;
// running or failed), and the catalog's expiry catch-up.
//
// A sandbox on a lost node answers with its lost state (Get) or
// failed_precondition (calls into it), never a hang: the catalog says so
// before any node is called. The replica that swept the node forgets its
// cached routes into it at once; every other replica at its next view
// refresh (every heartbeat interval), when it sees the node's state or
// epoch change.
//
// What it must never do: give a node a tenant key or database
// credentials, trust what a node sends without bounds and strict
// decoding (nodewire), or hand out a sandbox whose row is not running.
package apitier
