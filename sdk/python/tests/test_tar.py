"""The confined extraction of what a sandbox sends (airlock._tar), against
hostile tar streams a guest could make. No server: pure local files."""

import io
import os
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import airlock  # noqa: E402
from airlock import _tar  # noqa: E402


def add(t: tarfile.TarFile, name: str, kind=tarfile.REGTYPE, data: bytes = b"", link: str = "", mode: int = 0o644):
    ti = tarfile.TarInfo(name)
    ti.type, ti.linkname, ti.mode = kind, link, mode
    if kind == tarfile.DIRTYPE:
        ti.mode = 0o755
    ti.size = len(data) if kind == tarfile.REGTYPE else 0
    t.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def stream(build) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        build(t)
    buf.seek(0)
    return buf


class ConfinedExtractTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.outside = os.path.join(self.tmp.name, "outside")
        os.mkdir(self.outside)
        self.dest = os.path.join(self.tmp.name, "a", "b", "c", "dest")

    def assertNothingOutside(self):
        self.assertEqual(os.listdir(self.outside), [])

    def test_realpath_overflow_escape(self):
        # CVE-2025-4517's shape: a chain of long directory names and links
        # to them makes realpath() give up past PATH_MAX, so a filter that
        # resolves links with it lets a link out of the directory, then a
        # hard link to a file outside and writes through both. Debian's
        # Python 3.11.2 has no data_filter at all.
        dest = os.path.join(self.tmp.name, "dest")
        with open(os.path.join(self.outside, "flag"), "w") as f:
            f.write("secret")
        comp = "d" * 247
        steps = "abcdefghijklmnop"

        def build(t):
            path = ""
            for step in steps:
                add(t, os.path.join(path, comp), tarfile.DIRTYPE)
                add(t, os.path.join(path, step), tarfile.SYMTYPE, link=comp)
                path = os.path.join(path, comp)
            linkpath = os.path.join(*steps, "l" * 254)
            add(t, linkpath, tarfile.SYMTYPE, link=os.path.join(*[".."] * len(steps)))
            add(t, "escape", tarfile.SYMTYPE, link=linkpath + "/..")
            add(t, "flaglink", tarfile.LNKTYPE, link="escape/outside/flag")
            add(t, "flaglink", data=b"overwritten")
            add(t, "escape/outside/newfile", data=b"new")

        with self.assertRaises(airlock.InvalidArgumentError):
            _tar.extract_dir(stream(build), dest)
        self.assertEqual(os.listdir(self.outside), ["flag"])
        with open(os.path.join(self.outside, "flag")) as f:
            self.assertEqual(f.read(), "secret")

    def test_link_through_link(self):
        for build in (
            lambda t: (add(t, "l", tarfile.SYMTYPE, link="."), add(t, "l/../../x", data=b"x")),
            lambda t: (add(t, "sub", tarfile.DIRTYPE), add(t, "sub/l", tarfile.SYMTYPE, link=".."),
                       add(t, "sub/l/l2", tarfile.SYMTYPE, link="..")),
            lambda t: (add(t, "in", tarfile.SYMTYPE, link="sub"), add(t, "sub", tarfile.DIRTYPE),
                       add(t, "in/f", data=b"through a link")),
            lambda t: add(t, "h", tarfile.LNKTYPE, link="../outside/target"),
            lambda t: (add(t, "s", tarfile.SYMTYPE, link="f"), add(t, "h", tarfile.LNKTYPE, link="s")),
            lambda t: add(t, "", tarfile.SYMTYPE, link=".."),
            lambda t: add(t, "abs", tarfile.SYMTYPE, link="/etc"),
            lambda t: add(t, "dev", tarfile.CHRTYPE),
        ):
            with self.subTest(build=build), self.assertRaises(airlock.InvalidArgumentError):
                _tar.extract_dir(stream(build), self.dest)
            self.assertNothingOutside()

    def test_link_already_in_the_directory(self):
        # A link the caller's directory already holds is never written
        # through, however the stream names it.
        os.makedirs(self.dest)
        os.symlink(self.outside, os.path.join(self.dest, "there"))
        with self.assertRaises(airlock.InvalidArgumentError):
            _tar.extract_dir(stream(lambda t: add(t, "there/f", data=b"x")), self.dest)
        self.assertNothingOutside()
        # A file entry replaces the link itself instead of writing through it.
        _tar.extract_dir(stream(lambda t: add(t, "there", data=b"replaced")), self.dest)
        self.assertFalse(os.path.islink(os.path.join(self.dest, "there")))
        self.assertNothingOutside()

    def test_bounds_count_bytes_written(self):
        with self.assertRaises(airlock.ResourceExhaustedError):
            _tar.extract_dir(stream(lambda t: add(t, "big", data=b"y" * 2000)), self.dest, max_bytes=1000)
        self.assertFalse(os.path.exists(self.dest))
        with self.assertRaises(airlock.ResourceExhaustedError):
            _tar.extract_dir(stream(lambda t: [add(t, "f%d" % i) for i in range(11)]), self.dest, max_entries=10)

    def test_modes_follow_the_umask(self):
        old = os.umask(0o027)
        self.addCleanup(os.umask, old)

        def build(t):
            add(t, "top", data=b"t")  # so the stream has no one top directory to strip
            add(t, "d", tarfile.DIRTYPE)
            add(t, "d/open", data=b"x", mode=0o777)
            add(t, "d/suid", data=b"x", mode=0o4755)
            add(t, "d/ok", tarfile.SYMTYPE, link="open")
            add(t, "d/hard", tarfile.LNKTYPE, link="d/open")

        self.assertEqual(_tar.extract_dir(stream(build), self.dest), (6, 3))  # 3 one-byte files (a hard link writes none)
        st = lambda n: os.stat(os.path.join(self.dest, "d", n)).st_mode & 0o7777  # noqa: E731
        self.assertEqual(st("open"), 0o750)
        self.assertEqual(st("suid"), 0o750)
        self.assertEqual(os.readlink(os.path.join(self.dest, "d", "ok")), "open")
        self.assertEqual(os.stat(os.path.join(self.dest, "d", "hard")).st_ino,
                         os.stat(os.path.join(self.dest, "d", "open")).st_ino)


if __name__ == "__main__":
    unittest.main()
