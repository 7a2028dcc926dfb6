"""Retries of refused calls, against a local HTTP server that refuses the
first N requests. Standard library only."""

import json
import os
import sys
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import io  # noqa: E402

import airlock  # noqa: E402
from airlock import AsyncClient, Client  # noqa: E402
from airlock._calls import Call  # noqa: E402


def refusing(status, refusals, retry_after=None):
    """A server answering `status` the first `refusals` times, then 200."""
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _answer(self):
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            seen.append(self.command)
            if len(seen) <= refusals:
                code = {429: "resource_exhausted", 503: "unavailable"}[status]
                body = json.dumps({"error": {"code": code, "message": "busy"}}).encode()
                self.send_response(status)
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
            else:
                body = b'{"status": "ok"}'
                self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = _answer

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, seen


class RetryTest(unittest.TestCase):
    def client(self, srv, **kw):
        self.addCleanup(srv.server_close)  # after shutdown: cleanups run last-in first
        self.addCleanup(srv.shutdown)
        return Client(url="http://127.0.0.1:%d" % srv.server_address[1], api_key="k", **kw)

    def test_429_is_sent_again(self):
        srv, seen = refusing(429, 2)
        self.assertEqual(self.client(srv).json("GET", "/healthz"), {"status": "ok"})
        self.assertEqual(len(seen), 3)

    def test_retries_off_and_exhausted(self):
        srv, seen = refusing(429, 1)
        with self.assertRaises(airlock.ResourceExhaustedError):
            self.client(srv, retries=0).json("GET", "/healthz")
        self.assertEqual(len(seen), 1)
        srv, seen = refusing(429, 10)
        with self.assertRaises(airlock.ResourceExhaustedError):
            self.client(srv, retries=2).json("GET", "/healthz")
        self.assertEqual(len(seen), 3)

    def test_503_only_for_calls_safe_to_repeat(self):
        srv, seen = refusing(503, 1)
        with self.assertRaises(airlock.UnavailableError):
            self.client(srv).json("POST", "/v1/sandboxes/sbx-x/exec", json_body={"cmd": "true"})
        self.assertEqual(seen, ["POST"])  # a POST may have run half-way
        srv, seen = refusing(503, 1)
        self.assertEqual(self.client(srv).json("GET", "/healthz"), {"status": "ok"})
        self.assertEqual(seen, ["GET", "GET"])

    def test_streamed_body_is_never_sent_again(self):
        srv, seen = refusing(429, 1)
        with self.assertRaises(airlock.ResourceExhaustedError):
            self.client(srv).json("PUT", "/v1/sandboxes/sbx-x/files", body=io.BytesIO(b"x"), length=1)
        self.assertEqual(len(seen), 1)

    def test_retry_after_is_followed(self):
        srv, seen = refusing(429, 1, retry_after="1")
        began = time.monotonic()
        self.assertEqual(self.client(srv).json("GET", "/healthz"), {"status": "ok"})
        self.assertGreaterEqual(time.monotonic() - began, 0.9)
        self.assertEqual(len(seen), 2)


def _ok(d):
    return d


class AsyncRetryTest(unittest.IsolatedAsyncioTestCase):
    """The asyncio client retries exactly as the blocking one."""

    def client(self, srv, **kw):
        self.addCleanup(srv.server_close)  # after shutdown: cleanups run last-in first
        self.addCleanup(srv.shutdown)
        c = AsyncClient(url="http://127.0.0.1:%d" % srv.server_address[1], api_key="k", **kw)
        self.addAsyncCleanup(c.aclose)
        return c

    async def test_429_is_sent_again(self):
        srv, seen = refusing(429, 2)
        self.assertEqual(await self.client(srv).call(Call("GET", "/healthz", decode=_ok)), {"status": "ok"})
        self.assertEqual(len(seen), 3)

    async def test_retries_off_and_exhausted(self):
        srv, seen = refusing(429, 1)
        with self.assertRaises(airlock.ResourceExhaustedError):
            await self.client(srv, retries=0).call(Call("GET", "/healthz"))
        self.assertEqual(len(seen), 1)
        srv, seen = refusing(429, 10)
        with self.assertRaises(airlock.ResourceExhaustedError):
            await self.client(srv, retries=2).call(Call("GET", "/healthz"))
        self.assertEqual(len(seen), 3)

    async def test_503_only_for_calls_safe_to_repeat(self):
        srv, seen = refusing(503, 1)
        with self.assertRaises(airlock.UnavailableError):
            await self.client(srv).call(Call("POST", "/v1/sandboxes/sbx-x/exec", json_body={"cmd": "true"}))
        self.assertEqual(seen, ["POST"])
        for method in ("GET", "PUT", "DELETE"):
            srv, seen = refusing(503, 1)
            self.assertEqual(await self.client(srv).call(Call(method, "/x", decode=_ok)), {"status": "ok"})
            self.assertEqual(seen, [method, method])

    async def test_streamed_body_is_never_sent_again(self):
        srv, seen = refusing(429, 1)
        with self.assertRaises(airlock.ResourceExhaustedError):
            await self.client(srv).call(Call("PUT", "/v1/sandboxes/sbx-x/files", body=io.BytesIO(b"x"), length=1))
        self.assertEqual(len(seen), 1)

    async def test_retry_after_is_followed(self):
        srv, seen = refusing(429, 1, retry_after="1")
        began = time.monotonic()
        self.assertEqual(await self.client(srv).call(Call("GET", "/healthz", decode=_ok)), {"status": "ok"})
        self.assertGreaterEqual(time.monotonic() - began, 0.9)
        self.assertEqual(len(seen), 2)


if __name__ == "__main__":
    unittest.main()
