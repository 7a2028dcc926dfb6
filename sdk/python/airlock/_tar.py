"""Directories as tar streams, on the caller's machine.

``pack_dir`` writes a directory's contents (never following symlinks) as
a tar stream; ``extract_dir`` unpacks what a sandbox sent, confined the way
the guest confines uploads: Python's ``data`` extraction filter refuses
absolute names, ``..``, links that point out, device nodes and FIFOs, and
strips setuid bits; entries and total size are bounded before anything is
written.
"""

from __future__ import annotations

import os
import tarfile
from typing import BinaryIO

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
        out.append(m.replace(name=m.name[len(top) + 1:], deep=False))
    return out


def extract_dir(src: BinaryIO, local_dir: str, max_bytes: int = MAX_EXTRACT_BYTES,
                max_entries: int = MAX_EXTRACT_ENTRIES) -> int:
    """Unpack the tar stream in src (a seekable file) into local_dir,
    created if missing; returns the number of entries written. A hostile
    entry raises InvalidArgumentError, too much ResourceExhaustedError,
    before anything is written."""
    try:
        with tarfile.open(fileobj=src, mode="r:") as tar:
            members = tar.getmembers()
            if len(members) > max_entries:
                raise errors.ResourceExhaustedError(
                    "archive has %d entries, more than %d" % (len(members), max_entries))
            total = sum(m.size for m in members if m.isfile())
            if total > max_bytes:
                raise errors.ResourceExhaustedError(
                    "archive holds %d bytes of files, more than %d" % (total, max_bytes))
            members = _strip_top(members)
            os.makedirs(local_dir, exist_ok=True)
            for m in members:
                try:
                    tarfile.data_filter(m, local_dir)
                except tarfile.FilterError as e:
                    raise errors.InvalidArgumentError("refused archive entry %r: %s" % (m.name, e)) from None
            for m in members:
                tar.extract(m, local_dir, filter="data")
            return len(members)
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
