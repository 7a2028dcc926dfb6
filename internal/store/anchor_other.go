//go:build !linux

package store

import "os"

func setAppendOnly(*os.File) bool { return false }

func isAppendOnly(*os.File) bool { return false }

// lockFile is a no-op where flock is not used: appends from one process
// are still ordered by the anchor's mutex.
func lockFile(*os.File) (func(), error) { return func() {}, nil }

// UnsealAuditAnchor is a no-op where the flag does not exist.
func UnsealAuditAnchor(string) error { return nil }
