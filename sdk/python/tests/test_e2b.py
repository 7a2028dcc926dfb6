"""The calls E2B users expect, blocking and asyncio, against the real
API handler (see apiserver.py): stdin to a running process, pty, guest
users, connect, text reads and callbacks, files.exists and files.list,
pause and resume."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import airlock  # noqa: E402
from airlock import AsyncClient, AsyncSandbox, Client, ProcessInfo, Sandbox  # noqa: E402
from airlock._calls import TextDecoder, pty_size  # noqa: E402
from apiserver import APIServer  # noqa: E402

SRV = None


def setUpModule():
    global SRV
    SRV = APIServer()


def tearDownModule():
    if SRV is not None:
        SRV.stop()


def read_all(p, stream="stdout") -> bytes:
    out = bytearray()
    p.follow(stream, out.extend)
    return bytes(out)


class PureTest(unittest.TestCase):
    def test_text_decoder_holds_split_characters(self):
        d = TextDecoder()
        euro = "€".encode()
        self.assertEqual(d("stdout", b"a" + euro[:1]), "a")
        self.assertEqual(d("stderr", b"x"), "x")  # streams are apart
        self.assertEqual(d("stdout", euro[1:] + b"b"), "€b")
        self.assertEqual(d("stdout", b"\xff"), "\ufffd")

    def test_pty_sizes(self):
        self.assertEqual(pty_size(True), {"rows": 24, "cols": 80})
        self.assertEqual(pty_size((30, 100)), {"rows": 30, "cols": 100})
        self.assertEqual(pty_size({"rows": 5, "cols": 6}), {"rows": 5, "cols": 6})
        self.assertIsNone(pty_size(None))
        self.assertIsNone(pty_size(False))
        for bad in ((0, 80), (24, 1001), "big", (1, 2, 3)):
            with self.assertRaises(airlock.InvalidArgumentError):
                pty_size(bad)

    def test_process_json_with_pty(self):
        p = ProcessInfo.from_json({"id": "p-1", "state": "running", "pty": {"rows": 24, "cols": 80},
                                   "user": "worker", "stdin_open": True})
        self.assertEqual((p.pty, p.user, p.stdin_open), ((24, 80), "worker", True))
        self.assertEqual(ProcessInfo.from_json(p.to_json()), p)
        self.assertNotIn("pty", ProcessInfo(id="p-2").to_json())


class SyncTest(unittest.TestCase):
    def setUp(self):
        self.c = Client(url=SRV.url, api_key=SRV.keys["acme"])
        self.other = Client(url=SRV.url, api_key=SRV.keys["globex"])

    def sandbox(self) -> Sandbox:
        sbx = Sandbox.create(template="base", client=self.c)
        self.addCleanup(sbx.kill)
        return sbx

    def test_send_stdin(self):
        sbx = self.sandbox()
        p = sbx.processes.start("while read l; do echo \"got:$l\"; done; echo eof", stdin=True)
        self.assertTrue(p.stdin_open)
        self.assertIs(p.send_stdin("one\n"), p)
        sbx.processes.send_stdin(p.id, b"two\n")
        p.send_stdin("three\n", close=True)
        self.assertFalse(p.stdin_open)
        self.assertEqual(read_all(p), b"got:one\ngot:two\ngot:three\neof\n")
        with self.assertRaises(airlock.FailedPreconditionError):
            p.send_stdin("late\n")
        plain = sbx.processes.start("cat", stdin="fed\n")
        plain.wait(20)
        with self.assertRaises(airlock.FailedPreconditionError):
            plain.send_stdin("x")
        with self.assertRaises(airlock.NotFoundError):
            Sandbox(sbx.info, client=self.other).processes.send_stdin(p.id, "x")

    def test_pty_process_and_exec(self):
        sbx = self.sandbox()
        p = sbx.processes.start("stty size; read x; stty size; echo \"in:$x\"", pty=(24, 80))
        self.assertEqual((p.pty, p.stdin_open), ((24, 80), True))
        first = p.output("stdout", wait_seconds=20)
        self.assertIn("24 80", first.text)
        p.resize(40, 120)
        self.assertEqual(p.pty, (40, 120))
        p.send_stdin("typed\n")
        text = []
        p.follow("stdout", text.append, offset=first.next_offset, text=True)
        out = "".join(text)
        for want in ("40 120", "in:typed"):
            self.assertIn(want, out)
        res = sbx.exec("test -t 1 && echo tty; echo err >&2", pty=True)
        self.assertEqual((res.stdout, res.stderr), ("tty\r\nerr\r\n", ""))
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.exec("true", pty=(0, 0))

    def test_user(self):
        sbx = self.sandbox()
        self.assertEqual(sbx.exec("id -u", user="root").stdout, "0\n")
        with self.assertRaises(airlock.InvalidArgumentError) as cm:
            sbx.exec("true", user="no-such-user")
        self.assertIn("does not exist", str(cm.exception))
        # A background process learns it from the guest once started: it
        # fails, saying why.
        p = sbx.processes.start("true", user="no-such-user").wait(20)
        self.assertEqual(p.state, "failed")
        self.assertIn("does not exist", p.error)

    def test_text_files_exists_list(self):
        sbx = self.sandbox()
        sbx.files.write("/job/a.txt", "héllo\n")
        sbx.files.write("/job/b.bin", b"\xff\xfe")
        self.assertIs(sbx.files, sbx.filesystem)
        self.assertEqual(sbx.files.read("/job/a.txt"), "héllo\n".encode())
        self.assertEqual(sbx.files.read("/job/a.txt", format="text"), "héllo\n")
        self.assertEqual(sbx.files.read_text("/job/a.txt"), "héllo\n")
        with self.assertRaises(UnicodeDecodeError):
            sbx.files.read_text("/job/b.bin")
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.files.read("/job/a.txt", format="json")
        self.assertTrue(sbx.files.exists("/job/a.txt"))
        self.assertTrue(sbx.files.exists("/job"))
        self.assertFalse(sbx.files.exists("/job/missing"))
        self.assertEqual([e.name for e in sbx.files.list("/job")], ["a.txt", "b.bin"])
        chunks = []
        res = sbx.exec_stream("printf 'caf\\303'; sleep 0.2; printf '\\251\\n'", on_stdout=chunks.append, text=True)
        self.assertEqual((res.exit_code, "".join(chunks)), (0, "café\n"))
        self.assertTrue(all(isinstance(c, str) for c in chunks))

    def test_pause_resume_connect(self):
        sbx = self.sandbox()
        sbx.files.write("/job/kept", "state")
        self.assertIs(sbx.pause(), sbx)
        self.assertEqual(sbx.state, "paused")
        self.assertEqual(Sandbox.get(sbx.id, client=self.c).state, "paused")
        with self.assertRaises(airlock.FailedPreconditionError):
            sbx.exec("true")
        with self.assertRaises(airlock.FailedPreconditionError):
            sbx.pause()
        back = Sandbox.connect(sbx.id, client=self.c)  # resumes it
        self.assertEqual((back.id, back.state), (sbx.id, "running"))
        self.assertEqual(back.files.read_text("/job/kept"), "state")
        self.assertEqual(Sandbox.connect(sbx.id, client=self.c).state, "running")
        with self.assertRaises(airlock.FailedPreconditionError):
            back.resume()
        with self.assertRaises(airlock.NotFoundError):
            Sandbox.connect(sbx.id, client=self.other)
        back.kill()
        with self.assertRaises(airlock.FailedPreconditionError):
            Sandbox.connect(sbx.id, client=self.c)
        recs = airlock.audit(sandbox=sbx.id, event=["pause", "resume"], client=self.c)
        self.assertEqual([(r.event, r.outcome) for r in recs],
                         [("pause", "ok"), ("pause", "failed_precondition"), ("resume", "ok"),
                          ("resume", "failed_precondition")])


class AsyncTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.c = AsyncClient(url=SRV.url, api_key=SRV.keys["acme"])
        self.addAsyncCleanup(self.c.aclose)

    async def test_the_same_calls(self):
        sbx = await AsyncSandbox.create(template="base", client=self.c)
        self.addAsyncCleanup(sbx.kill)
        p = await sbx.processes.start("cat", stdin=True)
        await p.send_stdin("a\n")
        await sbx.processes.send_stdin(p.id, "b\n")
        await p.close_stdin()
        got = []
        await p.follow("stdout", got.append, text=True)
        self.assertEqual("".join(got), "a\nb\n")
        term = await sbx.processes.start("read x; stty size", pty=True)
        await term.resize(30, 90)
        await term.send_stdin("\n")
        await term.wait(20)
        self.assertEqual((await term.output()).text, "\r\n30 90\r\n")
        await sbx.files.write("/job/t", "text")
        self.assertEqual(await sbx.files.read_text("/job/t"), "text")
        self.assertTrue(await sbx.files.exists("/job/t"))
        self.assertFalse(await sbx.files.exists("/job/nope"))
        chunks = []

        async def collect(s):
            chunks.append(s)
        await sbx.exec_stream("echo hé", on_stdout=collect, text=True)
        self.assertEqual("".join(chunks), "hé\n")
        with self.assertRaises(airlock.InvalidArgumentError):
            await sbx.exec("true", user="no-such-user")
        await sbx.pause()
        self.assertEqual(sbx.state, "paused")
        back = await AsyncSandbox.connect(sbx.id, client=self.c)
        self.assertEqual(back.state, "running")
        self.assertEqual(await back.files.read_text("/job/t"), "text")


if __name__ == "__main__":
    unittest.main()
