"""HTTP transport: unix socket or TCP, JSON in and out, errors mapped."""

import http.client
import json
import os
import random
import socket
import time
import urllib.parse
from typing import Any, BinaryIO, Callable, Dict, Iterator, Optional, Tuple, TypeVar

from . import errors
from ._calls import DEFAULT_TIMEOUT, NDJSON, TIMEOUT_MARGIN, Call  # noqa: F401  (TIMEOUT_MARGIN: 0.1 name)

T = TypeVar("T")

DEFAULT_URL = "unix:///run/airlock/airlock.sock"

_CHUNK = 256 * 1024


class _UnixHTTPConnection(http.client.HTTPConnection):
    """HTTPConnection to a unix socket (the Host header says "airlock")."""

    def __init__(self, path: str, timeout: Optional[float]):
        super().__init__("airlock", timeout=timeout, blocksize=_CHUNK)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self._path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def parse_url(url: str) -> Tuple[str, str, str]:
    """Split an airlock URL into (kind, address, path prefix).

    kind is "unix" (address = socket path), "http" or "https"
    (address = host[:port]).
    """
    if not url:
        raise errors.InvalidArgumentError("empty airlock URL", status=0)
    if url.startswith("/"):
        return "unix", url, ""
    if url.startswith("unix:"):
        path = url[len("unix:"):]
        if path.startswith("//"):
            path = path[2:]
        if not path.startswith("/"):
            raise errors.InvalidArgumentError(
                "airlock URL %r: want unix:///absolute/path.sock" % url, status=0)
        return "unix", path, ""
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("http", "https") or not u.netloc:
        raise errors.InvalidArgumentError(
            "airlock URL %r: want unix:///path.sock or http://host:port" % url, status=0)
    return u.scheme, u.netloc, u.path.rstrip("/")


DEFAULT_RETRIES = 3


def _retryable(method: str, status: int) -> bool:
    if status == 429:
        return True
    return status == 503 and method in ("GET", "PUT", "DELETE")


def _backoff(attempt: int, retry_after: Optional[str]) -> float:
    """Seconds before retry attempt+1: the daemon's Retry-After when it
    gives one, else 0.2 s doubling with up to 50% jitter, at most 5 s."""
    if retry_after and retry_after.strip().isdigit():
        return min(float(retry_after.strip()), 30.0)
    d = min(0.2 * float(2 ** attempt), 5.0)
    return d + random.uniform(0, d / 2)


class Client:
    """A connection configuration for one airlock daemon.

    ``Client()`` reads AIRLOCK_URL (default unix:///run/airlock/airlock.sock)
    and AIRLOCK_API_KEY; explicit arguments win. ``timeout`` is the socket
    timeout in seconds for ordinary calls (execs get their own).

    ``retries`` is how many times a call the daemon refused is sent again:
    429 (resource_exhausted: refused before anything was done, say the
    tenant's concurrent-exec limit) for any method, 503 (unavailable: a
    sandbox still being re-attached after a restart) for GET, PUT and
    DELETE only, since a POST that failed half-way must not run twice.
    Waits grow from 0.2 s (doubling, with jitter, at most 5 s) or follow
    the daemon's Retry-After. A streamed body (a file object) is never sent
    again. 0 turns retries off.
    """

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None,
                 timeout: Optional[float] = 60.0, retries: int = DEFAULT_RETRIES):
        self.url = url or os.environ.get("AIRLOCK_URL") or DEFAULT_URL
        self.api_key = api_key if api_key is not None else os.environ.get("AIRLOCK_API_KEY", "")
        self.timeout = timeout
        self.retries = max(int(retries), 0)
        self._kind, self._addr, self._prefix = parse_url(self.url)

    def __repr__(self) -> str:
        return "airlock.Client(url=%r)" % self.url  # never the key

    def _conn(self, timeout: Optional[float]) -> http.client.HTTPConnection:
        if self._kind == "unix":
            return _UnixHTTPConnection(self._addr, timeout)
        if self._kind == "https":
            return http.client.HTTPSConnection(self._addr, timeout=timeout, blocksize=_CHUNK)
        return http.client.HTTPConnection(self._addr, timeout=timeout, blocksize=_CHUNK)

    def _target(self, path: str, query: Optional[Dict[str, Any]]) -> str:
        target = self._prefix + path
        if query:
            target += "?" + urllib.parse.urlencode(
                [(k, v) for k, v in query.items() if v is not None], doseq=True)
        return target

    def request(self, method: str, path: str, *, query: Optional[Dict[str, Any]] = None,
                json_body: Any = None, body: Any = None, length: Optional[int] = None,
                timeout: Any = "default") -> http.client.HTTPResponse:
        """Send a request and return the open response if its status is 2xx,
        again while the daemon refuses it in a way worth waiting out (see
        the class doc). The caller reads and closes it. A non-2xx answer
        raises the typed error decoded from the JSON body."""
        return self.send(Call(method, path, query=query, json_body=json_body, body=body,
                              length=length, timeout=timeout))

    def send(self, c: Call[Any]) -> http.client.HTTPResponse:
        """Carry out c's request, with retries; the open 2xx response."""
        attempt = 0
        while True:
            try:
                return self.send_once(c)
            except errors.AirlockError as e:
                wait = retry_wait(c, e, attempt, self.retries)
                if wait is None:
                    raise
                time.sleep(wait)
                attempt += 1

    def send_once(self, c: Call[Any], on_conn: Optional[Callable[[http.client.HTTPConnection], None]] = None
                  ) -> http.client.HTTPResponse:
        """Send c's request once; on_conn sees the connection before it is
        used (the async client keeps it, to abort on cancellation)."""
        timeout = self.timeout if c.timeout == DEFAULT_TIMEOUT else c.timeout
        headers, body = self._headers(c)
        conn = self._conn(timeout)
        if on_conn is not None:
            on_conn(conn)
        try:
            try:
                conn.putrequest(c.method, self._target(c.path, c.query), skip_accept_encoding=True)
                for k, v in headers.items():
                    conn.putheader(k, v)
                conn.endheaders()
                if body is not None:
                    self._send_body(conn, body, chunked=headers.get("Transfer-Encoding") == "chunked")
            except (BrokenPipeError, ConnectionResetError):
                # The server may have refused the body early (413) and
                # closed; its answer is still there to read.
                pass
            resp = conn.getresponse()
        except socket.timeout as e:
            conn.close()
            raise errors.DeadlineExceededError("airlock %s %s: timed out: %s" % (c.method, c.path, e), status=0)
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise errors.UnavailableError("airlock %s %s: %s" % (c.method, c.path, e), status=0)
        if 200 <= resp.status < 300:
            resp._airlock_conn = conn  # type: ignore[attr-defined]  # closed with the response
            return resp
        try:
            raw = resp.read(1 << 20)
        except (OSError, http.client.HTTPException):
            raw = b""
        finally:
            conn.close()
        err = decode_error(resp.status, resp.reason, raw)
        err.retry_after = resp.getheader("Retry-After")  # type: ignore[attr-defined]
        raise err

    def _headers(self, c: Call[Any]) -> Tuple[Dict[str, str], Any]:
        headers = {"User-Agent": "airlock-python", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        body = c.body
        if c.json_body is not None:
            body = json.dumps(c.json_body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        elif body is not None:
            headers["Content-Type"] = "application/octet-stream"
        if isinstance(body, (bytes, bytearray, memoryview)):
            headers["Content-Length"] = str(len(body))
        elif body is not None and c.length is not None:
            headers["Content-Length"] = str(c.length)
        elif body is not None:
            headers["Transfer-Encoding"] = "chunked"
        return headers, body

    @staticmethod
    def _send_body(conn: http.client.HTTPConnection, body: Any, chunked: bool) -> None:
        if isinstance(body, (bytes, bytearray, memoryview)):
            conn.send(bytes(body))
            return
        while True:
            chunk = body.read(_CHUNK)
            if not chunk:
                break
            if isinstance(chunk, str):
                chunk = chunk.encode("utf-8")
            if chunked:
                conn.send(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            else:
                conn.send(chunk)
        if chunked:
            conn.send(b"0\r\n\r\n")

    # -- carrying out Calls ------------------------------------------------

    def call(self, c: Call[T]) -> T:
        """Carry out a JSON call and return its typed result."""
        try:
            resp = self.send(c)
        except c.ignore:
            return c.decode(None)
        return c.decode(read_json(c, resp))

    def stream(self, c: Call[Any]) -> Iterator[Dict[str, Any]]:
        """Carry out an NDJSON call, yielding one decoded object per line."""
        resp = self.send(c)
        try:
            while True:
                line = read_line(c, resp)
                if line is None:
                    return
                if line:
                    yield line
        finally:
            close(resp)

    def download(self, c: Call[Any], fileobj: BinaryIO) -> int:
        """Carry out a RAW call, copying the body into fileobj; its length."""
        resp = self.send(c)
        n = 0
        try:
            while True:
                chunk = read_chunk(c, resp)
                if not chunk:
                    return n
                fileobj.write(chunk)
                n += len(chunk)
        finally:
            close(resp)

    def json(self, method: str, path: str, **kw: Any) -> Any:
        """request() and decode the JSON answer (None for 204)."""
        return self.call(Call(method, path, decode=lambda d: d, **kw))

    def ndjson(self, method: str, path: str, **kw: Any) -> Iterator[Dict[str, Any]]:
        """request() and yield one decoded object per line."""
        return self.stream(Call(method, path, kind=NDJSON, **kw))


def retry_wait(c: Call[Any], err: errors.AirlockError, attempt: int, retries: int) -> Optional[float]:
    """Seconds to wait before sending c again after err, or None: give up."""
    if not c.replayable or attempt >= retries or not _retryable(c.method, err.status):
        return None
    return _backoff(attempt, getattr(err, "retry_after", None))


def close(resp: http.client.HTTPResponse) -> None:
    resp.close()
    resp._airlock_conn.close()  # type: ignore[attr-defined]


def read_json(c: Call[Any], resp: http.client.HTTPResponse) -> Any:
    """The whole JSON answer of resp (None for 204), resp closed."""
    try:
        raw = resp.read()
    except (OSError, http.client.HTTPException) as e:
        raise errors.UnavailableError("airlock %s %s: %s" % (c.method, c.path, e), status=resp.status)
    finally:
        close(resp)
    if resp.status == 204 or not raw:
        return None
    return json.loads(raw.decode("utf-8"))


def read_line(c: Call[Any], resp: http.client.HTTPResponse) -> Optional[Dict[str, Any]]:
    """The next object of an NDJSON answer; {} for a blank line, None at the end."""
    try:
        line = resp.readline()
    except (OSError, http.client.HTTPException) as e:
        raise errors.UnavailableError("airlock %s %s: stream broke: %s" % (c.method, c.path, e),
                                      status=resp.status)
    if not line:
        return None
    if not line.strip():
        return {}
    obj: Dict[str, Any] = json.loads(line.decode("utf-8"))
    return obj


def read_chunk(c: Call[Any], resp: http.client.HTTPResponse) -> bytes:
    """The next piece of a RAW answer; b"" at its end. A cut connection
    raises instead of looking like the end."""
    try:
        return resp.read(_CHUNK)
    except (OSError, http.client.HTTPException) as e:
        raise errors.UnavailableError("airlock %s %s: transfer broke: %s" % (c.method, c.path, e),
                                      status=resp.status)


def decode_error(status: int, reason: str, raw: bytes) -> errors.AirlockError:
    code, message, why = None, "", None
    try:
        err = json.loads(raw.decode("utf-8"))["error"]
        code, message, why = err.get("code"), err.get("message", ""), err.get("reason")
    except (ValueError, KeyError, TypeError, AttributeError):
        message = "HTTP %d %s" % (status, reason)
    if not isinstance(why, str):
        why = None
    return errors.error_for(code, message or "HTTP %d %s" % (status, reason), status, why)
