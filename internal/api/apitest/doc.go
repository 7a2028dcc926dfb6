// Package apitest serves the real API handler for tests: StartLocal puts
// it in front of the real sandbox manager over local machines
// (internal/sandbox/localmachines: directories and host processes, no
// VMs, no isolation), sharing one store as the daemon does, on a unix
// socket and a loopback port. There is no hand-written fake of the
// manager: a test of the API, the Go client or the CLI meets the same
// validation, errors and audit records as a user of the daemon.
// Recorder wraps a backend to count what a call read, for tests of
// upload limits. cmd/apiserver serves the same for the Python SDK's tests.
package apitest
