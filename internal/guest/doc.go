// Package guest is the host side of the agent protocol: the gRPC client the
// host uses to talk to airlock-agent inside a VM, and the connection
// handshake both sides share.
//
// Transport. Each VM has exactly one byte stream to its agent: a
// virtio-serial port whose host end is a unix socket owned by QEMU. gRPC
// (HTTP/2) runs over that stream unchanged. Before each gRPC connection the
// host sends a 16-byte sync token and waits for the agent to echo it. The
// agent only starts an HTTP/2 server transport when the first byte it reads
// is not a sync token. This matters for snapshots: a template is saved while
// its agent is blocked reading a fresh port with no HTTP/2 state at all, so
// every clone restored from it starts a clean gRPC session with its own host,
// and nothing the agent sent to the template's host is expected by a clone's.
// The echo doubles as the readiness probe after a cold boot or a restore.
//
// This package never interprets document content; it moves bytes and
// reports sizes.
package guest
