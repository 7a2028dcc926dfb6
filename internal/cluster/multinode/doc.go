// Package multinode holds the cluster's multi-process tests: a real
// PostgreSQL 15, `airlock api` processes and test nodes (the real node
// agent over local machines) started by internal/cluster/clustertest/multiproc,
// driven through the public API with the Go client, and faulted with
// signals and fault proxies. It has no code of its own beside its tests.
//
// They need PostgreSQL's binaries (scripts/setup.sh --test installs them) and
// skip without them unless AIRLOCK_REQUIRE_PG=1. They start processes
// and open loopback ports: `go test -short` skips them.
package multinode
