"""Unit tests of the asyncio SDK against the real API handler (see
apiserver.py), and checks that it keeps the blocking SDK's surface."""

import asyncio
import inspect
import io
import os
import sys
import unittest
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import airlock  # noqa: E402
from airlock import aio  # noqa: E402
from airlock import (AsyncClient, AsyncSandbox, AuditRecord, EgressPolicy, ExecResult, FileInfo,  # noqa: E402
                     ProbeResult, Sandbox, SandboxInfo, Template)
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
            self.assertEqual((await AsyncSandbox.get(sbx.id, client=self.c)).info, sbx.info)
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


class SurfaceTest(unittest.TestCase):
    """The asyncio surface is the blocking one: same names, same
    parameters, coroutines where the blocking call does I/O."""

    PAIRS = [(Sandbox, AsyncSandbox), (airlock.Filesystem, airlock.AsyncFilesystem),
             (airlock.Network, airlock.AsyncNetwork)]

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
                self.assertTrue(inspect.iscoroutinefunction(af), "%s.%s is not async" % (a.__name__, name))

    def test_functions(self):
        for name in ("templates", "template", "audit", "audit_page", "audit_iter"):
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
