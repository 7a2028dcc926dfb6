package template

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/airlock-dev/airlock/internal/image"
)

// A template's files are hashed in full (about half a gigabyte: guest
// memory and root image) the first time a process opens it. Re-hashing
// them in every later process is what made a one-shot `airlock run` spend
// a second before its VM started. So after a full verification Open
// writes a stamp into the bake's directory: each file's identity (device,
// inode, size, mtime and ctime) with the checksum it matched. A later
// process trusts a stamp only when
//
//   - the stamp and the bake's directory are this user's and nobody else
//     can write them (the files themselves are read-only and this user's,
//     as every Open checks),
//   - every file still has exactly the identity stamped (any write moves
//     mtime and ctime, and ctime cannot be set back from userspace; a
//     replaced file is a new inode), and
//   - the checksums stamped are the ones the manifest asks for now.
//
// Anything else is a full verification, which writes a new stamp. The
// memory file's sealed copy is still made in each process (clones map the
// copy, never the file), only without hashing.

const stampName = "verified.json"

// stampFile is one file of a stamp.
type stampFile struct {
	Path    string `json:"path"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Size    int64  `json:"size"`
	MtimeNS int64  `json:"mtime_ns"`
	CtimeNS int64  `json:"ctime_ns"`
	SHA256  string `json:"sha256"`
}

type stampDoc struct {
	Files []stampFile `json:"files"`
}

// sums are the checksums the manifest asks of files (as Open lists them:
// state, memory, root image).
func (t *Template) sums() []string { return []string{t.StateSHA256, t.MemSHA256, t.RootImageSHA256} }

func stampOf(id fileID, sum string) stampFile {
	return stampFile{Path: id.path, Dev: id.Dev, Ino: id.Ino, Size: id.Size,
		MtimeNS: id.Mtime.Nano(), CtimeNS: id.Ctime.Nano(), SHA256: sum}
}

// stamp records that ids (of state, memory and root image, in that
// order) matched t's checksums. Only a cache: a failure to write it means
// the next process verifies again.
func (r *Registry) stamp(t *Template, ids []fileID) {
	doc := stampDoc{}
	for i, id := range ids {
		doc.Files = append(doc.Files, stampOf(id, t.sums()[i]))
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return
	}
	_ = image.WriteFileAtomic(filepath.Join(t.Dir, stampName), b, 0o400)
}

// stamped returns the identities of files (state, memory, root image) if
// t's stamp vouches for all of them now.
func (r *Registry) stamped(t *Template, files []string) ([]fileID, bool) {
	path := filepath.Join(t.Dir, stampName)
	if trusted(path) != nil || privateDir(t.Dir) != nil || trusted(files[0]) != nil || trusted(files[1]) != nil {
		return nil, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var doc stampDoc
	if json.Unmarshal(b, &doc) != nil || len(doc.Files) != len(files) {
		return nil, false
	}
	ids := make([]fileID, len(files))
	for i, f := range files {
		id, err := statID(f)
		if err != nil || doc.Files[i] != stampOf(id, t.sums()[i]) || t.sums()[i] == "" {
			return nil, false
		}
		ids[i] = id
	}
	return ids, true
}

// privateDir checks that dir is a directory this user owns that nobody
// else can write into.
func privateDir(dir string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return err
	}
	switch {
	case st.Mode&syscall.S_IFMT != syscall.S_IFDIR:
		return fmt.Errorf("%s is not a directory", dir)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s is owned by uid %d", dir, st.Uid)
	case st.Mode&0o022 != 0:
		return fmt.Errorf("%s is writable by others (mode %o)", dir, st.Mode&0o777)
	}
	return nil
}
