// Package e2e holds end-to-end tests of airlock as users run it: the real
// `airlock serve` daemon as a subprocess, real microVMs, and the Go and
// Python SDKs talking to it over its unix socket.
//
// It owns no production code. The tests boot VMs, so they are skipped
// under `go test -short`, without root, and where QEMU or mmdebstrap is
// missing. One daemon is shared by most tests to keep the run short; tests
// that must restart or crash a daemon start their own. Every daemon's
// teardown checks that no QEMU process and no VM state directory outlived
// it.
package e2e
