package blobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Dir is a Store in a directory: DIR/sha256/<hex>.
type Dir struct {
	root string // immutable
}

// NewDir opens (creating if needed) the store in dir.
func NewDir(dir string) (*Dir, error) {
	if err := os.MkdirAll(filepath.Join(dir, "sha256"), 0o755); err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	return &Dir{root: dir}, nil
}

func (d *Dir) path(digest string) (string, error) {
	if err := ValidDigest(digest); err != nil {
		return "", err
	}
	return filepath.Join(d.root, Key(digest)), nil
}

// Stat implements Store.
func (d *Dir) Stat(_ context.Context, digest string) (int64, error) {
	p, err := d.path(digest)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, errdefs.NotFound("blob %s not found", digest)
	}
	if err != nil {
		return 0, fmt.Errorf("blob store: %w", err)
	}
	return st.Size(), nil
}

// Get implements Store.
func (d *Dir) Get(_ context.Context, digest string) (io.ReadCloser, int64, error) {
	p, err := d.path(digest)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, errdefs.NotFound("blob %s not found", digest)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("blob store: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("blob store: %w", err)
	}
	return f, st.Size(), nil
}

// Put implements Store: a temporary file in the same directory, hashed
// as it is written, fsynced and renamed into place only if it matches.
func (d *Dir) Put(_ context.Context, digest string, r io.Reader, size int64) (err error) {
	p, err := d.path(digest)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, size+1))
	if err != nil {
		return fmt.Errorf("blob store: write %s: %w", digest, err)
	}
	if n != size {
		return errdefs.InvalidArgument("blob %s: got %d bytes, want %d", digest, n, size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return errdefs.InvalidArgument("blob %s: content hashes to %s", digest, got)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o444); err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	return syncDir(filepath.Dir(p))
}

// syncDir fsyncs a directory, so a rename in it survives a crash.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
