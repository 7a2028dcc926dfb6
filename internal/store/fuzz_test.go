package store

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadAnchor: an anchor file of any content is read or refused, never
// a panic, and what is read is a positive seq with a 64-character hash.
func FuzzReadAnchor(f *testing.F) {
	f.Add([]byte("1 " + string(make([]byte, 64)) + "\n"))
	f.Add([]byte("3 0123456789012345678901234567890123456789012345678901234567890123\n1 0123456789012345678901234567890123456789012345678901234567890123\n"))
	f.Add([]byte("x y\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "a")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		seq, hash, err := readAnchor(p)
		if err == nil && seq != 0 && (seq < 0 || len(hash) != 64) {
			t.Fatalf("read seq %d hash %q", seq, hash)
		}
	})
}
