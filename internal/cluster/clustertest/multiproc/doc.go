// Package multiproc is the multi-process cluster harness for tests: a
// private PostgreSQL (from internal/cluster/clustertest), `airlock api`
// processes and airlock-testnode node daemons, each with its own state
// directory, run directory and loopback ports; signals for them; a
// loopback fault proxy (pass, hang, reset); and Check, the invariants
// every fault test ends with (no creating rows, no live rows off lease,
// no orphaned machines, every node's audit chain equal to its copy in
// PostgreSQL).
//
// It is a package of its own, not part of clustertest, because it reads
// the catalog through pgstore, whose own tests import clustertest.
//
// What it must never do: be imported by anything but tests, or listen
// anywhere but loopback.
package multiproc
