//go:build !linux

package store

import "os"

func setAppendOnly(*os.File) bool { return false }

func isAppendOnly(*os.File) bool { return false }

// UnsealAuditAnchor is a no-op where the flag does not exist.
func UnsealAuditAnchor(string) error { return nil }
