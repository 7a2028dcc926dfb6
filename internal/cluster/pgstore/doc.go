// Package pgstore is the cluster's shared state on PostgreSQL: tenants and
// API keys, templates and their builds, the sandbox catalog, node leases
// (register, heartbeat, drain, leave, sweep with amnesty), the audit log
// of every node's hash chain and of the API tier's control chain, and
// invoice history.
//
// It owns the schema (migrations applied under an advisory lock, a newer
// schema refused) and the rules the database enforces beside the Go code:
// sandbox states only move forward, audit rows are append-only and linked,
// chain heads only move forward.
//
// The decisions about leases are not written here: node registration,
// renewal, expiry, sweeping and amnesty call internal/cluster/lease on rows
// read under a row lock, with the database's clock, and store what it
// returns. Audit hashing, key making and hashing, validation and invoice
// digests are internal/store's exported functions, so a record or key
// means the same thing on one host and in a cluster.
//
// What it must never do: read the wall clock of the process for a lease
// (every lease time comes from the database), accept an audit batch that
// is not an exact extension of its chain's head, re-implement a hash or a
// validator that internal/store exports, store document content (the same
// rules as internal/store: ids, labels, counts and digests only), or be
// opened by a single-host daemon: `airlock serve` without cluster
// configuration never imports a connection to it.
//
// Errors carry internal/errdefs classes: a unique violation is
// AlreadyExists, a missing referenced row NotFound, a check violation
// InvalidArgument, a refusal by one of the schema's triggers
// FailedPrecondition, a lost connection or a server shutting down
// Unavailable; serialization failures and deadlocks are retried a few
// times, then Unavailable.
//
// Concurrency: a *Store is safe for use by many goroutines and by many
// processes on one database. Every transaction runs at READ COMMITTED and
// serialises on the row it changes (SELECT ... FOR UPDATE), never on a
// table.
package pgstore
