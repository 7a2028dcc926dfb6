"""End-to-end tests of the SDK against a real airlock daemon and real VMs.

They run only when AIRLOCK_URL (and AIRLOCK_API_KEY) point at a daemon that
has the test template baked; otherwise the whole module is skipped, so a
plain ``python3 -m unittest discover -s sdk/python/tests`` stays fast. The Go
test internal/e2e starts such a daemon and runs this file with:

    AIRLOCK_URL=unix:///run/.../api.sock AIRLOCK_API_KEY=alk_... \\
        PYTHONPATH=sdk/python python3 -m unittest sdk/python/tests/test_e2e.py

AIRLOCK_E2E_TEMPLATE names the template (default "test-tiny").
"""

import asyncio
import hashlib
import json
import os
import sys
import tempfile
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import airlock  # noqa: E402
from airlock import (AsyncSandbox, FailedPreconditionError, InvalidArgumentError, NotFoundError,  # noqa: E402
                     ProbeResult, Sandbox, aio)

TEMPLATE = os.environ.get("AIRLOCK_E2E_TEMPLATE", "test-tiny")


def setUpModule():
    if not os.environ.get("AIRLOCK_URL"):
        raise unittest.SkipTest("AIRLOCK_URL is not set: no daemon to run end-to-end tests against")


def _tag(name):
    return "%s-%s" % (name, uuid.uuid4().hex[:12])


class SandboxE2E(unittest.TestCase):

    def test_architecture_snippet(self):
        """The published usage, as the README's Python example writes it."""
        matter_id, doc_id = _tag("matter"), _tag("doc")
        pdf_bytes = b"%PDF-1.4\n" + bytes(range(256)) * 64 + b"\n%%EOF\n"
        sbx = Sandbox.create(template=TEMPLATE, ttl_seconds=300,
                             metadata={"matter": matter_id, "doc": doc_id, "class": "privileged"})
        try:
            self.assertEqual(sbx.state, "running")
            self.assertEqual(sbx.metadata, {"matter": matter_id, "doc": doc_id, "class": "privileged"})
            probe = sbx.exec("ls /sys/class/net", timeout_seconds=60)
            self.assertEqual(probe.exit_code, 0, probe.stderr)
            sbx.network.set_egress(default="deny", allow=[])
            self.assertEqual(sbx.network.egress.default, "deny")
            self.assertFalse(sbx.network.egress.allow)
            # The in-guest egress self-check: under deny-all nothing gets out.
            probes = sbx.network.probe()
            self.assertTrue(probes)
            self.assertTrue(all(isinstance(p, ProbeResult) for p in probes))
            self.assertFalse([p for p in probes if p.reachable], probes)
            self.assertEqual(sbx.filesystem.write("/job/in.pdf", pdf_bytes), len(pdf_bytes))
            result = sbx.exec(
                "sha256sum /job/in.pdf | cut -d' ' -f1 > /tmp/sum && mkdir -p /job/out && "
                "printf '{\"sha256\": \"%s\", \"ok\": true}' \"$(cat /tmp/sum)\" > /job/out/findings.json",
                timeout_seconds=180)
            if result.exit_code != 0:
                raise RuntimeError(result.stderr[-2000:])
            findings = json.loads(sbx.filesystem.read("/job/out/findings.json"))
            self.assertEqual(findings, {"sha256": hashlib.sha256(pdf_bytes).hexdigest(), "ok": True})
            self.assertEqual(sbx.filesystem.read("/job/in.pdf"), pdf_bytes)

            failed = sbx.exec("echo partial; echo 'it broke' >&2; exit 7", timeout_seconds=60)
            self.assertEqual((failed.exit_code, failed.stdout, failed.stderr), (7, "partial\n", "it broke\n"))
            self.assertFalse(failed.ok)
            slow = sbx.exec("sleep 30", timeout_seconds=1)
            self.assertTrue(slow.timed_out)
        finally:
            sbx.kill()
        self.assertEqual(Sandbox.get(sbx.id).state, "killed")
        with self.assertRaises(FailedPreconditionError) as cm:
            sbx.exec("true", timeout_seconds=30)
        self.assertEqual(cm.exception.code, "failed_precondition")
        self.assertEqual(cm.exception.status, 409)
        self.assertIn("is killed", str(cm.exception))
        sbx.kill()  # killing an ended sandbox is not an error

    def test_context_manager_kills_on_exit(self):
        tag = _tag("with")
        with Sandbox.create(template=TEMPLATE, ttl_seconds=120,
                            metadata={"tenant_id": "t1", "invoice_id": tag}) as sbx:
            sid = sbx.id
            before = sbx.info.deadline
            sbx.set_ttl(600)  # the deadline moves, persisted by the daemon
            self.assertGreater(sbx.info.deadline, before)
            self.assertEqual(Sandbox.get(sid).info.deadline, sbx.info.deadline)
            with self.assertRaises(InvalidArgumentError):
                sbx.set_ttl(10 ** 7)  # past the daemon's maximum lifetime
            self.assertEqual([s.id for s in Sandbox.list(metadata={"invoice_id": tag})], [sid])
            self.assertEqual(sbx.exec("echo inside", timeout_seconds=60).stdout, "inside\n")
        self.assertEqual(Sandbox.get(sid).state, "killed")
        self.assertEqual(Sandbox.list(metadata={"invoice_id": tag}), [])
        self.assertEqual([s.state for s in Sandbox.list(metadata={"invoice_id": tag}, all=True)], ["killed"])

        # Also when the block raises: the block's exception comes out.
        with self.assertRaises(ZeroDivisionError):
            with Sandbox.create(template=TEMPLATE, ttl_seconds=120, metadata={"invoice_id": tag + "-raise"}) as sbx:
                sid = sbx.id
                1 / 0
        self.assertEqual(Sandbox.get(sid).state, "killed")

    def test_fork(self):
        with Sandbox.create(template=TEMPLATE, ttl_seconds=300, metadata={"case": _tag("fork")}) as sbx:
            sbx.filesystem.write("/job/state.txt", "parent-v1")
            child, = sbx.fork()  # copy-on-write; the parent keeps running; always a list
            with child:
                self.assertIsInstance(child, Sandbox)
                self.assertEqual(child.parent_id, sbx.id)
                self.assertNotEqual(child.id, sbx.id)
                self.assertEqual(child.filesystem.read("/job/state.txt"), b"parent-v1")
                child.filesystem.write("/job/state.txt", "child")
                sbx.filesystem.write("/job/state.txt", "parent-v2")
                self.assertEqual(child.filesystem.read("/job/state.txt"), b"child")
                self.assertEqual(sbx.filesystem.read("/job/state.txt"), b"parent-v2")
                self.assertEqual(len(Sandbox.list(metadata=sbx.metadata)), 2)
            self.assertEqual(Sandbox.get(child.id).state, "killed")
            self.assertEqual(sbx.exec("cat /job/state.txt", timeout_seconds=60).stdout, "parent-v2")

    def test_list_by_metadata(self):
        matter_id = _tag("matter")
        with Sandbox.create(template=TEMPLATE, ttl_seconds=120, metadata={"matter": matter_id, "doc": "a"}) as a, \
                Sandbox.create(template=TEMPLATE, ttl_seconds=120, metadata={"matter": matter_id, "doc": "b"}) as b:
            self.assertEqual(sorted(s.id for s in Sandbox.list(metadata={"matter": matter_id})), sorted([a.id, b.id]))
            self.assertEqual([s.id for s in Sandbox.list(metadata={"matter": matter_id, "doc": "b"})], [b.id])
            self.assertEqual(Sandbox.list(metadata={"matter": matter_id + "-none"}), [])

    def test_exec_stream(self):
        with Sandbox.create(template=TEMPLATE, ttl_seconds=120) as sbx:
            out, err = [], []
            res = sbx.exec_stream("for i in 1 2 3; do echo $i; done; echo e >&2; exit 2",
                                  on_stdout=out.append, on_stderr=err.append, timeout_seconds=60)
            self.assertEqual(res.exit_code, 2)
            self.assertEqual(b"".join(out), b"1\n2\n3\n")
            self.assertEqual(b"".join(err), b"e\n")

    def test_directory_round_trip(self):
        with tempfile.TemporaryDirectory() as d, Sandbox.create(template=TEMPLATE, ttl_seconds=120) as sbx:
            src, back = os.path.join(d, "src"), os.path.join(d, "back")
            os.makedirs(os.path.join(src, "pages"))
            for i in range(3):
                with open(os.path.join(src, "pages", "p%d.txt" % i), "wb") as f:
                    f.write(b"page %d\n" % i)
            r = sbx.filesystem.upload_dir(src, "/job/in")
            self.assertEqual((r.entries, r.bytes), (4, 21))
            res = sbx.exec("cat /job/in/pages/p*.txt > /job/in/all.txt && ls /job/in/pages | wc -l")
            self.assertEqual(res.stdout.strip(), "3")
            self.assertEqual(sbx.filesystem.download_dir("/job/in", back).entries, 5)
            with open(os.path.join(back, "all.txt"), "rb") as f:
                self.assertEqual(f.read(), b"page 0\npage 1\npage 2\n")

    def test_typed_errors(self):
        with self.assertRaises(NotFoundError):
            Sandbox.get("sbx-doesnotexist0000")
        with Sandbox.create(template=TEMPLATE, ttl_seconds=120) as sbx:
            with self.assertRaises(InvalidArgumentError) as cm:
                sbx.filesystem.write("job/relative.txt", b"x")
            self.assertEqual((cm.exception.code, cm.exception.status), ("invalid_argument", 400))
            with self.assertRaises(InvalidArgumentError):
                sbx.filesystem.read("/job/../etc/passwd")
            with self.assertRaises(NotFoundError):
                sbx.filesystem.read("/job/never-written.txt")
            # The sandbox is fine after refusing bad input.
            self.assertEqual(sbx.exec("echo still-ok", timeout_seconds=60).stdout, "still-ok\n")
        with self.assertRaises(FailedPreconditionError):
            sbx.filesystem.read("/etc/hostname")  # killed
        with self.assertRaises(FailedPreconditionError):
            sbx.fork()


    def test_audit_pages(self):
        with Sandbox.create(template=TEMPLATE, ttl_seconds=120, probe=True, metadata={"case": _tag("audit")}) as sbx:
            for i in range(3):
                sbx.exec("exit %d" % i, timeout_seconds=60)
        everything = airlock.audit(sandbox=sbx.id)
        self.assertEqual([r.event for r in everything], ["create", "exec", "exec", "exec", "kill"])
        self.assertIn(everything[0].detail["probe"], ("ok", "ok_at_warmup"))
        self.assertEqual([r.exit_code for r in everything[1:4]], [0, 1, 2])
        self.assertEqual(list(airlock.audit_iter(sandbox=sbx.id, page_size=2)), everything)


    def test_background_processes(self):
        with Sandbox.create(template=TEMPLATE, ttl_seconds=300, metadata={"case": _tag("proc")}) as sbx:
            p = sbx.processes.start("for i in 1 2 3; do echo line-$i; done; echo err >&2; sleep 600")
            self.assertEqual((p.state, p.exit_code), ("running", None))
            got, offset = b"", 0
            while b"line-3\n" not in got:  # long polls while it runs
                out = p.output("stdout", offset, wait_seconds=30)
                self.assertFalse(out.eof)
                got, offset = got + out.data, out.next_offset
            self.assertEqual(got, b"line-1\nline-2\nline-3\n")
            self.assertEqual([(q.id, q.state) for q in sbx.processes.list()], [(p.id, "running")])
            with self.assertRaises(airlock.DeadlineExceededError):
                p.wait(timeout_seconds=1)
            p.kill("TERM")
            p.wait(timeout_seconds=120)
            self.assertEqual((p.state, p.signal, p.exit_code), ("killed", "SIGTERM", 128 + 15))
            self.assertEqual(b"".join(x.data for x in p.iter_output("stderr")), b"err\n")

            q = sbx.processes.start("cat > /job/in.txt; sleep 1; n=$(wc -c < /job/in.txt); echo $((n)); exit 3",
                                    stdin=b"\x00\xff" * 10)
            chunks = []
            self.assertEqual(q.follow("stdout", chunks.append), 3)
            self.assertEqual(b"".join(chunks), b"20\n")
            self.assertEqual((q.wait().state, q.exit_code), ("exited", 3))
            self.assertEqual(sbx.filesystem.read("/job/in.txt"), b"\x00\xff" * 10)
            usage = Sandbox.get(sbx.id).usage
            self.assertIsNotNone(usage)
            self.assertGreater(usage.memory_pss_bytes, 0)
            self.assertGreater(usage.cpu_seconds, 0)
        mine = airlock.keys()
        self.assertEqual(len([k for k in mine if k.current]), 1)


class AsyncSandboxE2E(unittest.IsolatedAsyncioTestCase):

    async def test_async_job(self):
        """The README's asyncio example, two documents at once."""
        async def review(doc: bytes) -> str:
            async with AsyncSandbox.create(template=TEMPLATE, ttl_seconds=300, probe=True,
                                           metadata={"doc": _tag("adoc")}) as sbx:
                await sbx.filesystem.write("/job/in.pdf", doc)
                chunks = []
                r = await sbx.exec_stream("sha256sum /job/in.pdf", on_stdout=chunks.append, timeout_seconds=120)
                self.assertEqual(r.exit_code, 0)
                child, = await sbx.fork()
                async with child:
                    self.assertEqual(await child.filesystem.read("/job/in.pdf"), doc)
                return b"".join(chunks).decode().split()[0]
        docs = [b"%PDF-1.4 one", b"%PDF-1.4 two"]
        sums = await asyncio.gather(*(review(d) for d in docs))
        self.assertEqual(sums, [hashlib.sha256(d).hexdigest() for d in docs])
        self.assertIn(TEMPLATE, [t.name for t in await aio.templates()])


if __name__ == "__main__":
    unittest.main()
