package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestStoreFilesAreOwnerOnly: the database, its WAL and its shared-memory
// file are 0600, also when an older version left the database 0644.
func TestStoreFilesAreOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "airlock.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.db.ExecContext(context.Background(), "CREATE TABLE IF NOT EXISTS perm_probe (x)"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %o, want 600", filepath.Base(p), m)
		}
	}
}
