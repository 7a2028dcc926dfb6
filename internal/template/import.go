package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/image"
)

// ImportRoot is the name of the root image inside an imported bake's
// directory (a local bake names its builder's image cache instead).
const ImportRoot = "root"

// Import is one bake being brought in from elsewhere (a cluster's blob
// store): Begin makes its temporary directory, the caller writes the
// memory file, device state and root image into it (MemPath, StatePath,
// RootPath), and Commit publishes it. Nothing is visible under the
// registry until Commit's rename.
type Import struct {
	r         *Registry
	name, key string
	tmp       string
}

// Has reports whether the bake key of template name is held complete.
func (r *Registry) Has(name, key string) bool {
	if !validName(name) || !validName(key) {
		return false
	}
	_, err := os.Stat(filepath.Join(r.root, name, key, manifestFile))
	return err == nil
}

// Current returns the key name's current link names ("" for none).
func (r *Registry) Current(name string) string {
	key, _ := os.Readlink(filepath.Join(r.root, name, "current"))
	return key
}

// SetCurrent points name's current link at key, which must be held.
func (r *Registry) SetCurrent(name, key string) error {
	if !r.Has(name, key) {
		return errdefs.NotFound("template %s: bake %s is not held", name, key)
	}
	return r.setCurrent(name, key)
}

// BeginImport starts importing bake key of template name. A temporary
// directory an earlier, interrupted import of the same bake left is
// removed first.
func (r *Registry) BeginImport(name, key string) (*Import, error) {
	if !validName(name) || !validName(key) {
		return nil, errdefs.InvalidArgument("import: template name %q or key %q is invalid", name, key)
	}
	tmp := filepath.Join(r.root, name, ".import-"+key)
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("import %s: clean %s: %w", name, tmp, err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("import %s: %w", name, err)
	}
	return &Import{r: r, name: name, key: key, tmp: tmp}, nil
}

// Dir is the temporary directory.
func (im *Import) Dir() string { return im.tmp }

// MemPath, StatePath and RootPath are where the blobs go.
func (im *Import) MemPath() string   { return filepath.Join(im.tmp, memFile) }
func (im *Import) StatePath() string { return filepath.Join(im.tmp, stateFile) }
func (im *Import) RootPath() string  { return filepath.Join(im.tmp, ImportRoot) }

// Abort removes the temporary directory.
func (im *Import) Abort() { os.RemoveAll(im.tmp) }

// Commit makes the files read-only, writes m as manifest.json last (its
// root image rewritten to the bake's own copy), fsyncs, and publishes
// the directory by rename; then points the template's current link at
// it. The files must already be fsynced and checked against m's digests;
// Open verifies them again at first use, as for a local bake.
func (im *Import) Commit(m Manifest) error {
	if m.Name != im.name || m.Key != im.key {
		return errdefs.InvalidArgument("import %s/%s: manifest names %s/%s", im.name, im.key, m.Name, m.Key)
	}
	final := filepath.Join(im.r.root, m.Name, m.Key)
	m.RootImage = filepath.Join(final, ImportRoot)
	for _, f := range []string{im.MemPath(), im.StatePath(), im.RootPath()} {
		if err := os.Chmod(f, 0o444); err != nil {
			return fmt.Errorf("import %s: %w", m.Name, err)
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeSynced(filepath.Join(im.tmp, manifestFile), b); err != nil {
		return fmt.Errorf("import %s: %w", m.Name, err)
	}
	if err := syncPath(im.tmp); err != nil {
		return fmt.Errorf("import %s: %w", m.Name, err)
	}
	if err := image.Publish(im.tmp, final); err != nil {
		return fmt.Errorf("import %s: publish: %w", m.Name, err)
	}
	if err := syncPath(filepath.Dir(final)); err != nil {
		return fmt.Errorf("import %s: %w", m.Name, err)
	}
	return im.r.setCurrent(m.Name, m.Key)
}

func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncPath fsyncs a file or directory.
func syncPath(p string) error {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
