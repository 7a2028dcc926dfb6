package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/image"
	"github.com/airlock-dev/airlock/internal/vm"
)

// Registry is the set of baked templates under one directory:
// ROOT/NAME/KEY/{mem,state,manifest.json} and ROOT/NAME/current -> KEY.
// Baked files are made read-only and checksummed; Open verifies them once
// per process before they are used.
type Registry struct {
	root string // immutable

	mu sync.Mutex
	// verified holds, for each template dir whose checksums passed, the
	// identity its files had then (guarded by mu): a later Open that finds
	// one changed refuses, and the next verifies again from scratch.
	verified map[string][]fileID
}

// fileID is a file and its identity (vm.FileIdentity: device, inode,
// size, mtime, ctime) when it was verified.
type fileID struct {
	path string
	vm.FileIdentity
}

func statID(path string) (fileID, error) {
	id, err := vm.IdentityOf(path)
	return fileID{path: path, FileIdentity: id}, err
}

// trusted checks that a baked file is what a template's files must be:
// a regular file this process's user owns that nobody can write.
func trusted(path string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return err
	}
	switch {
	case st.Mode&syscall.S_IFMT != syscall.S_IFREG:
		return fmt.Errorf("%s is not a regular file", filepath.Base(path))
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s is owned by uid %d, not %d", filepath.Base(path), st.Uid, os.Geteuid())
	case st.Mode&0o222 != 0:
		return fmt.Errorf("%s is writable (mode %o)", filepath.Base(path), st.Mode&0o777)
	}
	return nil
}

// NewRegistry opens (creating if needed) the registry at root.
func NewRegistry(root string) (*Registry, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("template registry: %w", err)
	}
	return &Registry{root: root, verified: map[string][]fileID{}}, nil
}

// Root is the registry's directory.
func (r *Registry) Root() string { return r.root }

func (r *Registry) load(dir string) (*Template, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &Template{Manifest: m, Dir: dir}, nil
}

func (r *Registry) setCurrent(name, key string) error {
	link := filepath.Join(r.root, name, "current")
	tmp := link + ".tmp"
	os.Remove(tmp)
	if err := os.Symlink(key, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, link)
}

// prune removes other bakes of name. Running clones keep their private
// mappings of a removed memory file; only new restores need the files.
func (r *Registry) prune(name, keep string) {
	entries, _ := os.ReadDir(filepath.Join(r.root, name))
	for _, e := range entries {
		if e.IsDir() && e.Name() != keep && e.Name()[0] != '.' {
			os.RemoveAll(filepath.Join(r.root, name, e.Name()))
		}
	}
}

// Get returns the current bake of name without verifying it.
func (r *Registry) Get(name string) (*Template, error) {
	if !validName(name) {
		return nil, errdefs.InvalidArgument("template name %q is invalid", name)
	}
	key, err := os.Readlink(filepath.Join(r.root, name, "current"))
	if err != nil {
		return nil, errdefs.NotFound("template %q is not built (airlock template build)", name)
	}
	t, err := r.load(filepath.Join(r.root, name, key))
	if err != nil {
		return nil, errdefs.NotFound("template %q: %v", name, err)
	}
	return t, nil
}

// Open returns the current bake of name, ready to restore on h: its host
// parts must match h and its files must match their checksums (checked
// once per process; the files are read-only).
func (r *Registry) Open(h *vm.Host, name string) (*Template, error) {
	t, err := r.Get(name)
	if err != nil {
		return nil, err
	}
	if hp := hostParts(h); t.Host.normal() != hp.normal() {
		return nil, errdefs.FailedPrecondition("template %q was baked for %+v, this host has %+v: rebuild it with airlock template build", name, t.Host, hp)
	}
	files := []string{t.StatePath(), t.MemPath(), t.RootImage}
	r.mu.Lock()
	ids, ok := r.verified[t.Dir]
	r.mu.Unlock()
	if ok {
		for _, want := range ids {
			got, err := statID(want.path)
			if err != nil || got != want {
				r.mu.Lock()
				delete(r.verified, t.Dir)
				r.mu.Unlock()
				h.DropBase(t.MemPath())
				return nil, errdefs.FailedPrecondition("template %q: %s changed since it was verified (inode, size, mtime or ctime): refusing to restore from it; it is checked again on the next use", name, filepath.Base(want.path))
			}
		}
		return t, nil
	}
	// Verified by an earlier process, and no file changed since: trust it.
	if ids, ok := r.stamped(t, files); ok {
		if _, err := h.BaseVerified(t.MemPath(), t.MemSHA256, ids[1].FileIdentity); err != nil {
			return nil, errdefs.FailedPrecondition("template %q: %v", name, err)
		}
		r.mu.Lock()
		r.verified[t.Dir] = ids
		r.mu.Unlock()
		return t, nil
	}
	// Identities first, checksums after: a file replaced while it is being
	// hashed shows up at the next use.
	ids = nil
	for _, f := range files {
		id, err := statID(f)
		if err != nil {
			return nil, errdefs.FailedPrecondition("template %q: %v", name, err)
		}
		ids = append(ids, id)
	}
	for _, f := range []string{t.StatePath(), t.MemPath()} {
		if err := trusted(f); err != nil {
			return nil, errdefs.FailedPrecondition("template %q: %v: refusing to restore from it", name, err)
		}
	}
	// The memory file is checked as its sealed copy is made: what is
	// verified is exactly what every clone will map.
	h.DropBase(t.MemPath())
	if _, sum, err := h.Base(t.MemPath()); err != nil {
		return nil, errdefs.FailedPrecondition("template %q: %v", name, err)
	} else if sum != t.MemSHA256 {
		h.DropBase(t.MemPath())
		return nil, errdefs.FailedPrecondition("template %q: %s does not match its checksum: refusing to restore from it", name, filepath.Base(t.MemPath()))
	}
	for _, c := range []struct{ path, want string }{
		{t.StatePath(), t.StateSHA256}, {t.RootImage, t.RootImageSHA256},
	} {
		got, err := image.FileSHA256(c.path)
		if err != nil {
			return nil, errdefs.FailedPrecondition("template %q: %v", name, err)
		}
		if got != c.want {
			return nil, errdefs.FailedPrecondition("template %q: %s does not match its checksum: refusing to restore from it", name, filepath.Base(c.path))
		}
	}
	r.mu.Lock()
	r.verified[t.Dir] = ids
	r.mu.Unlock()
	r.stamp(t, ids)
	return t, nil
}

// List returns the current bake of every template, by name.
func (r *Registry) List() ([]*Template, error) {
	entries, err := os.ReadDir(r.root)
	if err != nil {
		return nil, err
	}
	var out []*Template
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if t, err := r.Get(e.Name()); err == nil {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Remove deletes every bake of name.
func (r *Registry) Remove(name string) error {
	if !validName(name) {
		return errdefs.InvalidArgument("template name %q is invalid", name)
	}
	dir := filepath.Join(r.root, name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return errdefs.NotFound("template %q does not exist", name)
	}
	r.mu.Lock()
	for d := range r.verified {
		if filepath.Dir(d) == dir {
			delete(r.verified, d)
		}
	}
	r.mu.Unlock()
	return os.RemoveAll(dir)
}
