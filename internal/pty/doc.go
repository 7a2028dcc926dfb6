// Package pty opens pseudo-terminal pairs and sets their window size: the
// terminal a process gets when it is started with a pty (the guest agent
// in production, internal/sandbox/localmachines in tests). It only opens
// and sizes terminals; who reads and writes them is the caller's.
package pty
