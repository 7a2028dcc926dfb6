// Package sandbox is the lifecycle manager: create (restore from a
// template), exec, files, fork, egress, kill, and the TTL reaper, with
// every operation persisted and audited through the store and scoped to a
// tenant.
//
// It never stores or logs document content; audit records carry ids,
// metadata, sizes and durations only.
package sandbox
