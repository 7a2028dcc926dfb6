// Package clustertest holds test-only helpers for the cluster packages: a
// real PostgreSQL server started from the operating system's packages, one
// per test package, with a fresh database per test.
//
// It owns the server's lifetime: Main starts it before a package's tests
// and stops and removes it after them; Private starts one a test may stop
// and start again (outage tests) without disturbing the others, and
// NewStandby a synchronous streaming standby of one (pg_basebackup -R), for
// failover tests that Kill the primary as its host would die, Promote the
// standby and Rebuild the dead one as the new primary's standby;
// MultiHostDSN names both, connecting to whichever accepts writes.
//
// What it must never do: be imported by anything but tests (it starts
// servers and calls testing), listen on a network address (the server
// takes a unix socket in its own temporary directory only, with
// listen_addresses empty), or download anything: when the PostgreSQL
// binaries are missing, tests skip, unless AIRLOCK_REQUIRE_PG=1, which
// makes the missing server a failure (so CI never skips silently).
package clustertest
