"""Unit tests of the asyncio SDK against the real API handler (see
apiserver.py), and checks that it keeps the blocking SDK's surface."""

import asyncio
import dataclasses
import inspect
import io
import os
import sys
import tempfile
import unittest
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import airlock  # noqa: E402
from airlock import aio  # noqa: E402
from airlock import (AsyncClient, AsyncProcess, AsyncSandbox, AuditRecord, EgressPolicy, ExecResult,  # noqa: E402
                     FileInfo, Key, ProbeResult, ProcessInfo, ProcessOutput, Sandbox, SandboxInfo, Template,
                     Usage)
from apiserver import APIServer, tag  # noqa: E402

SRV = None


def setUpModule():
    global SRV
    SRV = APIServer()


def tearDownModule():
    if SRV is not None:
        SRV.stop()


class AsyncBase(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.c = AsyncClient(url=SRV.url, api_key=SRV.keys["acme"])
        self.other = AsyncClient(url=SRV.socket, api_key=SRV.keys["globex"])
        self.addAsyncCleanup(self.c.aclose)
        self.addAsyncCleanup(self.other.aclose)

    async def sandbox(self, **kw) -> AsyncSandbox:
        kw.setdefault("template", "base")
        kw.setdefault("client", self.c)
        sbx = await AsyncSandbox.create(**kw)
        self.addAsyncCleanup(sbx.kill)
        return sbx


class AsyncSandboxTest(AsyncBase):
    async def test_create_get_list_kill(self):
        case = tag("case")
        async with AsyncSandbox.create(template="base", ttl_seconds=60, metadata={"case": case},
                                       client=self.c) as sbx:
            self.assertIsInstance(sbx, AsyncSandbox)
            self.assertIsInstance(sbx.info, SandboxInfo)
            self.assertEqual((sbx.state, sbx.metadata, sbx.template), ("running", {"case": case}, "base"))
            got = await AsyncSandbox.get(sbx.id, client=self.c)
            self.assertIsInstance(got.usage, Usage)  # get reads it, create does not
            self.assertIsNone(sbx.usage)
            self.assertEqual(dataclasses.replace(got.info, usage=None), sbx.info)
            self.assertEqual([s.id for s in await AsyncSandbox.list(metadata={"case": case}, client=self.c)],
                             [sbx.id])
            before = sbx.info.deadline
            self.assertIs(await sbx.set_ttl(600), sbx)
            self.assertGreater(sbx.info.deadline, before)
            with self.assertRaises(airlock.InvalidArgumentError):
                await sbx.set_ttl(10 ** 7)
        self.assertEqual((await sbx.refresh()).state, "killed")
        await sbx.kill()  # not an error
        self.assertEqual(await AsyncSandbox.list(metadata={"case": case}, client=self.c), [])
        self.assertEqual([s.state for s in await AsyncSandbox.list(metadata={"case": case}, all=True,
                                                                   client=self.c)], ["killed"])
        with self.assertRaises(airlock.FailedPreconditionError):
            await sbx.exec("true")
        with self.assertRaises(ZeroDivisionError):
            async with AsyncSandbox.create(template="base", client=self.c) as sbx:
                1 / 0
        self.assertEqual((await sbx.refresh()).state, "killed")

    async def test_errors(self):
        with self.assertRaises(airlock.NotFoundError) as cm:
            await AsyncSandbox.get("sbx-doesnotexist0000", client=self.c)
        self.assertEqual(cm.exception.status, 404)
        with self.assertRaises(airlock.InvalidArgumentError):
            await AsyncSandbox.create(template="base", ttl_seconds=-1, client=self.c)
        with self.assertRaises(airlock.PermissionDeniedError):
            await AsyncSandbox.list(client=AsyncClient(url=SRV.url, api_key="alk_wrong"))
        with self.assertRaises(airlock.UnavailableError):
            await AsyncSandbox.list(client=AsyncClient(url=SRV.socket + ".missing"))
        sbx = await self.sandbox()
        with self.assertRaises(airlock.NotFoundError):
            await AsyncSandbox.get(sbx.id, client=self.other)  # another tenant's
        with self.assertRaises(airlock.InvalidArgumentError):
            await sbx.filesystem.read("/job/../etc/passwd")

    async def test_default_client_from_environment(self):
        env = {k: os.environ.get(k) for k in ("AIRLOCK_URL", "AIRLOCK_API_KEY")}
        os.environ["AIRLOCK_URL"], os.environ["AIRLOCK_API_KEY"] = SRV.socket, SRV.keys["acme"]
        aio._default_client = None

        def restore():
            for k, v in env.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
            aio._default_client = None
        self.addCleanup(restore)
        sbx = await AsyncSandbox.create(template="base")
        self.addAsyncCleanup(sbx.kill)
        self.assertEqual((await AsyncSandbox.get(sbx.id, client=self.c)).id, sbx.id)

    async def test_fork(self):
        sbx = await self.sandbox(metadata={"case": tag("fork")})
        await sbx.filesystem.write("/job/state.txt", "parent")
        kids = await sbx.fork(count=2)
        for k in kids:
            self.addAsyncCleanup(k.kill)
        self.assertTrue(all(isinstance(k, AsyncSandbox) and k.parent_id == sbx.id for k in kids))
        self.assertEqual(await kids[1].filesystem.read("/job/state.txt"), b"parent")

    async def test_egress_and_probe(self):
        sbx = await self.sandbox(probe=True)
        await sbx.network.set_egress(default="deny", allow=[])
        self.assertEqual(sbx.network.egress, EgressPolicy(default="deny"))
        with self.assertRaises(airlock.InvalidArgumentError):
            await sbx.network.set_egress(default="sometimes")
        probes = await sbx.network.probe()
        self.assertTrue(probes)
        self.assertTrue(all(isinstance(p, ProbeResult) and not p.reachable for p in probes))
        rec, = await aio.audit(sandbox=sbx.id, event=["create"], client=self.c)
        self.assertEqual(rec.detail["probe"], "ok")

    async def test_concurrent_sandboxes(self):
        async def job(i):
            async with AsyncSandbox.create(template="base", client=self.c) as sbx:
                await sbx.filesystem.write("/job/in.txt", "doc %d" % i)
                return (await sbx.exec("cat job/in.txt")).stdout
        self.assertEqual(await asyncio.gather(*(job(i) for i in range(6))), ["doc %d" % i for i in range(6)])

    async def test_templates_and_audit(self):
        ts = await aio.templates(client=self.c)
        self.assertTrue(all(isinstance(t, Template) for t in ts))
        self.assertEqual(await aio.template("base", client=self.c), ts[0])
        sbx = await self.sandbox()
        for i in range(4):
            await sbx.exec("exit %d" % i)
        everything = await aio.audit(sandbox=sbx.id, client=self.c)
        self.assertEqual([r.event for r in everything], ["create"] + ["exec"] * 4)
        self.assertTrue(all(isinstance(r, AuditRecord) and isinstance(r.time, datetime) for r in everything))
        page = await aio.audit_page(sandbox=sbx.id, limit=2, client=self.c)
        self.assertEqual((page.records, page.next_after_seq), (everything[:2], everything[1].seq))
        for size in (1, 2, 5, 100):
            self.assertEqual([r async for r in aio.audit_iter(sandbox=sbx.id, page_size=size, client=self.c)],
                             everything)
        self.assertEqual([r async for r in aio.audit_iter(sandbox=sbx.id, client=self.other)], [])


class AsyncExecTest(AsyncBase):
    async def test_exec(self):
        sbx = await self.sandbox()
        r = await sbx.exec("echo partial; echo 'it broke' >&2; exit 7", timeout_seconds=60)
        self.assertIsInstance(r, ExecResult)
        self.assertEqual((r.exit_code, r.stdout, r.stderr), (7, "partial\n", "it broke\n"))
        self.assertEqual((await sbx.exec(["echo", "a b"])).stdout, "a b\n")
        self.assertEqual((await sbx.exec("cat", stdin=b"\xff\x00")).stdout_raw, b"\xff\x00")
        self.assertEqual((await sbx.exec("echo $X", env={"X": "y"})).stdout, "y\n")
        self.assertTrue((await sbx.exec("sleep 30", timeout_seconds=1)).timed_out)

    async def test_exec_stream(self):
        sbx = await self.sandbox()
        out, err = [], []

        async def on_err(b):  # a coroutine function is awaited
            await asyncio.sleep(0)
            err.append(b)
        r = await sbx.exec_stream("for i in 1 2 3; do echo $i; done; echo e >&2; exit 2",
                                  on_stdout=out.append, on_stderr=on_err, timeout_seconds=60)
        self.assertEqual((r.exit_code, b"".join(out), b"".join(err)), (2, b"1\n2\n3\n", b"e\n"))

    async def test_cancel_ends_the_exec(self):
        """Cancelling a call closes its connection: the daemon ends the
        exec (its audit record is written) long before the command would."""
        sbx = await self.sandbox()
        marker = tag("sleep")
        task = asyncio.ensure_future(sbx.exec("sleep 600 # " + marker, timeout_seconds=900))
        started = await self.exec_started(sbx, marker)
        self.assertTrue(started, "the exec never started")
        seen = len(await aio.audit(sandbox=sbx.id, event=["exec"], client=self.c))  # the pgreps
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        recs = []
        for _ in range(400):  # the server notices the closed connection
            recs = (await aio.audit(sandbox=sbx.id, event=["exec"], client=self.c))[seen:]
            if recs:
                break
            await asyncio.sleep(0.05)
        self.assertEqual(len(recs), 1)
        self.assertNotEqual(recs[0].outcome, "ok")
        self.assertLess(recs[0].duration_ms, 600 * 1000)
        self.assertEqual((await sbx.exec("echo still-ok")).stdout, "still-ok\n")

    async def exec_started(self, sbx: AsyncSandbox, marker: str) -> bool:
        for _ in range(400):
            r = await sbx.exec(["pgrep", "-f", marker])
            if r.exit_code == 0:
                return True
            await asyncio.sleep(0.05)
        return False


class AsyncProcessTest(AsyncBase):
    async def read_until(self, p: AsyncProcess, want: bytes) -> bytes:
        got, offset = b"", 0
        while want not in got:
            out = await p.output("stdout", offset, wait_seconds=30)
            got, offset = got + out.data, out.next_offset
            if out.eof:
                break
        return got

    async def test_start_read_kill_wait(self):
        sbx = await self.sandbox()
        p = await sbx.processes.start("echo hi; sleep 30")
        self.assertIsInstance(p, AsyncProcess)
        self.assertIsInstance(p.info, ProcessInfo)
        self.assertEqual((p.state, p.exit_code), ("running", None))
        self.assertEqual(await self.read_until(p, b"hi\n"), b"hi\n")
        self.assertEqual([(q.id, q.state) for q in await sbx.processes.list()], [(p.id, "running")])
        self.assertEqual((await sbx.processes.get(p.id)).cmd, "echo hi; sleep 30")
        with self.assertRaises(airlock.DeadlineExceededError) as cm:
            await p.wait(timeout_seconds=0.2)
        self.assertEqual(cm.exception.status, 504)
        self.assertIs(await p.kill("TERM"), p)
        self.assertIs(await p.wait(), p)
        self.assertEqual((p.state, p.signal, p.exit_code), ("killed", "SIGTERM", 128 + 15))
        self.assertEqual((await p.refresh()).state, "killed")
        with self.assertRaises(airlock.FailedPreconditionError):
            await p.kill()
        with self.assertRaises(airlock.NotFoundError):
            await sbx.processes.get("p-999")

    async def test_output_and_follow(self):
        sbx = await self.sandbox()
        p = await sbx.processes.start("for i in 1 2 3; do echo $i; sleep 0.2; done; echo err >&2; exit 3")
        pieces = [piece async for piece in p.iter_output()]  # while it runs, until it ends
        self.assertTrue(all(isinstance(x, ProcessOutput) for x in pieces))
        self.assertEqual(b"".join(x.data for x in pieces), b"1\n2\n3\n")
        self.assertEqual((await p.wait()).exit_code, 3)
        self.assertEqual(p.state, "exited")
        out = await p.output("stderr")
        self.assertEqual((out.data, out.next_offset, out.eof), (b"err\n", 4, True))
        got = []

        async def on_data(b):  # a coroutine function is awaited
            await asyncio.sleep(0)
            got.append(b)
        self.assertEqual(await p.follow("stdout", on_data), 6)
        self.assertEqual(b"".join(got), b"1\n2\n3\n")
        q = await sbx.processes.start(["cat"], stdin="text in", env={"X": "y"})
        await q.wait(timeout_seconds=120)
        self.assertEqual((await q.output()).text, "text in")
        with self.assertRaises(airlock.InvalidArgumentError):
            await q.output(offset=100)

    async def test_keys(self):
        mine = await aio.keys(client=self.c)
        self.assertTrue(all(isinstance(k, Key) and k.tenant == "acme" for k in mine))
        self.assertEqual(len([k for k in mine if k.current]), 1)
        theirs = await aio.keys(client=self.other)
        self.assertTrue(theirs and all(k.tenant == "globex" for k in theirs))

    async def test_usage(self):
        sbx = await self.sandbox(metadata={"case": tag("usage")})
        self.assertIsNone(sbx.usage)
        self.assertGreater((await sbx.refresh()).usage.memory_rss_bytes, 0)
        listed, = await AsyncSandbox.list(metadata=sbx.metadata, client=self.c)
        self.assertIsNone(listed.usage)
        await sbx.kill()
        self.assertIsNone((await sbx.refresh()).usage)


class AsyncFilesTest(AsyncBase):
    async def test_files(self):
        sbx = await self.sandbox()
        fs = sbx.filesystem
        self.assertEqual(await fs.write("/job/a.txt", "héllo"), 6)
        self.assertEqual(await fs.read("/job/a.txt"), "héllo".encode())
        self.assertEqual(await fs.write("/job/b.bin", io.BytesIO(b"x" * 300000)), 300000)
        out = io.BytesIO()
        self.assertEqual(await fs.read_to("/job/b.bin", out), 300000)
        st = await fs.stat("/job/b.bin")
        self.assertIsInstance(st, FileInfo)
        self.assertEqual(st.size, 300000)
        self.assertEqual([e.name for e in await fs.list("/job")], ["a.txt", "b.bin"])
        await fs.make_dir("/job/d")
        await fs.remove("/job/d")
        await fs.remove("/job/a.txt")
        with self.assertRaises(airlock.NotFoundError):
            await fs.read("/job/a.txt")


def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


class AsyncArchiveTest(AsyncBase):
    async def test_upload_and_download_dir(self):
        sbx = await self.sandbox()
        with tempfile.TemporaryDirectory() as d:
            src, back = os.path.join(d, "src"), os.path.join(d, "back")
            os.makedirs(os.path.join(src, "a", "b"))
            with open(os.path.join(src, "a", "b", "f.txt"), "wb") as f:
                f.write(b"async tree\n")
            r = await sbx.filesystem.upload_dir(src, "/job/t")
            self.assertEqual((r.entries, r.bytes), (3, 11))
            self.assertEqual(await sbx.filesystem.read("/job/t/a/b/f.txt"), b"async tree\n")
            got = await sbx.filesystem.download_dir("/job/t", back)
            self.assertEqual((got.entries, got.bytes), (3, 11))
            with open(os.path.join(back, "a", "b", "f.txt"), "rb") as f:
                self.assertEqual(f.read(), b"async tree\n")
            with self.assertRaises(airlock.InvalidArgumentError):
                await sbx.filesystem.upload_dir(os.path.join(d, "missing"), "/job/u")


class SurfaceTest(unittest.TestCase):
    """The asyncio surface is the blocking one: same names, same
    parameters, coroutines where the blocking call does I/O."""

    PAIRS = [(Sandbox, AsyncSandbox), (airlock.Filesystem, airlock.AsyncFilesystem),
             (airlock.Network, airlock.AsyncNetwork), (airlock.Processes, airlock.AsyncProcesses),
             (airlock.Process, airlock.AsyncProcess)]

    def check(self, sync_fn, async_fn, name):
        ps = [p for p in inspect.signature(sync_fn).parameters.values()]
        pa = [p for p in inspect.signature(async_fn).parameters.values()]
        self.assertEqual([(p.name, p.default) for p in ps], [(p.name, p.default) for p in pa], name)

    def test_classes(self):
        for s, a in self.PAIRS:
            self.assertEqual(_public(s), _public(a), s.__name__)
            for name in _public(s):
                sv, av = inspect.getattr_static(s, name), inspect.getattr_static(a, name)
                if isinstance(sv, property):
                    self.assertIsInstance(av, property, name)
                    continue
                sf, af = getattr(s, name), getattr(a, name)
                self.check(sf, af, "%s.%s" % (s.__name__, name))
                if (s, name) in ((Sandbox, "create"),):
                    continue  # returns an awaitable async context manager
                if inspect.isgeneratorfunction(sf):  # an iterator: ``async for``
                    self.assertTrue(inspect.isasyncgenfunction(af), "%s.%s is not an async generator"
                                    % (a.__name__, name))
                    continue
                self.assertTrue(inspect.iscoroutinefunction(af), "%s.%s is not async" % (a.__name__, name))

    def test_attributes(self):
        """The per-sandbox namespaces are the pairs above."""
        for s, a in ((Sandbox, AsyncSandbox), (airlock.Process, airlock.AsyncProcess)):
            self.assertEqual(set(inspect.signature(s.__init__).parameters),
                             set(inspect.signature(a.__init__).parameters), s.__name__)
        info = SandboxInfo(id="sbx-x")
        sync = Sandbox(info, client=airlock.Client(url="http://h:1"))
        asyn = AsyncSandbox(info, client=AsyncClient(url="http://h:1"))
        pairs = dict(self.PAIRS)
        for name in ("filesystem", "network", "processes"):
            self.assertIs(pairs[type(getattr(sync, name))], type(getattr(asyn, name)), name)

    def test_functions(self):
        for name in ("templates", "template", "keys", "audit", "audit_page", "audit_iter"):
            sf, af = getattr(airlock.sandbox, name), getattr(aio, name)
            self.check(sf, af, name)
            self.assertTrue(inspect.iscoroutinefunction(af) or inspect.isasyncgenfunction(af), name)

    def test_clients(self):
        sync = airlock.Client
        for name in ("call", "stream", "download"):
            self.assertTrue(hasattr(sync, name) and hasattr(AsyncClient, name), name)
            self.check(getattr(sync, name), getattr(AsyncClient, name), name)


if __name__ == "__main__":
    unittest.main()
