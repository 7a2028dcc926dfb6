"""Sandbox: the object users work with."""

import base64
import io
import os
import urllib.parse
from typing import Any, BinaryIO, Dict, Iterable, List, Optional, Union

from . import errors
from ._http import TIMEOUT_MARGIN, Client, b64decode

_default_client: Optional[Client] = None


def _client(client: Optional[Client]) -> Client:
    """The given client, or one configured from the environment."""
    if client is not None:
        return client
    global _default_client
    if _default_client is None:
        _default_client = Client()
    return _default_client


class ExecResult:
    """How a process ended and what it printed.

    ``stdout``/``stderr`` are text (invalid UTF-8 replaced by U+FFFD);
    ``stdout_raw``/``stderr_raw`` are the exact bytes.
    """

    def __init__(self, d: Dict[str, Any]):
        self.exit_code: int = d.get("exit_code", 0)
        self.signal: str = d.get("signal", "")
        self.timed_out: bool = d.get("timed_out", False)
        self.stdout_truncated: bool = d.get("stdout_truncated", False)
        self.stderr_truncated: bool = d.get("stderr_truncated", False)
        self.duration_ms: int = d.get("duration_ms", 0)
        # Binary output (not UTF-8, or mostly control bytes) comes only as
        # base64; the text form is then decoded here, lossily.
        self.stdout_raw: bytes = (b64decode(d["stdout_base64"]) if d.get("stdout_base64")
                                  else d.get("stdout", "").encode("utf-8"))
        self.stderr_raw: bytes = (b64decode(d["stderr_base64"]) if d.get("stderr_base64")
                                  else d.get("stderr", "").encode("utf-8"))
        self.stdout: str = (self.stdout_raw.decode("utf-8", errors="replace") if d.get("stdout_base64")
                            else d.get("stdout", ""))
        self.stderr: str = (self.stderr_raw.decode("utf-8", errors="replace") if d.get("stderr_base64")
                            else d.get("stderr", ""))

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def __repr__(self) -> str:
        return "ExecResult(exit_code=%d, timed_out=%s, stdout=%d chars, stderr=%d chars)" % (
            self.exit_code, self.timed_out, len(self.stdout), len(self.stderr))


class FileInfo:
    """One guest path, as stat and list describe it."""

    def __init__(self, d: Dict[str, Any]):
        self.path: str = d.get("path", "")
        self.name: str = d.get("name", "")
        self.size: int = d.get("size", 0)
        self.mode: int = d.get("mode", 0)
        self.mode_string: str = d.get("mode_string", "")
        self.is_dir: bool = d.get("is_dir", False)
        self.mod_time: str = d.get("mod_time", "")
        self.symlink_target: str = d.get("symlink_target", "")

    def __repr__(self) -> str:
        return "FileInfo(path=%r, size=%d, is_dir=%s)" % (self.path, self.size, self.is_dir)


def _stdin_fields(stdin: Union[None, str, bytes]) -> Dict[str, str]:
    if stdin is None:
        return {}
    if isinstance(stdin, str):
        return {"stdin": stdin}
    try:
        return {"stdin": bytes(stdin).decode("utf-8")}
    except UnicodeDecodeError:
        return {"stdin_base64": base64.b64encode(bytes(stdin)).decode("ascii")}


class Filesystem:
    """File operations on one sandbox. Paths are absolute and clean."""

    def __init__(self, sbx: "Sandbox"):
        self._sbx = sbx

    def _path(self, suffix: str = "") -> str:
        return self._sbx._path("/files" + suffix)

    def write(self, path: str, data: Union[bytes, bytearray, str, BinaryIO], mode: Optional[int] = None) -> int:
        """Write bytes, text (UTF-8) or a binary file-like object (streamed,
        never read whole into memory) to ``path``, creating parents.
        Returns the number of bytes written."""
        query: Dict[str, Any] = {"path": path}
        if mode is not None:
            query["mode"] = "%04o" % (mode & 0o7777)
        length = None
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            if not hasattr(data, "read"):
                raise TypeError("write() takes bytes, str or a binary file-like object")
            length = _remaining(data)
        out = self._sbx._client.json("PUT", self._path(), query=query, body=data, length=length,
                                     timeout=None)
        return out["bytes"]

    def read(self, path: str) -> bytes:
        """The whole content of ``path``."""
        buf = io.BytesIO()
        self.read_to(path, buf)
        return buf.getvalue()

    def read_to(self, path: str, fileobj: BinaryIO) -> int:
        """Stream ``path`` into a writable binary file object; returns bytes copied."""
        c = self._sbx._client
        resp = c.request("GET", self._path(), query={"path": path}, timeout=None)
        n = 0
        try:
            while True:
                chunk = resp.read(256 * 1024)
                if not chunk:
                    break
                fileobj.write(chunk)
                n += len(chunk)
        except Exception as e:  # a cut connection must not look like EOF
            raise errors.UnavailableError("read %s: transfer broke: %s" % (path, e), status=resp.status)
        finally:
            resp.close()
            resp._airlock_conn.close()  # type: ignore[attr-defined]
        return n

    def stat(self, path: str) -> FileInfo:
        return FileInfo(self._sbx._client.json("GET", self._path("/stat"), query={"path": path}))

    def list(self, path: str) -> List[FileInfo]:
        out = self._sbx._client.json("GET", self._path("/list"), query={"path": path})
        return [FileInfo(e) for e in out.get("entries") or []]

    def remove(self, path: str, recursive: bool = False) -> None:
        query = {"path": path}
        if recursive:
            query["recursive"] = "true"
        self._sbx._client.json("DELETE", self._path(), query=query)

    def make_dir(self, path: str) -> None:
        """Create a directory and its missing parents."""
        self._sbx._client.json("POST", self._path("/mkdir"), query={"path": path})

    mkdir = make_dir


def _remaining(f: Any) -> Optional[int]:
    """Bytes left in a regular file, or None when unknown (sent chunked)."""
    try:
        st = os.fstat(f.fileno())
        pos = f.tell()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    import stat as _stat
    if not _stat.S_ISREG(st.st_mode):
        return None
    return max(st.st_size - pos, 0)


class Network:
    """Egress control for one sandbox."""

    def __init__(self, sbx: "Sandbox"):
        self._sbx = sbx

    def set_egress(self, default: str = "deny", allow: Optional[Iterable[Dict[str, Any]]] = None,
                   tls: Optional[str] = None) -> None:
        """Replace the egress policy. ``allow`` entries are dicts such as
        {"name": "dms", "cidr": "10.250.0.2/32", "ports": [8080], "protocol": "tcp"}
        or {"name": "llm", "domain": "api.example.com"}. ``tls="inspect"``
        makes the egress proxy terminate TLS to domain rules with a
        per-sandbox CA the guest trusts and refuse requests for any host but
        the TLS server name (no domain fronting); the default,
        "passthrough", only checks the server name. Connections the new
        policy no longer allows are closed, on both sides of the proxy,
        before this returns."""
        policy: Dict[str, Any] = {"default": default, "allow": list(allow or [])}
        if tls:
            policy["tls"] = tls
        self._sbx._update(self._sbx._client.json("PUT", self._sbx._path("/egress"), json_body=policy))

    @property
    def egress(self) -> Dict[str, Any]:
        """The policy as last reported by the server."""
        return self._sbx.info.get("egress", {})

    def probe(self) -> List[Dict[str, Any]]:
        """Run the egress self-check inside the sandbox (TCP to the gateway,
        the host, a public address and cloud metadata; DNS for a name no
        policy allows). Returns the per-probe results when all were blocked;
        raises FailedPreconditionError naming the probes that got out."""
        out = self._sbx._client.json("POST", self._sbx._path("/probe"))
        return list((out or {}).get("probes", []))


class Sandbox:
    """A throwaway microVM. Create one with ``Sandbox.create(...)``.

    Used as a context manager, the sandbox is killed on exit, also when the
    block raises.
    """

    def __init__(self, info: Dict[str, Any], client: Optional[Client] = None):
        self._client = _client(client)
        self.info: Dict[str, Any] = {}
        self._update(info)
        self.filesystem = Filesystem(self)
        self.network = Network(self)

    def _update(self, info: Dict[str, Any]) -> None:
        self.info = info
        self.id: str = info["id"]

    def _path(self, suffix: str = "") -> str:
        return "/v1/sandboxes/" + urllib.parse.quote(self.id, safe="") + suffix

    def __repr__(self) -> str:
        return "Sandbox(id=%r, template=%r, state=%r)" % (self.id, self.template, self.state)

    @property
    def template(self) -> str:
        return self.info.get("template", "")

    @property
    def state(self) -> str:
        return self.info.get("state", "")

    @property
    def metadata(self) -> Dict[str, str]:
        return self.info.get("metadata") or {}

    @property
    def parent_id(self) -> str:
        return self.info.get("parent_id", "")

    @property
    def jailed(self) -> bool:
        """Whether this sandbox's VMM runs in a jail of its own (False only
        where the daemon was started with --jail=off)."""
        return bool(self.info.get("jailed", False))

    # -- lifecycle -------------------------------------------------------

    @classmethod
    def create(cls, template: str, ttl_seconds: Optional[int] = None,
               metadata: Optional[Dict[str, str]] = None,
               egress: Optional[Dict[str, Any]] = None,
               client: Optional[Client] = None, probe: bool = False) -> "Sandbox":
        """Restore a new sandbox from ``template``. ``egress`` is a policy
        dict ({"default": "deny", "allow": [...]}); None denies everything.
        ``probe=True`` runs the in-guest egress self-check before returning:
        if anything gets out, the sandbox is killed and FailedPreconditionError
        is raised, so no document is ever written into an open sandbox."""
        c = _client(client)
        body: Dict[str, Any] = {"template": template}
        if probe:
            body["probe"] = True
        if ttl_seconds is not None:
            body["ttl_seconds"] = ttl_seconds
        if metadata:
            body["metadata"] = dict(metadata)
        if egress is not None:
            body["egress"] = egress
        return cls(c.json("POST", "/v1/sandboxes", json_body=body), client=c)

    @classmethod
    def get(cls, sandbox_id: str, client: Optional[Client] = None) -> "Sandbox":
        c = _client(client)
        return cls(c.json("GET", "/v1/sandboxes/" + urllib.parse.quote(sandbox_id, safe="")), client=c)

    @classmethod
    def list(cls, metadata: Optional[Dict[str, str]] = None, all: bool = False,
             client: Optional[Client] = None) -> List["Sandbox"]:
        """Your running sandboxes whose metadata contains every given pair
        (``all=True``: ended ones too)."""
        c = _client(client)
        query: Dict[str, Any] = {"metadata." + k: v for k, v in (metadata or {}).items()}
        if all:
            query["state"] = "all"
        out = c.json("GET", "/v1/sandboxes", query=query)
        return [cls(i, client=c) for i in out.get("sandboxes") or []]

    def refresh(self) -> "Sandbox":
        self._update(self._client.json("GET", self._path()))
        return self

    def set_ttl(self, ttl_seconds: int) -> "Sandbox":
        """End the sandbox ttl_seconds from now (longer or shorter than
        before), within the daemon's maximum lifetime counted from its
        creation (InvalidArgumentError past it; FailedPreconditionError
        once it has ended)."""
        self._update(self._client.json("PUT", self._path("/ttl"), json_body={"ttl_seconds": int(ttl_seconds)}))
        return self

    def kill(self) -> None:
        """Destroy the sandbox. Killing one that has already ended (killed,
        expired) or is gone is not an error, so ``finally: sbx.kill()`` never
        hides the exception that got there."""
        try:
            self._client.json("DELETE", self._path())
        except (errors.NotFoundError, errors.FailedPreconditionError):
            pass

    def fork(self, count: int = 1) -> List["Sandbox"]:
        """Copy-on-write copies of this running sandbox; it keeps running.
        Always a list, count long: ``child, = sbx.fork()``."""
        out = self._client.json("POST", self._path("/fork"), json_body={"count": count})
        return [Sandbox(i, client=self._client) for i in out.get("sandboxes") or []]

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            self.kill()
        except errors.AirlockError:
            if exc_type is None:
                raise
            # Never replace the block's own exception with a kill failure;
            # the TTL reaper ends the sandbox anyway.

    # -- exec ------------------------------------------------------------

    def exec(self, cmd: Union[str, List[str]], timeout_seconds: Optional[float] = None,
             env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
             stdin: Union[None, str, bytes] = None,
             max_output_bytes: Optional[int] = None) -> ExecResult:
        """Run ``cmd`` (a shell string, or an argv list run without a shell)
        and wait for it. A non-zero exit code is a result, not an exception.
        """
        body = self._exec_body(cmd, timeout_seconds, env, cwd, stdin, max_output_bytes)
        out = self._client.json("POST", self._path("/exec"), json_body=body,
                                timeout=self._exec_timeout(timeout_seconds))
        return ExecResult(out)

    def exec_stream(self, cmd: Union[str, List[str]], on_stdout: Any = None, on_stderr: Any = None,
                    timeout_seconds: Optional[float] = None, env: Optional[Dict[str, str]] = None,
                    cwd: Optional[str] = None, stdin: Union[None, str, bytes] = None) -> ExecResult:
        """Run ``cmd`` and call on_stdout/on_stderr with each chunk of bytes
        as it arrives. The result's stdout and stderr are empty."""
        body = self._exec_body(cmd, timeout_seconds, env, cwd, stdin, None)
        for ev in self._client.ndjson("POST", self._path("/exec/stream"), json_body=body,
                                      timeout=self._exec_timeout(timeout_seconds)):
            t = ev.get("type")
            if t in ("stdout", "stderr"):
                cb = on_stdout if t == "stdout" else on_stderr
                if cb is not None:
                    cb(b64decode(ev.get("data", "")))
            elif t == "exit":
                return ExecResult(ev)
            elif t == "error":
                err = ev.get("error") or {}
                raise errors.error_for(err.get("code"), err.get("message", "exec failed"), 200)
        raise errors.UnavailableError("exec stream ended without an exit status", status=200)

    def _exec_timeout(self, timeout_seconds: Optional[float]) -> Optional[float]:
        if timeout_seconds is None:
            return None  # bounded by the sandbox TTL on the server
        return float(timeout_seconds) + TIMEOUT_MARGIN

    @staticmethod
    def _exec_body(cmd: Union[str, List[str]], timeout_seconds: Optional[float],
                   env: Optional[Dict[str, str]], cwd: Optional[str],
                   stdin: Union[None, str, bytes], max_output_bytes: Optional[int]) -> Dict[str, Any]:
        body: Dict[str, Any] = {}
        if isinstance(cmd, str):
            body["cmd"] = cmd
        else:
            body["argv"] = [str(a) for a in cmd]
        if timeout_seconds is not None:
            body["timeout_seconds"] = timeout_seconds
        if env:
            body["env"] = dict(env)
        if cwd:
            body["cwd"] = cwd
        if max_output_bytes:
            body["max_output_bytes"] = max_output_bytes
        body.update(_stdin_fields(stdin))
        return body


def templates(client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """The templates sandboxes can be created from."""
    return _client(client).json("GET", "/v1/templates").get("templates") or []


def audit(sandbox: Optional[str] = None, metadata: Optional[Dict[str, str]] = None,
          since: Optional[str] = None, until: Optional[str] = None,
          event: Optional[List[str]] = None, limit: Optional[int] = None,
          client: Optional[Client] = None) -> List[Dict[str, Any]]:
    """Your tenant's audit records (ids, metadata, outcomes; never content)."""
    query: Dict[str, Any] = {"metadata." + k: v for k, v in (metadata or {}).items()}
    query.update({"sandbox": sandbox, "since": since, "until": until, "limit": limit})
    if event:
        query["event"] = list(event)
    return _client(client).json("GET", "/v1/audit", query=query).get("records") or []
