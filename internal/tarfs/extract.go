package tarfs

import (
	"archive/tar"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Defaults for the zero fields of Limits.
const (
	DefaultMaxBytes   = 1 << 30
	DefaultMaxEntries = 100_000
	DefaultMaxNameLen = 4096
	maxElementLen     = 255 // NAME_MAX
)

// Limits bound one extraction. Zero fields take the defaults above
// (MaxEntrySize: MaxBytes).
type Limits struct {
	MaxBytes     int64 // bytes of regular files written, in all
	MaxEntrySize int64 // bytes of any one regular file
	MaxEntries   int64 // headers read (every entry counts, skipped or not)
	MaxNameLen   int   // bytes of an entry's name or a link's target
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxEntrySize <= 0 || l.MaxEntrySize > l.MaxBytes {
		l.MaxEntrySize = l.MaxBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxNameLen <= 0 {
		l.MaxNameLen = DefaultMaxNameLen
	}
	return l
}

// Options tune Extract.
type Options struct {
	Limits
	// StripTop, when set, is the one top-level name every entry must lie
	// under; it is removed from the names ("out/a" is written as "a", and
	// "out" itself is the directory extracted into). Pack with a Prefix
	// writes such a stream.
	StripTop string
	// Umask clears permission bits of what is written, as `docker cp` and
	// tar without -p do on the user's machine: a guest's 0777 is not kept
	// as world-writable there. The guest unpacks uploads with none, keeping
	// modes exactly. ProcessUmask reads this process's own.
	Umask fs.FileMode
}

// Stats counts what an extraction wrote (or a Pack sent: Bytes is then
// the size of the stream).
type Stats struct {
	Entries int64 // entries written: directories, files and links
	Bytes   int64 // bytes of regular files written
}

// Extract unpacks the tar stream r into the existing directory dir, within
// the rules of the package doc. It returns what it wrote, also on error.
func Extract(r io.Reader, dir string, opt Options) (Stats, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Stats{}, fsError("open", dir, err)
	}
	defer root.Close()
	src := &sourceReader{r: r}
	x := &extractor{root: root, lim: opt.Limits.withDefaults(), strip: opt.StripTop, umask: opt.Umask & fs.ModePerm,
		realDirs: map[string]bool{".": true}, dirIndex: map[string]int{}}
	tr := tar.NewReader(src)
	var seen int64
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return x.stats, src.readError(err)
		}
		if seen++; seen > x.lim.MaxEntries {
			return x.stats, errdefs.ResourceExhausted("archive has more than %d entries", x.lim.MaxEntries)
		}
		if err := x.entry(hdr, tr); err != nil {
			if src.err != nil || errors.Is(err, io.ErrUnexpectedEOF) {
				return x.stats, src.readError(err)
			}
			return x.stats, err
		}
	}
	return x.stats, x.finishDirs()
}

// extractor is one Extract in progress.
type extractor struct {
	root     *os.Root
	lim      Limits
	strip    string
	umask    fs.FileMode // permission bits cleared on what is written
	stats    Stats
	realDirs map[string]bool // names known to be directories, not links
	dirs     []pendingDir    // directory entries, for their modes and times
	dirIndex map[string]int  // name -> index in dirs
}

// pendingDir is a directory entry whose mode and time are set at the end,
// once nothing more is written into it.
type pendingDir struct {
	name  string
	mode  fs.FileMode
	mtime time.Time
}

func (x *extractor) entry(hdr *tar.Header, r io.Reader) error {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return nil
	}
	name, err := x.name(hdr.Name)
	if err != nil {
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return x.dir(name, hdr)
	case tar.TypeReg, tar.TypeGNUSparse:
		return x.file(name, hdr, r)
	case tar.TypeSymlink:
		return x.symlink(name, hdr)
	case tar.TypeLink:
		return x.link(name, hdr)
	}
	return errdefs.InvalidArgument("entry %q: %s entries are not accepted (only files, directories and links)",
		hdr.Name, typeName(hdr.Typeflag))
}

func typeName(t byte) string {
	switch t {
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "FIFO"
	}
	return "type " + string(rune(t))
}

// name checks an entry name and returns it relative to the directory; ""
// is the directory itself.
func (x *extractor) name(raw string) (string, error) {
	if len(raw) > x.lim.MaxNameLen {
		return "", errdefs.InvalidArgument("entry name of %d bytes is longer than %d", len(raw), x.lim.MaxNameLen)
	}
	n, err := relName(raw)
	if err != nil {
		return "", err
	}
	if x.strip == "" {
		return n, nil
	}
	switch {
	case n == x.strip:
		return "", nil
	case strings.HasPrefix(n, x.strip+"/"):
		return n[len(x.strip)+1:], nil
	}
	return "", errdefs.InvalidArgument("entry %q is not under %q", raw, x.strip)
}

// relName cleans a relative entry name, refusing what could escape.
func relName(raw string) (string, error) {
	switch {
	case strings.IndexByte(raw, 0) >= 0:
		return "", errdefs.InvalidArgument("entry name contains a NUL byte")
	case strings.HasPrefix(raw, "/"):
		return "", errdefs.InvalidArgument("entry %q: absolute names are not accepted", raw)
	}
	for el := range strings.SplitSeq(raw, "/") {
		if el == ".." {
			return "", errdefs.InvalidArgument("entry %q: '..' is not accepted in names", raw)
		}
		if len(el) > maxElementLen {
			return "", errdefs.InvalidArgument("entry %q: a name element is longer than %d bytes", raw, maxElementLen)
		}
	}
	n := path.Clean(raw)
	if n == "." {
		return "", nil
	}
	return n, nil
}

// parents makes sure every parent of name is a real directory (creating
// missing ones), never a symbolic link: nothing is written through links.
func (x *extractor) parents(name string, create bool) error {
	dir := path.Dir(name)
	if x.realDirs[dir] {
		return nil
	}
	if err := x.parents(dir, create); err != nil {
		return err
	}
	fi, err := x.root.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && create:
		if err := x.root.Mkdir(dir, 0o755); err != nil {
			return fsError("mkdir", dir, err)
		}
	case err != nil:
		return fsError("stat", dir, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return errdefs.InvalidArgument("entry %q: %q is a symbolic link; entries are never written through links", name, dir)
	case !fi.IsDir():
		return errdefs.FailedPrecondition("entry %q: %q exists and is not a directory", name, dir)
	}
	x.realDirs[dir] = true
	return nil
}

// clear removes an existing non-directory at name, so that what replaces
// it is written anew and never through a link.
func (x *extractor) clear(name string) error {
	fi, err := x.root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fsError("stat", name, err)
	case fi.IsDir():
		return errdefs.FailedPrecondition("entry %q: a directory is in the way", name)
	}
	if err := x.root.Remove(name); err != nil {
		return fsError("replace", name, err)
	}
	return nil
}

// mode is the permission bits to give an entry: setuid and setgid
// dropped, the umask applied.
func (x *extractor) mode(hdr *tar.Header) fs.FileMode {
	return hdr.FileInfo().Mode() & (fs.ModePerm | fs.ModeSticky) &^ x.umask
}

func (x *extractor) dir(name string, hdr *tar.Header) error {
	if name == "" {
		return nil // the directory extracted into keeps its own mode
	}
	if err := x.parents(name, true); err != nil {
		return err
	}
	fi, err := x.root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Owner-writable until the end, whatever the entry's mode.
		if err := x.root.Mkdir(name, 0o700); err != nil {
			return fsError("mkdir", name, err)
		}
	case err != nil:
		return fsError("stat", name, err)
	case !fi.IsDir():
		return errdefs.FailedPrecondition("entry %q: exists and is not a directory", hdr.Name)
	}
	x.realDirs[name] = true
	x.stats.Entries++
	d := pendingDir{name: name, mode: x.mode(hdr), mtime: hdr.ModTime}
	if i, ok := x.dirIndex[name]; ok {
		x.dirs[i] = d
		return nil
	}
	x.dirIndex[name] = len(x.dirs)
	x.dirs = append(x.dirs, d)
	return nil
}

func (x *extractor) file(name string, hdr *tar.Header, r io.Reader) (err error) {
	switch {
	case name == "":
		return errdefs.InvalidArgument("entry %q: a file cannot replace the directory extracted into", hdr.Name)
	case hdr.Size < 0:
		return errdefs.InvalidArgument("entry %q: negative size", hdr.Name)
	case hdr.Size > x.lim.MaxEntrySize:
		return errdefs.ResourceExhausted("entry %q is %d bytes, over the limit of %d bytes per file", hdr.Name, hdr.Size, x.lim.MaxEntrySize)
	case x.stats.Bytes+hdr.Size > x.lim.MaxBytes:
		return errdefs.ResourceExhausted("archive holds more than the limit of %d bytes", x.lim.MaxBytes)
	}
	if err := x.parents(name, true); err != nil {
		return err
	}
	if err := x.clear(name); err != nil {
		return err
	}
	f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fsError("create", name, err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fsError("write", name, cerr)
		}
	}()
	n, err := io.CopyN(fileWriter{f, name}, r, hdr.Size)
	x.stats.Bytes += n
	if err != nil {
		// No partial file stays behind (a full disk, a cut stream).
		_ = x.root.Remove(name)
		return err
	}
	if err := f.Chmod(x.mode(hdr)); err != nil {
		return fsError("chmod", name, err)
	}
	x.stats.Entries++
	return x.chtimes(name, hdr.ModTime)
}

// fileWriter classifies write errors (a full disk is resource_exhausted)
// so that io.CopyN's errors from the archive side stay apart.
type fileWriter struct {
	f    *os.File
	name string
}

func (w fileWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = fsError("write", w.name, err)
	}
	return n, err
}

func (x *extractor) chtimes(name string, mtime time.Time) error {
	if mtime.IsZero() {
		return nil
	}
	if err := x.root.Chtimes(name, mtime, mtime); err != nil {
		return fsError("set time of", name, err)
	}
	return nil
}

func (x *extractor) symlink(name string, hdr *tar.Header) error {
	if name == "" {
		return errdefs.InvalidArgument("entry %q: a link cannot replace the directory extracted into", hdr.Name)
	}
	if err := checkLinkTarget(name, hdr.Linkname, x.lim.MaxNameLen); err != nil {
		return err
	}
	if err := x.parents(name, true); err != nil {
		return err
	}
	if err := x.clear(name); err != nil {
		return err
	}
	if err := x.root.Symlink(hdr.Linkname, name); err != nil {
		return fsError("symlink", name, err)
	}
	x.stats.Entries++
	return nil
}

// checkLinkTarget accepts a symlink target that stays inside the
// directory. The target must be clean (so ".." can only lead it), and its
// leading ".." elements must not climb above the directory from the
// link's own one, which is a real directory: a lexical check is then
// exact, since no ".." follows a link.
func checkLinkTarget(name, target string, maxLen int) error {
	switch {
	case target == "":
		return errdefs.InvalidArgument("entry %q: symbolic link with no target", name)
	case len(target) > maxLen:
		return errdefs.InvalidArgument("entry %q: link target longer than %d bytes", name, maxLen)
	case strings.IndexByte(target, 0) >= 0:
		return errdefs.InvalidArgument("entry %q: link target contains a NUL byte", name)
	case path.IsAbs(target):
		return errdefs.InvalidArgument("entry %q: absolute link targets are not accepted (they point outside)", name)
	case path.Clean(target) != target:
		return errdefs.InvalidArgument("entry %q: link target %q is not clean", name, target)
	}
	up := 0
	for el := range strings.SplitSeq(target, "/") {
		if el != ".." {
			break
		}
		up++
	}
	if depth := strings.Count(name, "/"); up > depth {
		return errdefs.InvalidArgument("entry %q: link target %q points outside", name, target)
	}
	return nil
}

func (x *extractor) link(name string, hdr *tar.Header) error {
	if name == "" {
		return errdefs.InvalidArgument("entry %q: a link cannot replace the directory extracted into", hdr.Name)
	}
	old, err := x.name(hdr.Linkname)
	if err != nil {
		return errdefs.InvalidArgument("entry %q: hard link target: %v", hdr.Name, err)
	}
	if old == "" || old == name {
		return errdefs.InvalidArgument("entry %q: hard link to %q", hdr.Name, hdr.Linkname)
	}
	if err := x.parents(old, false); err != nil {
		return err
	}
	if fi, err := x.root.Lstat(old); err != nil || !fi.Mode().IsRegular() {
		return errdefs.InvalidArgument("entry %q: hard link target %q is not a regular file already extracted", hdr.Name, hdr.Linkname)
	}
	if err := x.parents(name, true); err != nil {
		return err
	}
	if err := x.clear(name); err != nil {
		return err
	}
	if err := x.root.Link(old, name); err != nil {
		return fsError("link", name, err)
	}
	x.stats.Entries++
	return nil
}

// finishDirs sets the directories' modes and times, deepest first (a
// parent made unsearchable last).
func (x *extractor) finishDirs() error {
	slices.SortStableFunc(x.dirs, func(a, b pendingDir) int {
		return strings.Count(b.name, "/") - strings.Count(a.name, "/")
	})
	for _, d := range x.dirs {
		if err := x.root.Chmod(d.name, d.mode); err != nil {
			return fsError("chmod", d.name, err)
		}
		if err := x.chtimes(d.name, d.mtime); err != nil {
			return err
		}
	}
	return nil
}
