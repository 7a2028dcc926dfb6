//go:build linux

package template

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// A minimal root (a spec's keep) is cut from the full Debian root that
// mmdebstrap built: only the kept paths, the shared libraries their
// programs load (ELF DT_NEEDED, followed to the end), and what the
// platform itself needs stay. A job template then carries its tools and
// nothing an attacker who took over a parser could use next: no shell, no
// package manager, no interpreter, no network client.

// minimalAlways are kept in every minimal root: the loader's configuration
// (ldconfig writes the cache from it), the accounts programs look up,
// /usr/bin/true (the warm pool's first exec in a clone) and the OS
// identity.
var minimalAlways = []string{
	"/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group",
	"/usr/bin/true", "/usr/lib/os-release", "/etc/os-release",
}

// minimalDirs are made empty if the kept paths did not bring them: mount
// points and directories the agent or jobs write under.
var minimalDirs = []string{"/etc", "/dev", "/proc", "/sys", "/run", "/tmp", "/root", "/var/tmp"}

// libSearchDirs are searched for a library name, after the program's own
// RUNPATH, when the root's ld.so.conf names no others.
var libSearchDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// minimizeTree replaces the tree at root with its minimal cut.
func minimizeTree(root string, keep []string, st *steps) error {
	cut := root + ".min"
	if err := os.Mkdir(cut, 0o755); err != nil {
		return err
	}
	c := &closure{src: root, dst: cut, done: map[string]bool{}, libDirs: ldSearchDirs(root)}
	if err := c.topLevelLinks(); err != nil {
		return err
	}
	for _, p := range append(append([]string(nil), minimalAlways...), keep...) {
		optional := contains(minimalAlways, p)
		if err := c.add(p); err != nil {
			if optional && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return errdefs.InvalidArgument("keep %s: %v", p, err)
		}
	}
	for _, d := range minimalDirs {
		if err := os.MkdirAll(filepath.Join(cut, d), 0o755); err != nil {
			return err
		}
	}
	if out, err := exec.Command("ldconfig", "-r", cut).CombinedOutput(); err != nil {
		return fmt.Errorf("ldconfig for the minimal root: %v: %s", err, strings.TrimSpace(string(out)))
	}
	st.detail("minimal root: %d paths kept, %d libraries", c.files, c.libs)
	if err := removeBuildDir(root); err != nil {
		return err
	}
	return os.Rename(cut, root)
}

// closure copies paths from src to dst with everything they need.
type closure struct {
	src, dst    string
	libDirs     []string
	done        map[string]bool // guest paths already copied
	files, libs int
}

// topLevelLinks copies the root's top-level symlinks (merged /usr:
// /bin -> usr/bin, /lib -> usr/lib, ...), so paths through them resolve
// in the cut as in the original.
func (c *closure) topLevelLinks() error {
	ents, err := os.ReadDir(c.src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		t, err := os.Readlink(filepath.Join(c.src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.Symlink(t, filepath.Join(c.dst, e.Name())); err != nil {
			return err
		}
		c.done["/"+e.Name()] = true
	}
	return nil
}

// add copies guest path p (a file, a symlink and what it points to, or a
// directory with everything in it), with the libraries of every ELF file
// it copies.
func (c *closure) add(p string) error {
	real, err := c.resolveParents(p)
	if err != nil {
		return err
	}
	if c.done[real] {
		return nil
	}
	fi, err := os.Lstat(filepath.Join(c.src, real))
	if err != nil {
		return err
	}
	c.done[real] = true
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return c.addLink(real)
	case fi.IsDir():
		return c.addDir(real, fi)
	case fi.Mode().IsRegular():
		return c.addFile(real, fi)
	}
	return nil // sockets, devices, FIFOs: nothing a job needs
}

// resolveParents makes p's parent directories in dst (copying symlinks met
// on the way, and following them) and returns p with its parents
// resolved: the path the entry itself has in the tree.
func (c *closure) resolveParents(p string) (string, error) {
	cur := "/"
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	for i, el := range parts[:len(parts)-1] {
		next := path.Join(cur, el)
		fi, err := os.Lstat(filepath.Join(c.src, next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if err := c.add(next); err != nil {
				return "", err
			}
			t, err := c.linkTarget(next)
			if err != nil {
				return "", err
			}
			return c.resolveParents(path.Join(append([]string{t}, parts[i+1:]...)...))
		}
		if !c.done[next] {
			if err := os.MkdirAll(filepath.Join(c.dst, next), fi.Mode().Perm()); err != nil {
				return "", err
			}
		}
		cur = next
	}
	return path.Join(cur, parts[len(parts)-1]), nil
}

// linkTarget is where the symlink at guest path p points, as a guest path.
func (c *closure) linkTarget(p string) (string, error) {
	t, err := os.Readlink(filepath.Join(c.src, p))
	if err != nil {
		return "", err
	}
	if !path.IsAbs(t) {
		t = path.Join(path.Dir(p), t)
	}
	return path.Clean(t), nil
}

func (c *closure) addLink(p string) error {
	t, err := os.Readlink(filepath.Join(c.src, p))
	if err != nil {
		return err
	}
	if err := os.Symlink(t, filepath.Join(c.dst, p)); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	target, err := c.linkTarget(p)
	if err != nil {
		return err
	}
	if err := c.add(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err // a dangling link is copied as it is
	}
	return nil
}

func (c *closure) addDir(p string, fi fs.FileInfo) error {
	if err := os.MkdirAll(filepath.Join(c.dst, p), fi.Mode().Perm()); err != nil {
		return err
	}
	ents, err := os.ReadDir(filepath.Join(c.src, p))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := c.add(path.Join(p, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func (c *closure) addFile(p string, fi fs.FileInfo) error {
	if err := copyRegular(filepath.Join(c.src, p), filepath.Join(c.dst, p), fi.Mode()); err != nil {
		return err
	}
	c.files++
	deps, err := elfDeps(filepath.Join(c.src, p))
	if err != nil || deps == nil {
		return nil // not an ELF file (or not one we can read): data
	}
	if deps.interp != "" {
		if err := c.add(deps.interp); err != nil {
			return fmt.Errorf("%s: its loader %s: %w", p, deps.interp, err)
		}
	}
	for _, lib := range deps.needed {
		found, ok := c.findLib(lib, p, deps.runpath)
		if !ok {
			return fmt.Errorf("%s needs %s, which is not in the root", p, lib)
		}
		if !c.done[found] {
			c.libs++
		}
		if err := c.add(found); err != nil {
			return err
		}
	}
	return nil
}

// findLib finds library name for the ELF file at guest path from: its
// RUNPATH ($ORIGIN expanded), then the loader's directories.
func (c *closure) findLib(name, from string, runpath []string) (string, bool) {
	if strings.Contains(name, "/") {
		return name, true
	}
	var dirs []string
	for _, r := range runpath {
		dirs = append(dirs, strings.ReplaceAll(r, "$ORIGIN", path.Dir(from)))
	}
	for _, d := range append(dirs, c.libDirs...) {
		p := path.Join(d, name)
		if _, err := os.Stat(filepath.Join(c.src, p)); err == nil {
			return p, true
		}
	}
	return "", false
}

// elfInfo is what the loader needs for one ELF file.
type elfInfo struct {
	interp  string
	needed  []string
	runpath []string
}

// elfDeps reads an ELF file's loader, DT_NEEDED and RUNPATH; nil for a
// file that is not ELF.
func elfDeps(p string) (*elfInfo, error) {
	f, err := elf.Open(p)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	var info elfInfo
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			b, err := io.ReadAll(prog.Open())
			if err != nil {
				return nil, err
			}
			info.interp = strings.TrimRight(string(b), "\x00")
		}
	}
	if info.needed, err = f.ImportedLibraries(); err != nil {
		return nil, nil // static, or no dynamic section
	}
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		vals, _ := f.DynString(tag)
		for _, v := range vals {
			info.runpath = append(info.runpath, strings.Split(v, ":")...)
		}
	}
	return &info, nil
}

// ldSearchDirs are the library directories the root's ld.so.conf (and
// the files it includes) names, then the usual ones.
func ldSearchDirs(root string) []string {
	var dirs []string
	var read func(guestPath string, depth int)
	read = func(guestPath string, depth int) {
		f, err := os.Open(filepath.Join(root, guestPath))
		if err != nil || depth > 4 {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(strings.SplitN(sc.Text(), "#", 2)[0])
			switch {
			case line == "":
			case strings.HasPrefix(line, "include "):
				matches, _ := filepath.Glob(filepath.Join(root, strings.TrimSpace(strings.TrimPrefix(line, "include "))))
				for _, m := range matches {
					read(strings.TrimPrefix(m, root), depth+1)
				}
			case path.IsAbs(line):
				dirs = append(dirs, path.Clean(line))
			}
		}
	}
	read("/etc/ld.so.conf", 0)
	return append(dirs, libSearchDirs...)
}

// copyRegular copies a file's content and permission bits.
func copyRegular(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
}
