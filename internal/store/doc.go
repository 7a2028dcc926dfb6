// Package store is airlock's durable state: one SQLite file under the state
// directory, opened through the pure-Go modernc.org/sqlite driver.
//
// It owns four things:
//
//   - API keys bound to tenants (only a SHA-256 of each key is stored);
//   - the sandboxes table, so a restarted daemon can find and reap what the
//     previous process left running or past its deadline;
//   - the templates table (name, content hash, spec, where the bake lives);
//   - the audit log: append-only and hash-chained, so that a modified,
//     deleted or reordered record is detected by VerifyAudit.
//
// What it must never do: store document content, command text, command
// arguments, environment values or guest file paths, in any table, and in the
// audit log above all. Audit records carry ids, tenant, template, event name,
// caller metadata, exit codes, byte counts, durations and small non-content
// facts (a keyed digest of a path, "timed_out"). AppendAudit rejects detail keys that
// name content ("cmd", "path", ...) as a last line of defence, but keeping
// content out is the caller's job: the store cannot tell a document from a
// label.
//
// Every time is stored as integer Unix milliseconds in UTC and returned as a
// UTC time.Time, so values round-trip at millisecond precision only.
//
// Concurrency: a *Store is safe for use by many goroutines. Every write runs
// in a BEGIN IMMEDIATE transaction (the write lock is taken up front, so two
// writers never deadlock upgrading from a read lock) and waits up to
// busyTimeout for another writer, in this process or another, to finish.
// Readers never block writers (WAL mode).
//
// The store sits at the bottom of the dependency graph: it imports errdefs and
// the driver, never sandbox, vmm, api or any other airlock package.
package store
