"""Unit tests of the blocking SDK against the real API handler (see
apiserver.py): the daemon's own routes, validation, tenant scoping, audit
log and error codes, over a real sandbox manager on local machines."""

import dataclasses
import io
import json
import os
import sys
import tarfile
import tempfile
import unittest
from datetime import datetime, timedelta, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import airlock  # noqa: E402
from airlock import (AuditRecord, Client, EgressPolicy, EgressRule, ExecResult, FileInfo, Key,  # noqa: E402
                     Process, ProcessInfo, ProcessOutput, ProbeResult, Sandbox, SandboxInfo, Template, Usage)
from airlock._calls import MAX_WAIT_STEP, WaitClock, exec_timeout  # noqa: E402
from airlock._http import parse_url  # noqa: E402
from airlock.types import parse_time  # noqa: E402
from apiserver import APIServer, tag  # noqa: E402

MAX_UPLOAD = 1 << 20
SRV = None


def setUpModule():
    global SRV
    SRV = APIServer("-max-upload-bytes", str(MAX_UPLOAD))


def tearDownModule():
    if SRV is not None:
        SRV.stop()


class Base(unittest.TestCase):
    """Each test talks to the server as tenant acme over TCP (``self.c``),
    and also through AIRLOCK_URL/AIRLOCK_API_KEY set to the unix socket."""

    def setUp(self):
        self.c = Client(url=SRV.url, api_key=SRV.keys["acme"])
        self.other = Client(url=SRV.url, api_key=SRV.keys["globex"])
        env = {k: os.environ.get(k) for k in ("AIRLOCK_URL", "AIRLOCK_API_KEY")}
        os.environ["AIRLOCK_URL"], os.environ["AIRLOCK_API_KEY"] = SRV.socket, SRV.keys["acme"]
        airlock.sandbox._default_client = None

        def restore():
            for k, v in env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            airlock.sandbox._default_client = None
        self.addCleanup(restore)

    def sandbox(self, **kw) -> Sandbox:
        """A sandbox of template base, killed at cleanup."""
        kw.setdefault("template", "base")
        kw.setdefault("client", self.c)
        sbx = Sandbox.create(**kw)
        self.addCleanup(sbx.kill)
        return sbx


class PureTest(unittest.TestCase):
    def test_parse_url(self):
        self.assertEqual(parse_url("unix:///run/airlock/airlock.sock"), ("unix", "/run/airlock/airlock.sock", ""))
        self.assertEqual(parse_url("unix:/run/a.sock"), ("unix", "/run/a.sock", ""))
        self.assertEqual(parse_url("/run/a.sock"), ("unix", "/run/a.sock", ""))
        self.assertEqual(parse_url("http://127.0.0.1:8080"), ("http", "127.0.0.1:8080", ""))
        self.assertEqual(parse_url("https://h.example/api/"), ("https", "h.example", "/api"))
        for bad in ("unix://relative.sock", "ftp://x", "localhost:80", "", "http://"):
            with self.assertRaises(airlock.InvalidArgumentError, msg=bad):
                parse_url(bad)

    def test_config(self):
        env = {k: os.environ.pop(k, None) for k in ("AIRLOCK_URL", "AIRLOCK_API_KEY")}
        self.addCleanup(os.environ.update, {k: v for k, v in env.items() if v is not None})
        self.assertEqual(Client().url, "unix:///run/airlock/airlock.sock")
        os.environ["AIRLOCK_URL"], os.environ["AIRLOCK_API_KEY"] = "http://h:1", "alk_secret"
        c = Client()
        self.assertEqual((c.url, c.api_key), ("http://h:1", "alk_secret"))
        self.assertNotIn("alk_secret", repr(c))
        self.assertEqual(Client(url="http://x:1", api_key="k").api_key, "k")
        self.assertNotIn("alk_secret", repr(airlock.AsyncClient()))

    def test_error_mapping(self):
        from airlock.errors import error_for
        cases = {
            "not_found": airlock.NotFoundError, "invalid_argument": airlock.InvalidArgumentError,
            "permission_denied": airlock.PermissionDeniedError,
            "failed_precondition": airlock.FailedPreconditionError,
            "resource_exhausted": airlock.ResourceExhaustedError,
            "deadline_exceeded": airlock.DeadlineExceededError, "unavailable": airlock.UnavailableError,
            "already_exists": airlock.AlreadyExistsError, "internal": airlock.InternalError,
        }
        for code, cls in cases.items():
            e = error_for(code, "m", 400)
            self.assertIsInstance(e, cls)
            self.assertIsInstance(e, airlock.AirlockError)
            self.assertEqual((e.code, e.status, e.message), (code, 400, "m"))
        self.assertIsInstance(error_for(None, "m", 404), airlock.NotFoundError)
        self.assertIsInstance(error_for(None, "m", 502), airlock.UnavailableError)
        e = error_for("some_new_code", "m", 418)
        self.assertEqual(type(e), airlock.AirlockError)
        self.assertEqual(e.code, "some_new_code")
        self.assertIsNone(e.reason)

    def test_error_reason(self):
        from airlock._http import decode_error
        e = decode_error(409, "Conflict", b'{"error": {"code": "failed_precondition", "message": "egress self-check '
                                          b'failed: tcp-public", "reason": "egress_open"}}')
        self.assertIsInstance(e, airlock.EgressOpenError)
        self.assertIsInstance(e, airlock.FailedPreconditionError)
        self.assertEqual((e.code, e.reason, e.status), ("failed_precondition", "egress_open", 409))
        # An unknown reason keeps the class; a reason of the wrong type is dropped.
        e = decode_error(409, "Conflict", b'{"error": {"code": "failed_precondition", "message": "m", "reason": "new"}}')
        self.assertEqual((type(e), e.reason), (airlock.FailedPreconditionError, "new"))
        e = decode_error(409, "Conflict", b'{"error": {"code": "failed_precondition", "message": "m", "reason": 7}}')
        self.assertEqual((type(e), e.reason), (airlock.FailedPreconditionError, None))

    def test_times(self):
        utc = timezone.utc
        self.assertEqual(parse_time("2024-05-06T07:08:09.123456789Z"), datetime(2024, 5, 6, 7, 8, 9, 123456, utc))
        self.assertEqual(parse_time("2024-05-06T07:08:09Z"), datetime(2024, 5, 6, 7, 8, 9, tzinfo=utc))
        self.assertEqual(parse_time("2024-05-06T09:08:09.5+02:00"), datetime(2024, 5, 6, 7, 8, 9, 500000, utc))
        self.assertIsNone(parse_time(""))
        with self.assertRaises(ValueError):
            parse_time("yesterday")

    def test_exec_timeout(self):
        self.assertIsNone(exec_timeout(None))
        self.assertEqual(exec_timeout(5), 35.0)

    def test_wait_clock(self):
        forever = WaitClock(None)
        self.assertEqual(forever.step(), MAX_WAIT_STEP)
        still = airlock.DeadlineExceededError("still running", status=504)
        self.assertTrue(forever.again(still))
        # Only the server's "still running" means wait on: a client-side
        # timeout (status 0) or another error is raised.
        self.assertFalse(forever.again(airlock.DeadlineExceededError("socket timed out", status=0)))
        self.assertFalse(forever.again(airlock.NotFoundError("gone", status=404)))
        self.assertLessEqual(WaitClock(1000).step(), MAX_WAIT_STEP)
        self.assertLessEqual(WaitClock(0.5).step(), 0.5)
        done = WaitClock(0)
        self.assertEqual(done.step(), 0)
        self.assertFalse(done.again(still))
        with self.assertRaises(airlock.InvalidArgumentError):
            WaitClock(-1)

    def test_process_json(self):
        d = {"id": "p-1", "sandbox_id": "sbx-1", "argv": ["sleep", "1"], "cwd": "/", "state": "exited",
             "exit_code": 0, "timed_out": False, "stdout_bytes": 0, "stderr_bytes": 0,
             "stdout_truncated": False, "stderr_truncated": False,
             "started_at": "2024-05-06T07:08:09.123456789Z", "ended_at": "2024-05-06T07:08:10Z",
             "some_future_field": 1}
        p = ProcessInfo.from_json(d)
        self.assertEqual((p.exit_code, p.argv, p.cmd), (0, ["sleep", "1"], ""))
        self.assertEqual(ProcessInfo.from_json(p.to_json()), p)
        self.assertIn("exit_code", p.to_json())  # 0 is an exit code, not an absent one
        self.assertIsNone(ProcessInfo.from_json({"id": "p-2", "state": "running"}).exit_code)
        o = ProcessOutput.from_json({"stream": "stderr", "data": "/wBoaQ==", "offset": 5, "next_offset": 9,
                                     "dropped": 5, "eof": True})
        self.assertEqual((o.data, o.text, o.offset, o.next_offset, o.dropped, o.eof),
                         (b"\xff\x00hi", "\ufffd\x00hi", 5, 9, 5, True))
        self.assertEqual(ProcessOutput.from_json(o.to_json()), o)


class SandboxTest(Base):
    def test_create_is_typed(self):
        md = {"matter": tag("m"), "class": "privileged"}
        sbx = self.sandbox(ttl_seconds=120, metadata=md)
        info = sbx.info
        self.assertIsInstance(info, SandboxInfo)
        self.assertEqual((info.template, info.state, info.tenant, info.metadata), ("base", "running", "acme", md))
        self.assertEqual(sbx.metadata, md)
        self.assertIsInstance(info.created_at, datetime)
        self.assertEqual(info.deadline - info.created_at, timedelta(seconds=120))
        self.assertIsNone(info.ended_at)
        self.assertEqual(info.egress, EgressPolicy(default="deny"))
        self.assertFalse(sbx.jailed)
        self.assertEqual(SandboxInfo.from_json(json.loads(json.dumps(info.to_json()))), info)
        # 0.1 code read info as a dict.
        self.assertEqual((info["id"], info.get("ended_at", "none"), "state" in info), (sbx.id, "none", True))
        # get also reads the sandbox's usage, which create does not.
        self.assertEqual(dataclasses.replace(Sandbox.get(sbx.id, client=self.c).info, usage=None), info)

    def test_default_client_from_environment(self):
        sbx = Sandbox.create(template="base")  # AIRLOCK_URL: the unix socket
        self.addCleanup(sbx.kill)
        self.assertEqual(Sandbox.get(sbx.id, client=self.c).id, sbx.id)

    def test_create_with_probe(self):
        plain = self.sandbox()
        probed = self.sandbox(probe=True)
        details = {}
        for s in (plain, probed):
            recs = airlock.audit(sandbox=s.id, event=["create"], client=self.c)
            self.assertEqual(len(recs), 1)
            details[s.id] = recs[0].detail
        self.assertNotIn("probe", details[plain.id])
        self.assertEqual(details[probed.id]["probe"], "ok")

    def test_probe_is_typed(self):
        probes = self.sandbox().network.probe()
        self.assertTrue(probes)
        for p in probes:
            self.assertIsInstance(p, ProbeResult)
            self.assertFalse(p.reachable)
        self.assertIn("tcp-metadata", [p.name for p in probes])

    def test_errors_from_server(self):
        with self.assertRaises(airlock.NotFoundError) as cm:
            Sandbox.get("sbx-doesnotexist0000", client=self.c)
        self.assertEqual(cm.exception.status, 404)
        self.assertIn("sbx-doesnotexist0000", cm.exception.message)
        with self.assertRaises(airlock.InvalidArgumentError):
            self.sandbox(ttl_seconds=-1)
        with self.assertRaises(airlock.NotFoundError):
            self.sandbox(template=tag("no-such-template"))
        with self.assertRaises(airlock.InvalidArgumentError):
            self.sandbox(metadata={"bad key!": "v"})
        with self.assertRaises(airlock.PermissionDeniedError) as cm:
            Sandbox.list(client=Client(url=SRV.url, api_key="alk_wrong"))
        self.assertEqual(cm.exception.status, 401)
        sbx = self.sandbox()
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.filesystem.read("/job/../etc/passwd")
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.filesystem.write("job/relative.txt", b"x")
        with self.assertRaises(airlock.UnavailableError) as cm:
            Sandbox.list(client=Client(url=SRV.socket + ".missing"))
        self.assertEqual(cm.exception.status, 0)

    def test_other_tenant_sees_nothing(self):
        sbx = self.sandbox(metadata={"case": tag("iso")})
        with self.assertRaises(airlock.NotFoundError):
            Sandbox.get(sbx.id, client=self.other)
        theirs = Sandbox(sbx.info, client=self.other)
        with self.assertRaises(airlock.NotFoundError):
            theirs.exec("true")
        theirs.kill()  # not an error, and not a kill either
        self.assertEqual(Sandbox.list(metadata=sbx.metadata, client=self.other), [])
        self.assertEqual(airlock.audit(sandbox=sbx.id, client=self.other), [])
        self.assertEqual(sbx.refresh().state, "running")

    def test_lifecycle(self):
        case = tag("case")
        with Sandbox.create(template="base", ttl_seconds=60, metadata={"case": case}, client=self.c) as sbx:
            before = sbx.info.deadline
            self.assertIs(sbx.set_ttl(600), sbx)
            self.assertGreater(sbx.info.deadline, before)
            self.assertEqual(Sandbox.get(sbx.id, client=self.c).info.deadline, sbx.info.deadline)
            with self.assertRaises(airlock.InvalidArgumentError):
                sbx.set_ttl(10 ** 7)  # past the server's maximum lifetime
            self.assertEqual([s.id for s in Sandbox.list(metadata={"case": case}, client=self.c)], [sbx.id])
        self.assertEqual(sbx.refresh().state, "killed")
        self.assertIsInstance(sbx.info.ended_at, datetime)
        self.assertEqual(Sandbox.list(metadata={"case": case}, client=self.c), [])
        self.assertEqual([s.state for s in Sandbox.list(metadata={"case": case}, all=True, client=self.c)],
                         ["killed"])
        sbx.kill()  # killing an ended sandbox is not an error
        with self.assertRaises(airlock.FailedPreconditionError) as cm:
            sbx.exec("true")
        self.assertEqual(cm.exception.status, 409)
        with self.assertRaises(airlock.FailedPreconditionError):
            sbx.set_ttl(60)
        # The block's own exception comes out, and the sandbox is killed.
        with self.assertRaises(ZeroDivisionError):
            with Sandbox.create(template="base", client=self.c) as sbx:
                1 / 0
        self.assertEqual(sbx.refresh().state, "killed")

    def test_fork(self):
        sbx = self.sandbox(metadata={"case": tag("fork")})
        sbx.filesystem.write("/job/state.txt", "parent-v1")
        kids = sbx.fork(count=3)
        for k in kids:
            self.addCleanup(k.kill)
        self.assertEqual(len(kids), 3)
        self.assertTrue(all(isinstance(k, Sandbox) and k.parent_id == sbx.id for k in kids))
        self.assertEqual(len({k.id for k in kids} | {sbx.id}), 4)
        self.assertEqual(kids[0].filesystem.read("/job/state.txt"), b"parent-v1")
        kids[0].filesystem.write("/job/state.txt", "child")
        self.assertEqual(sbx.filesystem.read("/job/state.txt"), b"parent-v1")
        child, = sbx.fork()
        self.addCleanup(child.kill)
        self.assertEqual(len(Sandbox.list(metadata=sbx.metadata, client=self.c)), 5)
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.fork(count=0)

    def test_templates(self):
        ts = airlock.templates(client=self.c)
        self.assertEqual([t.name for t in ts], SRV.templates)
        t = ts[0]
        self.assertIsInstance(t, Template)
        self.assertEqual((t.memory_mib, t.vcpus, t.default_ttl_seconds), (64, 1, 300))
        self.assertEqual(airlock.template("base", client=self.c), t)
        with self.assertRaises(airlock.NotFoundError):
            airlock.template(tag("none"), client=self.c)


class ExecTest(Base):
    def test_exec(self):
        sbx = self.sandbox()
        r = sbx.exec("echo partial; echo 'it broke' >&2; exit 7", timeout_seconds=60)
        self.assertIsInstance(r, ExecResult)
        self.assertEqual((r.exit_code, r.stdout, r.stderr, r.ok), (7, "partial\n", "it broke\n", False))
        self.assertEqual((r.stdout_bytes, r.stderr_bytes), (8, 9))
        self.assertEqual(sbx.exec(["printf", "%s|", "a b", "c"]).stdout, "a b|c|")
        self.assertEqual(sbx.exec("cat", stdin="text in").stdout, "text in")
        r = sbx.exec("cat", stdin=b"\xff\x00bin")
        self.assertEqual(r.stdout_raw, b"\xff\x00bin")
        self.assertEqual(r.stdout, b"\xff\x00bin".decode("utf-8", errors="replace"))
        self.assertEqual(sbx.exec("echo $GREETING", env={"GREETING": "hi"}).stdout, "hi\n")
        self.assertEqual(sbx.exec("cat etc/motd").stdout, "hello\n")  # the template's root
        r = sbx.exec("head -c 5000 /dev/zero", max_output_bytes=100)
        self.assertEqual((r.stdout_truncated, len(r.stdout_raw), r.stdout_bytes), (True, 100, 5000))
        r = sbx.exec("sleep 30", timeout_seconds=1)
        self.assertTrue(r.timed_out)
        self.assertFalse(r.ok)
        r = sbx.exec("kill -TERM $$")
        self.assertEqual((r.exit_code, r.signal), (128 + 15, "SIGTERM"))
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.exec("true", cwd="/job/../..")

    def test_exec_sees_files(self):
        sbx = self.sandbox()
        sbx.filesystem.write("/job/in.txt", "one\ntwo\n")
        r = sbx.exec("wc -l < in.txt > out.txt", cwd="/job")
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertEqual(sbx.filesystem.read("/job/out.txt").strip(), b"2")

    def test_exec_stream(self):
        sbx = self.sandbox()
        out, err = [], []
        r = sbx.exec_stream("for i in 1 2 3; do echo $i; done; echo e >&2; exit 2",
                            on_stdout=out.append, on_stderr=err.append, timeout_seconds=60)
        self.assertEqual((r.exit_code, b"".join(out), b"".join(err)), (2, b"1\n2\n3\n", b"e\n"))
        self.assertEqual((r.stdout, r.stdout_bytes), ("", 6))
        self.assertEqual(sbx.exec_stream("exit 0").exit_code, 0)  # no callbacks


def read_until(p, want: bytes, stream: str = "stdout") -> bytes:
    """What p wrote to stream, read with long polls until it holds want
    (or the process ended)."""
    got, offset = b"", 0
    while want not in got:
        out = p.output(stream, offset, wait_seconds=30)
        got, offset = got + out.data, out.next_offset
        if out.eof:
            break
    return got


class ProcessTest(Base):
    def test_start_read_list_kill_wait(self):
        sbx = self.sandbox()
        p = sbx.processes.start("echo hi; sleep 30")
        self.assertIsInstance(p, Process)
        self.assertIsInstance(p.info, ProcessInfo)
        self.assertEqual((p.state, p.running, p.cmd, p.sandbox_id, p.exit_code), ("running", True,
                                                                                 "echo hi; sleep 30", sbx.id, None))
        self.assertRegex(p.id, r"^p-[1-9][0-9]*$")
        self.assertIsInstance(p.started_at, datetime)
        self.assertEqual(read_until(p, b"hi\n"), b"hi\n")
        listed = sbx.processes.list()
        self.assertEqual([(q.id, q.state) for q in listed], [(p.id, "running")])
        self.assertIsInstance(listed[0], Process)
        got = sbx.processes.get(p.id)
        self.assertEqual((got.id, got.cmd, got.stdout_bytes), (p.id, p.cmd, 3))
        self.assertIs(p.kill("TERM"), p)
        self.assertIs(p.wait(), p)
        self.assertEqual((p.state, p.signal, p.exit_code, p.running), ("killed", "SIGTERM", 128 + 15, False))
        self.assertIsInstance(p.ended_at, datetime)
        self.assertEqual(got.refresh().state, "killed")
        with self.assertRaises(airlock.FailedPreconditionError):
            p.kill()  # it has ended
        out = p.output()
        self.assertEqual((out.data, out.offset, out.next_offset, out.eof, out.dropped), (b"hi\n", 0, 3, True, 0))
        self.assertEqual(p.wait(timeout_seconds=0).state, "killed")  # ended: no waiting

    def test_output_after_exit(self):
        sbx = self.sandbox()
        p = sbx.processes.start("echo out; echo err >&2; exit 3")
        p.wait()
        self.assertEqual((p.state, p.exit_code, p.signal, p.timed_out), ("exited", 3, "", False))
        self.assertEqual((p.stdout_bytes, p.stderr_bytes), (4, 4))
        out = p.output()
        self.assertIsInstance(out, ProcessOutput)
        self.assertEqual((out.stream, out.data, out.next_offset, out.eof), ("stdout", b"out\n", 4, True))
        self.assertEqual(p.output("stderr").data, b"err\n")
        self.assertEqual(p.output(offset=2).data, b"t\n")
        self.assertEqual((p.output(max_bytes=2).data, p.output(max_bytes=2).eof), (b"ou", False))
        chunks = []
        self.assertEqual(p.follow(on_data=chunks.append), 4)
        self.assertEqual(b"".join(chunks), b"out\n")
        self.assertEqual([piece.data for piece in p.iter_output("stderr")], [b"err\n"])
        self.assertEqual(list(p.iter_output(offset=4)), [])  # all read already
        with self.assertRaises(airlock.InvalidArgumentError):
            p.output("stdin")
        with self.assertRaises(airlock.InvalidArgumentError):
            p.output(offset=5)  # past what arrived
        with self.assertRaises(airlock.InvalidArgumentError):
            p.output(wait_seconds=61)
        with self.assertRaises(airlock.InvalidArgumentError):
            p.output(max_bytes=(1 << 20) + 1)

    def test_follow_while_running(self):
        sbx = self.sandbox()
        sbx.filesystem.write("/job/in.txt", "from a file\n")
        p = sbx.processes.start("for i in 1 2 3; do echo $i; sleep 0.2; done; cat in.txt; echo $X >&2",
                                env={"X": "from env"}, cwd="/job")
        chunks = []
        self.assertEqual(p.follow("stdout", chunks.append), 18)
        self.assertEqual(b"".join(chunks), b"1\n2\n3\nfrom a file\n")
        self.assertEqual(b"".join(c.data for c in p.iter_output("stderr")), b"from env\n")
        self.assertEqual(p.wait().exit_code, 0)
        q = sbx.processes.start(["cat"], stdin=b"\xff\x00bin")
        self.assertEqual(q.argv, ["cat"])
        self.assertEqual(b"".join(c.data for c in q.iter_output()), b"\xff\x00bin")
        self.assertEqual([x.id for x in sbx.processes.list()], [p.id, q.id])

    def test_wait_timeout_and_kill(self):
        sbx = self.sandbox()
        p = sbx.processes.start("sleep 30")
        with self.assertRaises(airlock.DeadlineExceededError) as cm:
            p.wait(timeout_seconds=0.2)
        self.assertEqual(cm.exception.status, 504)
        with self.assertRaises(airlock.DeadlineExceededError):
            p.wait(timeout_seconds=0)
        self.assertEqual(p.refresh().state, "running")
        p.kill()  # KILL by default
        p.wait()
        self.assertEqual((p.state, p.signal, p.exit_code), ("killed", "SIGKILL", 128 + 9))
        t = sbx.processes.start("sleep 30", timeout_seconds=0.5)
        self.assertEqual(t.timeout_seconds, 0.5)
        t.wait()
        self.assertEqual((t.state, t.timed_out), ("killed", True))
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.processes.start("sleep 30").kill("NOSUCHSIGNAL")
        with self.assertRaises(airlock.InvalidArgumentError):
            p.wait(timeout_seconds=-1)

    def test_errors(self):
        sbx = self.sandbox()
        with self.assertRaises(airlock.NotFoundError):
            sbx.processes.get("p-999")
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.processes.get("not a pid")
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.processes.start("true", cwd="/job/../..")
        p = sbx.processes.start("sleep 30")
        theirs = Sandbox(sbx.info, client=self.other)
        with self.assertRaises(airlock.NotFoundError):
            theirs.processes.list()
        with self.assertRaises(airlock.NotFoundError):
            theirs.processes.start("true")
        self.assertEqual(sbx.processes.get(p.id).state, "running")
        sbx.kill()
        with self.assertRaises(airlock.AirlockError):
            sbx.processes.list()  # the records went with the sandbox


class UsageAndKeysTest(Base):
    def test_usage(self):
        sbx = self.sandbox(metadata={"case": tag("usage")})
        self.assertIsNone(sbx.usage)  # create does not read it
        got = Sandbox.get(sbx.id, client=self.c)
        u = got.info.usage
        self.assertIsInstance(u, Usage)
        self.assertIs(got.usage, u)
        self.assertGreaterEqual(u.cpu_seconds, 0)
        self.assertGreater(u.memory_rss_bytes, 0)
        self.assertGreater(u.memory_pss_bytes, 0)
        self.assertIsInstance(u.measured_at, datetime)
        self.assertEqual(SandboxInfo.from_json(json.loads(json.dumps(got.info.to_json()))), got.info)
        self.assertIsInstance(sbx.refresh().usage, Usage)
        listed, = Sandbox.list(metadata=sbx.metadata, client=self.c)
        self.assertIsNone(listed.usage)
        sbx.kill()
        self.assertIsNone(sbx.refresh().usage)

    def test_keys(self):
        mine = airlock.keys(client=self.c)
        self.assertTrue(mine)
        self.assertTrue(all(isinstance(k, Key) and k.tenant == "acme" for k in mine))
        current = [k for k in mine if k.current]
        self.assertEqual(len(current), 1)
        self.assertTrue(SRV.keys["acme"].startswith(current[0].prefix))
        self.assertNotIn(SRV.keys["acme"], json.dumps([k.to_json() for k in mine]))
        self.assertIsInstance(current[0].created_at, datetime)
        self.assertIsNone(current[0].revoked_at)
        self.assertEqual(Key.from_json(current[0].to_json()), current[0])
        theirs = airlock.keys(client=self.other)
        self.assertTrue(all(k.tenant == "globex" for k in theirs))
        self.assertFalse({k.id for k in mine} & {k.id for k in theirs})
        self.assertEqual([k.id for k in airlock.keys()], [k.id for k in mine])  # the environment's client
        with self.assertRaises(airlock.PermissionDeniedError):
            airlock.keys(client=Client(url=SRV.url, api_key="alk_wrong"))


class FilesTest(Base):
    def test_files(self):
        sbx = self.sandbox()
        fs = sbx.filesystem
        self.assertEqual(fs.write("/job/a.txt", "héllo"), 6)
        self.assertEqual(fs.read("/job/a.txt"), "héllo".encode())
        # A file-like object of unknown size is sent chunked.
        self.assertEqual(fs.write("/job/b.bin", io.BytesIO(b"x" * 300000)), 300000)
        # A real file is sent with its length.
        with tempfile.NamedTemporaryFile() as f:
            f.write(b"y" * 1000)
            f.flush()
            f.seek(0)
            self.assertEqual(fs.write("/job/c.bin", f, mode=0o600), 1000)
        st = fs.stat("/job/c.bin")
        self.assertIsInstance(st, FileInfo)
        self.assertEqual((st.path, st.name, st.size, st.is_dir, st.mode_string), ("/job/c.bin", "c.bin", 1000,
                                                                                  False, "-rw-------"))
        self.assertIsInstance(st.mod_time, datetime)
        self.assertEqual([e.name for e in fs.list("/job")], ["a.txt", "b.bin", "c.bin"])
        out = io.BytesIO()
        self.assertEqual(fs.read_to("/job/b.bin", out), 300000)
        self.assertEqual(out.getvalue(), b"x" * 300000)
        fs.remove("/job/a.txt")
        with self.assertRaises(airlock.NotFoundError):
            fs.read("/job/a.txt")
        with self.assertRaises(airlock.NotFoundError):
            fs.remove("/job/a.txt")
        fs.make_dir("/job/d/e")
        self.assertTrue(fs.stat("/job/d").is_dir)
        with self.assertRaises(airlock.AirlockError) as cm:
            fs.remove("/job/d")  # not empty
        # localmachines classes ENOTEMPTY as already_exists (errors.Is
        # matches fs.ErrExist before its failed_precondition case).
        self.assertIn(cm.exception.code, ("already_exists", "failed_precondition"))
        fs.remove("/job/d", recursive=True)
        self.assertNotIn("d", [e.name for e in fs.list("/job")])
        with self.assertRaises(TypeError):
            fs.write("/job/x", 42)

    def test_upload_refused_early(self):
        sbx = self.sandbox()
        with self.assertRaises(airlock.ResourceExhaustedError) as cm:
            sbx.filesystem.write("/job/big", b"z" * (8 * MAX_UPLOAD))
        self.assertEqual(cm.exception.status, 413)
        with self.assertRaises(airlock.ResourceExhaustedError):
            sbx.filesystem.write("/job/big", io.BytesIO(b"z" * (2 * MAX_UPLOAD)))  # chunked
        self.assertEqual(sbx.filesystem.write("/job/fits", b"z" * MAX_UPLOAD), MAX_UPLOAD)


class ArchiveTest(Base):
    def _tree(self, root: str) -> None:
        os.makedirs(os.path.join(root, "sub", "deep"))
        with open(os.path.join(root, "top.txt"), "wb") as f:
            f.write(b"top\n")
        with open(os.path.join(root, "sub", "deep", "run.sh"), "wb") as f:
            f.write(b"#!/bin/sh\necho ok\n")
        os.chmod(os.path.join(root, "sub", "deep", "run.sh"), 0o755)
        os.symlink("deep/run.sh", os.path.join(root, "sub", "link"))

    def test_upload_and_download_dir(self):
        sbx = self.sandbox()
        fs = sbx.filesystem
        with tempfile.TemporaryDirectory() as d:
            src, back = os.path.join(d, "src"), os.path.join(d, "back")
            self._tree(src)
            r = fs.upload_dir(src, "/job/tree")
            self.assertIsInstance(r, airlock.ArchiveResult)
            self.assertEqual((r.entries, r.bytes), (5, 22))  # top.txt, sub, sub/deep, sub/deep/run.sh, sub/link
            self.assertEqual(fs.read("/job/tree/sub/deep/run.sh"), b"#!/bin/sh\necho ok\n")
            self.assertEqual(fs.stat("/job/tree/sub/deep/run.sh").mode_string, "-rwxr-xr-x")
            got = fs.download_dir("/job/tree", back)
            self.assertIsInstance(got, airlock.ArchiveResult)
            self.assertEqual((got.entries, got.bytes), (5, 22))
            for rel in ("top.txt", "sub/deep/run.sh"):
                with open(os.path.join(src, rel), "rb") as a, open(os.path.join(back, rel), "rb") as b:
                    self.assertEqual(a.read(), b.read(), rel)
            self.assertEqual(os.readlink(os.path.join(back, "sub", "link")), "deep/run.sh")
            self.assertTrue(os.stat(os.path.join(back, "sub", "deep", "run.sh")).st_mode & 0o100)
            out = io.BytesIO()
            self.assertGreater(fs.read_archive("/job/tree/top.txt", out), 512)
            with tarfile.open(fileobj=io.BytesIO(out.getvalue())) as t:
                self.assertEqual(t.getnames(), ["top.txt"])

    def test_hostile_archives(self):
        sbx = self.sandbox()

        def tar_of(name: str, data: bytes = b"x", kind: bytes = tarfile.REGTYPE, link: str = "") -> bytes:
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w") as t:
                ti = tarfile.TarInfo(name)
                ti.type, ti.linkname, ti.size = kind, link, len(data) if kind == tarfile.REGTYPE else 0
                t.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
            return buf.getvalue()

        for bad in (tar_of("../escape.txt"), tar_of("/abs.txt"), tar_of("l", kind=tarfile.SYMTYPE, link="/etc"),
                    tar_of("fifo", kind=tarfile.FIFOTYPE)):
            with self.assertRaises(airlock.InvalidArgumentError):
                sbx.filesystem.write_archive("/job/x", bad)
        # What a hostile sandbox could send is refused here the same way,
        # before anything is written.
        with tempfile.TemporaryDirectory() as d:
            for bad in (tar_of("../escape.txt"), tar_of("a/../../b"), tar_of("l", kind=tarfile.SYMTYPE, link="../../x")):
                with self.assertRaises(airlock.InvalidArgumentError):
                    airlock._tar.extract_dir(io.BytesIO(bad), os.path.join(d, "out"))
            self.assertEqual(os.listdir(d), ["out"] if os.path.exists(os.path.join(d, "out")) else [])
            with self.assertRaises(airlock.ResourceExhaustedError):
                airlock._tar.extract_dir(io.BytesIO(tar_of("big", b"y" * 2000)), os.path.join(d, "o2"), max_bytes=1000)
            self.assertFalse(os.path.exists(os.path.join(d, "o2")))


class EgressTest(Base):
    def test_egress(self):
        sbx = self.sandbox(egress={"default": "deny"})
        self.assertIsInstance(sbx.network.egress, EgressPolicy)
        sbx.network.set_egress(default="deny", allow=[])
        self.assertEqual(sbx.network.egress, EgressPolicy(default="deny", allow=[]))
        self.assertEqual(sbx.network.egress.get("default"), "deny")  # 0.1 read it as a dict
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.network.set_egress(default="sometimes")
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.network.set_egress(allow=[EgressRule(name="bad", cidr="not-a-cidr")])
        # This server has no sandbox network: a policy that allows anything
        # is refused, whether given as a rule or as its dict.
        for rule in (EgressRule(name="dms", cidr="10.250.0.2/32", ports=[8080], protocol="tcp"),
                     {"name": "llm", "domain": "api.example.com"}):
            with self.assertRaises(airlock.AirlockError) as cm:
                sbx.network.set_egress(allow=[rule])
            self.assertIn(cm.exception.code, ("invalid_argument", "failed_precondition"))
        self.assertEqual(sbx.refresh().network.egress.allow, [])

    def test_policy_json(self):
        p = EgressPolicy.of({"default": "deny", "tls": "inspect", "allow": [
            {"name": "dms", "cidr": "10.250.0.2/32", "ports": [8080], "protocol": "tcp"},
            {"name": "llm", "domain": "api.example.com"}]})
        self.assertEqual(p.allow[0], EgressRule(name="dms", cidr="10.250.0.2/32", ports=[8080], protocol="tcp"))
        self.assertEqual(p.to_json()["allow"][1], {"name": "llm", "domain": "api.example.com"})
        self.assertEqual(EgressPolicy.of(p.to_json()), p)


class AuditTest(Base):
    def test_audit_records_are_typed(self):
        md = {"case": tag("audit")}
        sbx = self.sandbox(metadata=md)
        sbx.exec("true")
        sbx.kill()
        recs = airlock.audit(sandbox=sbx.id, client=self.c)
        self.assertEqual([r.event for r in recs], ["create", "exec", "kill"])
        for r in recs:
            self.assertIsInstance(r, AuditRecord)
            self.assertEqual((r.tenant, r.sandbox_id, r.template, r.metadata), ("acme", sbx.id, "base", md))
            self.assertIsInstance(r.time, datetime)
            self.assertTrue(r.hash)
        self.assertEqual(recs[1].exit_code, 0)
        self.assertEqual([r.seq for r in airlock.audit(metadata=md, event=["exec", "kill"], client=self.c)],
                         [recs[1].seq, recs[2].seq])
        self.assertEqual(airlock.audit(metadata=md, since=recs[-1].time + timedelta(seconds=1), client=self.c), [])
        # until is exclusive, at the store's millisecond resolution.
        until = recs[0].time + timedelta(milliseconds=1)
        self.assertEqual([r.seq for r in airlock.audit(metadata=md, until=until, client=self.c)][:1], [recs[0].seq])
        self.assertEqual(AuditRecord.from_json(json.loads(json.dumps(recs[1].to_json()))), recs[1])
        with self.assertRaises(airlock.InvalidArgumentError):
            airlock.audit(limit=0, client=self.c)

    def test_audit_paging(self):
        sbx = self.sandbox(metadata={"case": tag("paging")})
        for i in range(6):
            sbx.exec("exit %d" % i)
        everything = airlock.audit(sandbox=sbx.id, client=self.c)
        self.assertEqual(len(everything), 7)  # create and six execs
        page = airlock.audit_page(sandbox=sbx.id, limit=3, client=self.c)
        self.assertEqual(page.records, everything[:3])
        self.assertEqual(page.next_after_seq, everything[2].seq)
        page = airlock.audit_page(sandbox=sbx.id, limit=3, after_seq=page.next_after_seq, client=self.c)
        self.assertEqual(page.records, everything[3:6])
        for size in (1, 2, 3, 7, 1000):
            walked = list(airlock.audit_iter(sandbox=sbx.id, page_size=size, client=self.c))
            self.assertEqual(walked, everything, "page_size %d" % size)
        self.assertEqual([r.exit_code for r in airlock.audit_iter(sandbox=sbx.id, event=["exec"], page_size=4,
                                                                   after_seq=everything[3].seq, client=self.c)],
                         [3, 4, 5])
        self.assertEqual(list(airlock.audit_iter(sandbox=sbx.id, client=self.other)), [])


if __name__ == "__main__":
    unittest.main()
