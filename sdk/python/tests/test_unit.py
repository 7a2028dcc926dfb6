"""Unit tests of the SDK against a small in-process server speaking the
airlock HTTP protocol on a unix socket. Standard library only."""

import base64
import io
import json
import os
import socketserver
import sys
import tempfile
import threading
import unittest
import urllib.parse
from http.server import BaseHTTPRequestHandler

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import airlock  # noqa: E402
from airlock import Client, Sandbox  # noqa: E402
from airlock._http import parse_url  # noqa: E402

KEY = "alk_test"
MAX_UPLOAD = 1 << 20


class FakeState:
    def __init__(self):
        self.lock = threading.Lock()
        self.sandboxes = {}
        self.files = {}
        self.next = 0
        self.requests = []
        self.create_bodies = []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: FakeState = None  # set per server

    def log_message(self, *args):  # quiet, and unix sockets have no address
        pass

    # -- plumbing --------------------------------------------------------

    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_error_json(self, status, code, message):
        self.send_json(status, {"error": {"code": code, "message": message}})

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def handle_any(self, method):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        parts = [p for p in u.path.split("/") if p]
        st = self.state
        st.requests.append((method, u.path, q))
        if u.path == "/healthz":
            return self.send_json(200, {"status": "ok"})
        if self.headers.get("Authorization") != "Bearer " + KEY:
            self.read_body()
            return self.send_error_json(401, "permission_denied", "invalid API key")
        if method == "PUT" and u.path.endswith("/files") and int(self.headers.get("Content-Length") or 0) > MAX_UPLOAD:
            # Refuse from the headers, unread body and all, then hang up.
            self.send_error_json(413, "resource_exhausted", "upload too large")
            self.close_connection = True
            return
        raw = self.read_body()
        body = json.loads(raw) if raw and self.headers.get("Content-Type") == "application/json" else None
        if parts[:2] != ["v1", "sandboxes"]:
            return self.send_error_json(404, "not_found", "no route")
        with st.lock:
            if len(parts) == 2 and method == "POST":
                if body.get("ttl_seconds", 0) < 0:
                    return self.send_error_json(400, "invalid_argument", "ttl must not be negative")
                st.create_bodies.append(body)
                st.next += 1
                info = {"id": "sbx-%d" % st.next, "tenant": "t", "template": body["template"],
                        "metadata": body.get("metadata", {}), "state": "running",
                        "egress": body.get("egress") or {"default": "deny"}}
                st.sandboxes[info["id"]] = info
                return self.send_json(201, info)
            if len(parts) == 2 and method == "GET":
                md = {k[len("metadata."):]: v for k, v in q.items() if k.startswith("metadata.")}
                out = [s for s in st.sandboxes.values()
                       if (q.get("state") == "all" or s["state"] == "running")
                       and all(s["metadata"].get(k) == v for k, v in md.items())]
                return self.send_json(200, {"sandboxes": out})
            sid = parts[2]
            sbx = st.sandboxes.get(sid)
            if sbx is None:
                return self.send_error_json(404, "not_found", "sandbox %s not found" % sid)
            rest = "/".join(parts[3:])
            if rest == "" and method == "GET":
                return self.send_json(200, sbx)
            if sbx["state"] != "running":
                return self.send_error_json(409, "failed_precondition", "sandbox is " + sbx["state"])
            if rest == "" and method == "DELETE":
                sbx["state"] = "killed"
                self.send_response(204)
                self.send_header("Content-Length", "0")
                return self.end_headers()
            if rest == "fork":
                kids = []
                for _ in range(body.get("count", 1)):
                    st.next += 1
                    kid = dict(sbx, id="sbx-%d" % st.next, parent_id=sid)
                    st.sandboxes[kid["id"]] = kid
                    kids.append(kid)
                return self.send_json(201, {"sandboxes": kids})
            if rest == "egress":
                sbx["egress"] = body
                return self.send_json(200, sbx)
            if rest == "probe":
                if sbx["egress"].get("allow"):
                    return self.send_error_json(409, "failed_precondition", "egress self-check failed: tcp-host")
                return self.send_json(200, {"probes": [{"name": "tcp-host", "target": "10.200.0.1:22", "reachable": False}]})
            if rest == "exec":
                return self.send_json(200, self.run(sid, body))
            if rest == "exec/stream":
                res = self.run(sid, body)
                lines = []
                for name in ("stdout", "stderr"):
                    data = res.pop(name)
                    if data:
                        lines.append({"type": name, "data": base64.b64encode(data.encode()).decode()})
                lines.append(dict(res, type="exit"))
                payload = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                return self.wfile.write(payload)
            path = q.get("path", "")
            if not path.startswith("/") or "/../" in path + "/":
                return self.send_error_json(400, "invalid_argument", "path must be absolute and clean")
            key = (sid, path)
            if rest == "files" and method == "PUT":
                st.files[key] = raw
                return self.send_json(200, {"bytes": len(raw)})
            if rest == "files" and method == "GET":
                if key not in st.files:
                    return self.send_error_json(404, "not_found", "%s: no such file" % path)
                data = st.files[key]
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                return self.wfile.write(data)
            if rest == "files/stat":
                if key not in st.files:
                    return self.send_error_json(404, "not_found", "no such file")
                return self.send_json(200, {"path": path, "name": path.rsplit("/", 1)[1],
                                            "size": len(st.files[key]), "is_dir": False})
            if rest == "files/list":
                entries = [{"path": p, "name": p.rsplit("/", 1)[1], "size": len(d)}
                           for (s, p), d in sorted(st.files.items()) if s == sid and p.startswith(path + "/")]
                return self.send_json(200, {"entries": entries})
            if rest == "files" and method == "DELETE":
                if st.files.pop(key, None) is None:
                    return self.send_error_json(404, "not_found", "no such file")
                self.send_response(204)
                self.send_header("Content-Length", "0")
                return self.end_headers()
        return self.send_error_json(404, "not_found", "no route")

    def run(self, sid, body):
        cmd = body.get("cmd") or " ".join(body.get("argv", []))
        res = {"exit_code": 0, "stdout": "", "stderr": "", "timed_out": False,
               "stdout_truncated": False, "stderr_truncated": False, "duration_ms": 1}
        if cmd.startswith("curl"):
            res.update(exit_code=7, stdout="000")
        elif "review_contract.py" in cmd:
            self.state.files[(sid, "/job/out/findings.json")] = b'{"findings": [{"clause": "indemnity"}]}'
        elif cmd == "binary":
            res.update(stdout="\ufffd", stdout_base64=base64.b64encode(b"\xff").decode())
        elif cmd == "cat":
            res["stdout"] = body.get("stdin") or base64.b64decode(body.get("stdin_base64", "")).decode("latin-1")
        elif cmd == "fail":
            res.update(exit_code=2, stderr="x" * 3000)
        else:
            res["stdout"] = cmd + "\n"
        return res

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_DELETE(self):
        self.handle_any("DELETE")


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class SDKTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.sock = os.path.join(self.tmp.name, "airlock.sock")
        state = FakeState()
        handler = type("H", (Handler,), {"state": state})
        self.server = Server(self.sock, handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.state = state
        self.env = {k: os.environ.get(k) for k in ("AIRLOCK_URL", "AIRLOCK_API_KEY")}
        os.environ["AIRLOCK_URL"] = "unix://" + self.sock
        os.environ["AIRLOCK_API_KEY"] = KEY
        airlock.sandbox._default_client = None

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self.tmp.cleanup()
        for k, v in self.env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        airlock.sandbox._default_client = None

    def test_create_with_probe(self):
        Sandbox.create(template="legal-doc-review").kill()
        Sandbox.create(template="legal-doc-review", probe=True).kill()
        self.assertNotIn("probe", self.state.create_bodies[0])
        self.assertIs(self.state.create_bodies[1]["probe"], True)

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
        c = Client()
        self.assertEqual(c.url, "unix://" + self.sock)
        self.assertEqual(c.api_key, KEY)
        self.assertNotIn(KEY, repr(c))
        del os.environ["AIRLOCK_URL"]
        self.assertEqual(Client().url, "unix:///run/airlock/airlock.sock")
        self.assertEqual(Client(url="http://x:1", api_key="k").api_key, "k")

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

    def test_errors_from_server(self):
        with self.assertRaises(airlock.NotFoundError) as cm:
            Sandbox.get("sbx-404")
        self.assertEqual(cm.exception.status, 404)
        self.assertIn("sbx-404", cm.exception.message)
        with self.assertRaises(airlock.InvalidArgumentError):
            Sandbox.create(template="base", ttl_seconds=-1)
        with self.assertRaises(airlock.PermissionDeniedError) as cm:
            Sandbox.list(client=Client(api_key="alk_wrong"))
        self.assertEqual(cm.exception.status, 401)
        sbx = Sandbox.create(template="base")
        with self.assertRaises(airlock.InvalidArgumentError):
            sbx.filesystem.read("/job/../etc/passwd")
        with self.assertRaises(airlock.UnavailableError):
            Sandbox.list(client=Client(url="unix://" + self.sock + ".missing"))

    def test_architecture_snippet(self):
        matter_id, doc_id, pdf_bytes = "m-1", "d-1", b"%PDF-1.7 ..."
        sbx = Sandbox.create(template="legal-doc-review", ttl_seconds=300,
                             metadata={"matter": matter_id, "doc": doc_id, "class": "privileged"})
        try:
            probe = sbx.exec("curl -s --max-time 3 -o /dev/null -w '%{http_code}' https://example.com",
                             timeout_seconds=5)
            if probe.exit_code == 0 and probe.stdout.strip() not in ("", "000"):
                raise RuntimeError("egress reachable -- refusing")
            sbx.network.set_egress(default="deny", allow=[])
            sbx.filesystem.write("/job/in.pdf", pdf_bytes)
            result = sbx.exec("python3 /opt/review/review_contract.py /job/in.pdf", timeout_seconds=180)
            if result.exit_code != 0:
                raise RuntimeError(result.stderr[-2000:])
            findings = json.loads(sbx.filesystem.read("/job/out/findings.json"))
        finally:
            sbx.kill()
        self.assertEqual(findings["findings"][0]["clause"], "indemnity")
        self.assertEqual(self.state.sandboxes[sbx.id]["state"], "killed")
        self.assertEqual(self.state.files[(sbx.id, "/job/in.pdf")], pdf_bytes)

        with Sandbox.create(template="invoice-ocr", ttl_seconds=120,
                            metadata={"tenant_id": "t", "invoice_id": "i"}) as sbx2:
            kids = sbx2.fork()
            self.assertIsInstance(kids, list)  # always a list, even of one
            child, = kids
            self.assertIsInstance(child, Sandbox)
            self.assertEqual(child.parent_id, sbx2.id)
        self.assertEqual(self.state.sandboxes[sbx2.id]["state"], "killed")
        listed = Sandbox.list(metadata={"matter": matter_id})
        self.assertEqual(listed, [])  # killed sandboxes are not running
        self.assertEqual([s.id for s in Sandbox.list(metadata={"matter": matter_id}, all=True)], [sbx.id])

    def test_context_manager_kills_on_exception(self):
        with self.assertRaises(ValueError):
            with Sandbox.create(template="base") as sbx:
                raise ValueError("job failed")
        self.assertEqual(self.state.sandboxes[sbx.id]["state"], "killed")
        sbx.kill()  # already killed: not an error

    def test_exec(self):
        sbx = Sandbox.create(template="base")
        r = sbx.exec("echo hi", timeout_seconds=5, env={"A": "1"}, cwd="/job")
        self.assertEqual((r.exit_code, r.stdout, r.timed_out), (0, "echo hi\n", False))
        sent = [q for m, p, q in self.state.requests if p.endswith("/exec")]
        self.assertTrue(sent)
        r = sbx.exec(["ls", "-l"])
        self.assertEqual(r.stdout, "ls -l\n")
        r = sbx.exec("binary")
        self.assertEqual(r.stdout_raw, b"\xff")
        r = sbx.exec("cat", stdin=b"\xff\x00")
        self.assertEqual(r.stdout, "\xff\x00")
        r = sbx.exec("cat", stdin="text in")
        self.assertEqual(r.stdout, "text in")
        r = sbx.exec("fail")
        self.assertEqual(r.exit_code, 2)
        self.assertEqual(len(r.stderr[-2000:]), 2000)
        self.assertIsNone(sbx._exec_timeout(None))
        self.assertEqual(sbx._exec_timeout(5), 35.0)
        chunks = []
        r = sbx.exec_stream("echo streamed", on_stdout=chunks.append)
        self.assertEqual((r.exit_code, b"".join(chunks)), (0, b"echo streamed\n"))

    def test_files(self):
        sbx = Sandbox.create(template="base")
        self.assertEqual(sbx.filesystem.write("/job/a.txt", "héllo"), 6)
        self.assertEqual(sbx.filesystem.read("/job/a.txt"), "héllo".encode())
        # A file-like object of unknown size is sent chunked.
        self.assertEqual(sbx.filesystem.write("/job/b.bin", io.BytesIO(b"x" * 300000)), 300000)
        # A real file is sent with its length.
        with tempfile.NamedTemporaryFile() as f:
            f.write(b"y" * 1000)
            f.flush()
            f.seek(0)
            self.assertEqual(sbx.filesystem.write("/job/c.bin", f), 1000)
        self.assertEqual(sbx.filesystem.stat("/job/a.txt").size, 6)
        self.assertEqual([e.name for e in sbx.filesystem.list("/job")], ["a.txt", "b.bin", "c.bin"])
        sbx.filesystem.remove("/job/a.txt")
        with self.assertRaises(airlock.NotFoundError):
            sbx.filesystem.read("/job/a.txt")
        out = io.BytesIO()
        self.assertEqual(sbx.filesystem.read_to("/job/b.bin", out), 300000)

    def test_upload_refused_early(self):
        sbx = Sandbox.create(template="base")
        with self.assertRaises(airlock.ResourceExhaustedError) as cm:
            sbx.filesystem.write("/job/big", b"z" * (8 << 20))
        self.assertEqual(cm.exception.status, 413)

    def test_egress_and_fork(self):
        sbx = Sandbox.create(template="base", egress={"default": "deny"})
        sbx.network.set_egress(default="deny", allow=[
            {"name": "dms", "cidr": "10.250.0.2/32", "ports": [8080], "protocol": "tcp"},
            {"name": "llm", "domain": "api.example.com"}])
        self.assertEqual(len(sbx.network.egress["allow"]), 2)
        with self.assertRaises(airlock.FailedPreconditionError):
            sbx.network.probe()
        sbx.network.set_egress(default="deny", allow=[])
        self.assertFalse(any(p["reachable"] for p in sbx.network.probe()))
        kids = sbx.fork(count=3)
        self.assertEqual(len(kids), 3)
        self.assertTrue(all(k.parent_id == sbx.id for k in kids))
        self.assertEqual(Sandbox.get(kids[0].id).id, kids[0].id)


if __name__ == "__main__":
    unittest.main()
