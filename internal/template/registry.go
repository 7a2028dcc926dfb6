package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

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

	mu       sync.Mutex
	verified map[string]bool // guarded by mu; template dirs whose checksums passed
}

// NewRegistry opens (creating if needed) the registry at root.
func NewRegistry(root string) (*Registry, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("template registry: %w", err)
	}
	return &Registry{root: root, verified: map[string]bool{}}, nil
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
	if hp := hostParts(h); t.Host != hp {
		return nil, errdefs.FailedPrecondition("template %q was baked for %+v, this host has %+v: rebuild it with airlock template build", name, t.Host, hp)
	}
	r.mu.Lock()
	ok := r.verified[t.Dir]
	r.mu.Unlock()
	if ok {
		return t, nil
	}
	// The memory file is checked as its sealed copy is made: what is
	// verified is exactly what every clone will map.
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
	r.verified[t.Dir] = true
	r.mu.Unlock()
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
