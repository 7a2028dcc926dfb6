// Package agent is the guest side of the agent protocol: airlock-agent, the
// VM's PID 1. It brings the guest up (mounts, kernel modules, the read-only
// root with a tmpfs overlay), reaps every orphan, and serves the host's gRPC
// calls (exec, files, archives, health, prepare) over the virtio-serial port named for
// it, reopening the port whenever the host goes away. On a guest with a
// spare vCPU it prewarms its exec path at each session start
// (prewarm_linux.go).
//
// It must never exit: PID 1 exiting panics the guest kernel. A bad request
// gets a gRPC error with a precise code; a crashed handler is recovered.
// It never logs command text or file content to the console.
package agent
