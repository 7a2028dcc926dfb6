"""Directories as tar streams, on the caller's machine.

``pack_dir`` writes a directory's contents (never following symlinks) as
a tar stream; ``extract_dir`` unpacks what a sandbox sent, confined the way
the guest confines uploads (and the Go client its downloads): absolute
names, ``..``, links that point out, anything written through a link,
device nodes and FIFOs are refused, setuid bits dropped and the umask
applied; entries and total size are bounded before anything is written.
"""

from __future__ import annotations

import copy
import errno
import os
import posixpath
import stat
import tarfile
from typing import BinaryIO, Tuple

from . import errors

# Bounds on what a download may unpack (as the Go client's DownloadDir).
MAX_EXTRACT_BYTES = 1 << 30
MAX_EXTRACT_ENTRIES = 100_000


def pack_dir(local_dir: str, out: BinaryIO) -> int:
    """Write the contents of local_dir to out as a tar stream (symlinks
    stored as links, never followed); returns the number of entries."""
    if not os.path.isdir(local_dir):
        raise errors.InvalidArgumentError("%s is not a directory" % local_dir)
    count = 0

    def counted(ti: tarfile.TarInfo) -> tarfile.TarInfo:
        nonlocal count
        count += 1
        return ti

    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(os.listdir(local_dir)):
            tar.add(os.path.join(local_dir, name), arcname=name, recursive=True, filter=counted)
    return count


def _strip_top(members: list) -> list:
    """A downloaded directory comes as DIR/, DIR/a, ...: its contents are
    what the caller asked for, so the top component goes. A single file
    stays as it is."""
    if not members:
        return members
    top = members[0].name.split("/", 1)[0]
    if not members[0].isdir() or any(m.name != top and not m.name.startswith(top + "/") for m in members):
        return members
    out = []
    for m in members:
        if m.name == top:
            continue
        m = copy.copy(m)  # not TarInfo.replace: Python before 3.11.4 lacks it
        m.name = m.name[len(top) + 1:]
        if m.islnk() and m.linkname.startswith(top + "/"):
            m.linkname = m.linkname[len(top) + 1:]
        out.append(m)
    return out


MAX_NAME_LEN = 4096
_MAX_ELEMENT_LEN = 255
_NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _refuse(name: str, why: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError("refused archive entry %r: %s" % (name, why))


def _parts(raw: str) -> tuple:
    """The cleaned elements of an entry name; () is the directory itself.
    Absolute names, '..', NUL bytes and overlong names are refused."""
    if len(raw.encode("utf-8", "surrogateescape")) > MAX_NAME_LEN:
        raise _refuse(raw[:64], "name longer than %d bytes" % MAX_NAME_LEN)
    if "\x00" in raw:
        raise _refuse(raw, "name contains a NUL byte")
    if raw.startswith("/"):
        raise _refuse(raw, "absolute names are not accepted")
    out = []
    for el in raw.split("/"):
        if el == "..":
            raise _refuse(raw, "'..' is not accepted in names")
        if len(el.encode("utf-8", "surrogateescape")) > _MAX_ELEMENT_LEN:
            raise _refuse(raw, "a name element is longer than %d bytes" % _MAX_ELEMENT_LEN)
        if el not in ("", "."):
            out.append(el)
    return tuple(out)


def _check_link_target(name: tuple, target: str) -> None:
    """A symbolic link must point inside: a clean, relative target whose
    leading '..' elements do not climb above the directory extracted into
    from the link's own directory. No '..' follows any other element in a
    clean target, and every link is checked so, so this lexical check is
    exact."""
    shown = "/".join(name)
    if not target:
        raise _refuse(shown, "symbolic link with no target")
    if len(target.encode("utf-8", "surrogateescape")) > MAX_NAME_LEN or "\x00" in target:
        raise _refuse(shown, "bad link target")
    if target.startswith("/"):
        raise _refuse(shown, "absolute link targets are not accepted (they point outside)")
    if posixpath.normpath(target) != target:
        raise _refuse(shown, "link target %r is not clean" % target)
    up = 0
    for el in target.split("/"):
        if el != "..":
            break
        up += 1
    if up > len(name) - 1:
        raise _refuse(shown, "link target %r points outside" % target)


def _plan(members: list, max_bytes: int, max_entries: int) -> list:
    """Check every entry before anything is written: names, kinds, link
    targets, nothing written through a link of the stream itself, bounds.
    Returns (parts, member) pairs."""
    if len(members) > max_entries:
        raise errors.ResourceExhaustedError("archive has %d entries, more than %d" % (len(members), max_entries))
    total, links, files, plan = 0, set(), set(), []
    for m in members:
        parts = _parts(m.name)
        for i in range(1, len(parts)):
            if parts[:i] in links:
                raise _refuse(m.name, "%r is a symbolic link; entries are never written through links" % "/".join(parts[:i]))
        if not (m.isdir() or m.isreg() or m.issym() or m.islnk()):
            raise _refuse(m.name, "only files, directories and links are accepted")
        if not parts and not m.isdir():
            raise _refuse(m.name, "cannot replace the directory extracted into")
        if m.isreg():
            if m.size < 0:
                raise _refuse(m.name, "negative size")
            total += m.size
            if total > max_bytes:
                raise errors.ResourceExhaustedError("archive holds %d bytes of files, more than %d" % (total, max_bytes))
            files.add(parts)
        elif m.issym():
            _check_link_target(parts, m.linkname)
            links.add(parts)
        elif m.islnk():
            target = _parts(m.linkname)
            if target not in files or target == parts:
                raise _refuse(m.name, "hard link target %r is not a regular file extracted before it" % m.linkname)
        if not m.issym():
            links.discard(parts)  # replaced by a file or directory
        if not (m.isreg() or m.islnk()):
            files.discard(parts)
        plan.append((parts, m))
    return plan


class _Confined:
    """Writes entries under one directory descriptor. Every parent is
    opened element by element with O_NOFOLLOW, so nothing is ever written
    through a symbolic link, whether it came in the stream or was already
    there, however long the path: no realpath is involved (the PATH_MAX
    trick behind CVE-2025-4517 needs one)."""

    def __init__(self, tar: tarfile.TarFile, root: str, max_bytes: int):
        self.tar, self.left = tar, max_bytes
        self.umask = _umask()
        self.root = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        self.dirs: list = []  # (parts, mode, mtime): set last, deepest first

    def close(self) -> None:
        os.close(self.root)

    def _parent(self, parts: tuple, create: bool) -> int:
        """A new descriptor of parts' parent directory (the caller closes
        it), made where missing when create is set."""
        fd = os.dup(self.root)
        try:
            for el in parts[:-1]:
                try:
                    nfd = os.open(el, _NOFOLLOW_DIR, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(el, 0o755, dir_fd=fd)
                    nfd = os.open(el, _NOFOLLOW_DIR, dir_fd=fd)
                except OSError as e:
                    if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    raise _refuse("/".join(parts), "%r is a link or a file, not a directory; "
                                  "entries are never written through links" % el) from None
                os.close(fd)
                fd = nfd
            return fd
        except BaseException:
            os.close(fd)
            raise

    def _clear(self, parent: int, parts: tuple) -> None:
        """Remove a non-directory in the way, so what replaces it is new."""
        name = parts[-1]
        try:
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            raise errors.FailedPreconditionError("archive entry %r: a directory is in the way" % "/".join(parts))
        os.unlink(name, dir_fd=parent)

    def entry(self, parts: tuple, m: tarfile.TarInfo) -> None:
        if m.isdir():
            return self._dir(parts, m)
        parent = self._parent(parts, create=True)
        try:
            self._clear(parent, parts)
            if m.isreg():
                self._file(parent, parts, m)
            elif m.issym():
                os.symlink(m.linkname, parts[-1], dir_fd=parent)
            else:
                target = _parts(m.linkname)
                tparent = self._parent(target, create=False)
                try:
                    os.link(target[-1], parts[-1], src_dir_fd=tparent, dst_dir_fd=parent, follow_symlinks=False)
                finally:
                    os.close(tparent)
        finally:
            os.close(parent)

    def _dir(self, parts: tuple, m: tarfile.TarInfo) -> None:
        if not parts:
            return  # the directory extracted into keeps its own mode
        parent = self._parent(parts, create=True)
        try:
            try:
                os.mkdir(parts[-1], 0o700, dir_fd=parent)  # owner-writable until the end
            except FileExistsError:
                st = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode):
                    raise errors.FailedPreconditionError("archive entry %r exists and is not a directory" % m.name) from None
        finally:
            os.close(parent)
        self.dirs.append((parts, self._mode(m), m.mtime))

    def _mode(self, m: tarfile.TarInfo) -> int:
        # setuid and setgid dropped; the umask applied, as `docker cp` does.
        return m.mode & 0o1777 & ~self.umask

    def _file(self, parent: int, parts: tuple, m: tarfile.TarInfo) -> None:
        name = parts[-1]
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                     0o600, dir_fd=parent)
        try:
            src = self.tar.extractfile(m)
            while src is not None:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                if len(chunk) > self.left:
                    raise errors.ResourceExhaustedError("archive writes more than the limit of bytes")
                self.left -= len(chunk)
                os.write(fd, chunk)
            os.fchmod(fd, self._mode(m))
            os.utime(fd, (m.mtime, m.mtime))
        except BaseException:
            os.close(fd)
            fd = -1
            os.unlink(name, dir_fd=parent)  # never a half-written file
            raise
        finally:
            if fd >= 0:
                os.close(fd)

    def finish(self) -> None:
        for parts, mode, mtime in sorted(self.dirs, key=lambda d: -len(d[0])):
            parent = self._parent(parts, create=False)
            try:
                fd = os.open(parts[-1], _NOFOLLOW_DIR, dir_fd=parent)
                try:
                    os.fchmod(fd, mode)
                    os.utime(fd, (mtime, mtime))
                finally:
                    os.close(fd)
            finally:
                os.close(parent)


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


def extract_dir(src: BinaryIO, local_dir: str, max_bytes: int = MAX_EXTRACT_BYTES,
                max_entries: int = MAX_EXTRACT_ENTRIES) -> Tuple[int, int]:
    """Unpack the tar stream in src (a seekable file) into local_dir,
    created if missing; returns the entries and the bytes of files written.

    The stream comes from a sandbox, i.e. a hostile guest, so this does
    not rely on Python's extraction filter (absent before 3.11.4 and 3.12,
    and bypassed by CVE-2025-4517 where present). It checks every entry
    before writing anything (InvalidArgumentError for a hostile name, kind
    or link; ResourceExhaustedError for too many entries or bytes), then
    writes each one through descriptors opened element by element without
    following links, counting the bytes it really writes."""
    try:
        with tarfile.open(fileobj=src, mode="r:") as tar:
            plan = _plan(_strip_top(tar.getmembers()), max_bytes, max_entries)
            os.makedirs(local_dir, exist_ok=True)
            w = _Confined(tar, local_dir, max_bytes)
            try:
                for parts, m in plan:
                    w.entry(parts, m)
                w.finish()
            finally:
                w.close()
            return len(plan), max_bytes - w.left
    except tarfile.TarError as e:
        raise errors.InvalidArgumentError("not a tar stream: %s" % e) from None


class LimitedWriter:
    """A binary file wrapper that refuses to grow past limit bytes: a
    download cannot fill the caller's disk."""

    def __init__(self, f: BinaryIO, limit: int):
        self._f, self._left = f, limit

    def write(self, b: bytes) -> int:
        if len(b) > self._left:
            raise errors.ResourceExhaustedError("archive larger than %d bytes" % self._left)
        self._left -= len(b)
        return self._f.write(b)

    def flush(self) -> None:
        self._f.flush()


# The tar stream of MAX_EXTRACT_BYTES of files: headers and padding on top.
MAX_DOWNLOAD_BYTES = MAX_EXTRACT_BYTES + MAX_EXTRACT_ENTRIES * 1536
