"""Every API call, described once.

Each function here returns a ``Call``: the request (method, path, query,
body, timeout), how its answer is read (``kind``) and how the JSON becomes
a typed result (``decode``). The sync ``Client`` and the ``AsyncClient``
both only carry out Calls, so a call is added here once and both get it;
the Sandbox and AsyncSandbox methods are one-line wrappers (a test checks
the two surfaces stay equal).
"""

from __future__ import annotations

import base64
import codecs
import os
import stat as _stat
import time
import urllib.parse
from dataclasses import dataclass
from datetime import datetime
from typing import (Any, Callable, Dict, Generic, Iterable, List, Mapping, Optional, Tuple, Type,
                    TypeVar, Union)

from . import errors
from .types import (ArchiveResult, AuditPage, EgressPolicy, EgressRule, ExecResult, FileInfo, Key, ProbeResult,
                    ProcessInfo, ProcessOutput, SandboxInfo, Template, format_time, rule_of)

T = TypeVar("T")

# Seconds added to an exec's own timeout for the HTTP read timeout: the
# server enforces the exec timeout and needs a moment to answer after it.
TIMEOUT_MARGIN = 30.0

DEFAULT_TIMEOUT: Any = "default"  # the client's own timeout

JSON = "json"  # the answer is one JSON object (or 204), given to decode
NDJSON = "ndjson"  # the answer is a stream of JSON lines (exec/stream)
RAW = "raw"  # the answer is bytes, copied to a file object (file download)


def _none(_: Any) -> None:
    return None


@dataclass
class Call(Generic[T]):
    """One API request and how its answer becomes a T."""

    method: str
    path: str
    query: Optional[Dict[str, Any]] = None
    json_body: Any = None
    body: Any = None  # bytes, or a binary file object (streamed, never sent twice)
    length: Optional[int] = None  # of a file-object body, when known
    timeout: Any = DEFAULT_TIMEOUT  # seconds; None = no timeout
    kind: str = JSON
    decode: Callable[[Any], T] = _none  # type: ignore[assignment]
    # Errors that mean the call's goal holds already: decode(None) instead.
    ignore: Tuple[Type[errors.AirlockError], ...] = ()

    @property
    def replayable(self) -> bool:
        """Whether the request can be sent again (no streamed body)."""
        return self.body is None or isinstance(self.body, (bytes, bytearray, memoryview))


def _q(s: str) -> str:
    return urllib.parse.quote(s, safe="")


def sandbox_path(sandbox_id: str, suffix: str = "") -> str:
    return "/v1/sandboxes/" + _q(sandbox_id) + suffix


def _info(d: Any) -> SandboxInfo:
    return SandboxInfo.from_json(d)


def _infos(d: Any) -> List[SandboxInfo]:
    return [SandboxInfo.from_json(i) for i in (d or {}).get("sandboxes") or []]


EgressLike = Union[EgressPolicy, Mapping[str, Any]]
RuleLike = Union[EgressRule, Mapping[str, Any]]

# -- sandboxes ------------------------------------------------------------


def create(template: str, ttl_seconds: Optional[int] = None,
           metadata: Optional[Mapping[str, str]] = None, egress: Optional[EgressLike] = None,
           probe: bool = False) -> Call[SandboxInfo]:
    body: Dict[str, Any] = {"template": template}
    if probe:
        body["probe"] = True
    if ttl_seconds is not None:
        body["ttl_seconds"] = int(ttl_seconds)
    if metadata:
        body["metadata"] = dict(metadata)
    if egress is not None:
        body["egress"] = EgressPolicy.of(egress).to_json()
    return Call("POST", "/v1/sandboxes", json_body=body, decode=_info)


def get(sandbox_id: str) -> Call[SandboxInfo]:
    return Call("GET", sandbox_path(sandbox_id), decode=_info)


def list_sandboxes(metadata: Optional[Mapping[str, str]] = None, all: bool = False,
                   state: Optional[str] = None) -> Call[List[SandboxInfo]]:
    query: Dict[str, Any] = {"metadata." + k: v for k, v in (metadata or {}).items()}
    if state:
        query["state"] = state
    elif all:
        query["state"] = "all"
    return Call("GET", "/v1/sandboxes", query=query, decode=_infos)


def kill(sandbox_id: str) -> Call[None]:
    # Killing one that has already ended or is gone is not an error.
    return Call("DELETE", sandbox_path(sandbox_id),
                ignore=(errors.NotFoundError, errors.FailedPreconditionError))


def fork(sandbox_id: str, count: int = 1) -> Call[List[SandboxInfo]]:
    return Call("POST", sandbox_path(sandbox_id, "/fork"), json_body={"count": int(count)}, decode=_infos)


def set_ttl(sandbox_id: str, ttl_seconds: int) -> Call[SandboxInfo]:
    return Call("PUT", sandbox_path(sandbox_id, "/ttl"), json_body={"ttl_seconds": int(ttl_seconds)},
                decode=_info)


def set_egress(sandbox_id: str, default: str = "deny", allow: Optional[Iterable[RuleLike]] = None,
               tls: Optional[str] = None) -> Call[SandboxInfo]:
    policy = EgressPolicy(default=default, allow=[rule_of(r) for r in allow or []], tls=tls or "")
    return Call("PUT", sandbox_path(sandbox_id, "/egress"), json_body=policy.to_json(), decode=_info)


def _probes(d: Any) -> List[ProbeResult]:
    return [ProbeResult.from_json(p) for p in (d or {}).get("probes") or []]


def probe(sandbox_id: str) -> Call[List[ProbeResult]]:
    return Call("POST", sandbox_path(sandbox_id, "/probe"), decode=_probes)


def pause(sandbox_id: str) -> Call[SandboxInfo]:
    """Save the running sandbox to disk and end its VMM; its TTL counts on."""
    return Call("POST", sandbox_path(sandbox_id, "/pause"), timeout=None, decode=_info)


def resume(sandbox_id: str) -> Call[SandboxInfo]:
    """Restore a paused sandbox under its id."""
    return Call("POST", sandbox_path(sandbox_id, "/resume"), timeout=None, decode=_info)


# -- exec -----------------------------------------------------------------

Cmd = Union[str, List[str]]
Stdin = Union[None, str, bytes]
# A terminal for a command: True (24 x 80), (rows, cols), or
# {"rows": r, "cols": c}; None or False: pipes.
PtyLike = Union[None, bool, Tuple[int, int], Mapping[str, int]]

DEFAULT_PTY = (24, 80)


def pty_size(pty: PtyLike) -> Optional[Dict[str, int]]:
    """The API's window size for pty, None for none; a bad one raises
    InvalidArgumentError here, before anything is sent."""
    if pty is None or pty is False:
        return None
    if pty is True:
        rows, cols = DEFAULT_PTY
    elif isinstance(pty, Mapping):
        rows, cols = pty.get("rows", 0), pty.get("cols", 0)
    else:
        try:
            rows, cols = pty  # type: ignore[misc]
        except (TypeError, ValueError):
            raise errors.InvalidArgumentError("pty %r: want True, (rows, cols) or {'rows': r, 'cols': c}" % (pty,),
                                              status=0) from None
    if not (isinstance(rows, int) and isinstance(cols, int) and 1 <= rows <= 1000 and 1 <= cols <= 1000):
        raise errors.InvalidArgumentError("pty size %r x %r: want 1..1000 each" % (rows, cols), status=0)
    return {"rows": rows, "cols": cols}


class TextDecoder:
    """Turns the byte chunks of output streams into text as they arrive:
    a UTF-8 character split between two chunks is held back until it is
    whole, and invalid bytes become U+FFFD. One decoder per stream name."""

    def __init__(self) -> None:
        self._decoders: Dict[str, Any] = {}

    def __call__(self, stream: str, data: bytes, final: bool = False) -> str:
        dec = self._decoders.get(stream)
        if dec is None:
            dec = self._decoders[stream] = codecs.getincrementaldecoder("utf-8")(errors="replace")
        return dec.decode(data, final)


def exec_timeout(timeout_seconds: Optional[float]) -> Optional[float]:
    """The HTTP read timeout of an exec: its own plus a margin, or none
    (bounded by the sandbox TTL on the server)."""
    if timeout_seconds is None:
        return None
    return float(timeout_seconds) + TIMEOUT_MARGIN


def _stdin_fields(stdin: Stdin) -> Dict[str, str]:
    if stdin is None:
        return {}
    if isinstance(stdin, str):
        return {"stdin": stdin}
    try:
        return {"stdin": bytes(stdin).decode("utf-8")}
    except UnicodeDecodeError:
        return {"stdin_base64": base64.b64encode(bytes(stdin)).decode("ascii")}


def exec_body(cmd: Cmd, timeout_seconds: Optional[float], env: Optional[Mapping[str, str]],
              cwd: Optional[str], stdin: Stdin, max_output_bytes: Optional[int],
              user: Optional[str] = None, pty: PtyLike = None) -> Dict[str, Any]:
    body: Dict[str, Any] = {}
    if user:
        body["user"] = str(user)
    size = pty_size(pty)
    if size is not None:
        body["pty"] = size
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
        body["max_output_bytes"] = int(max_output_bytes)
    body.update(_stdin_fields(stdin))
    return body


def exec_(sandbox_id: str, cmd: Cmd, timeout_seconds: Optional[float] = None,
          env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None, stdin: Stdin = None,
          max_output_bytes: Optional[int] = None, user: Optional[str] = None,
          pty: PtyLike = None) -> Call[ExecResult]:
    return Call("POST", sandbox_path(sandbox_id, "/exec"),
                json_body=exec_body(cmd, timeout_seconds, env, cwd, stdin, max_output_bytes, user, pty),
                timeout=exec_timeout(timeout_seconds), decode=ExecResult.from_json)


def exec_stream(sandbox_id: str, cmd: Cmd, timeout_seconds: Optional[float] = None,
                env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
                stdin: Stdin = None, user: Optional[str] = None, pty: PtyLike = None) -> Call[None]:
    """The stream's lines go through stream_event one by one."""
    return Call("POST", sandbox_path(sandbox_id, "/exec/stream"),
                json_body=exec_body(cmd, timeout_seconds, env, cwd, stdin, None, user, pty),
                timeout=exec_timeout(timeout_seconds), kind=NDJSON)


def stream_event(ev: Mapping[str, Any]) -> Tuple[str, bytes, Optional[ExecResult]]:
    """One line of an exec stream: ("stdout"|"stderr", chunk, None), or
    ("exit", b"", result) for the last line; an "error" line raises its
    error, and lines of types this SDK does not know are ("", b"", None)."""
    t = ev.get("type")
    if t in ("stdout", "stderr"):
        return str(t), base64.b64decode(str(ev.get("data") or "").encode("ascii")), None
    if t == "exit":
        return "exit", b"", ExecResult.from_json(ev)
    if t == "error":
        err = ev.get("error") or {}
        raise errors.error_for(err.get("code"), err.get("message", "exec failed"), 200)
    return "", b"", None


def stream_ended() -> errors.AirlockError:
    """The error for a stream that ended without its exit line."""
    return errors.UnavailableError("exec stream ended without an exit status", status=200)


# -- background processes -------------------------------------------------

# The longest wait asked of the server in one request: Process.wait waits
# longer (or without end) in steps of this.
MAX_WAIT_STEP = 60.0

# How long one read of a followed stream waits for more (the API allows 60).
FOLLOW_WAIT = 30.0


def _process_path(sandbox_id: str, pid: str, suffix: str = "") -> str:
    return sandbox_path(sandbox_id, "/processes/" + _q(pid) + suffix)


def _process(d: Any) -> ProcessInfo:
    return ProcessInfo.from_json(d)


def _processes(d: Any) -> List[ProcessInfo]:
    return [ProcessInfo.from_json(p) for p in (d or {}).get("processes") or []]


def _seconds(name: str, v: float) -> str:
    """A duration for a query parameter; a negative one is refused here."""
    f = float(v)
    if f < 0:
        raise errors.InvalidArgumentError("%s %r: want 0 or more seconds" % (name, v), status=0)
    return "%.3f" % f


def start_process(sandbox_id: str, cmd: Cmd, timeout_seconds: Optional[float] = None,
                  env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
                  stdin: Stdin = None, stdin_open: bool = False, user: Optional[str] = None,
                  pty: PtyLike = None) -> Call[ProcessInfo]:
    body = exec_body(cmd, timeout_seconds, env, cwd, stdin, None, user, pty)
    if stdin_open:
        body["stdin_open"] = True
    return Call("POST", sandbox_path(sandbox_id, "/processes"), json_body=body, decode=_process)


# The most bytes one stdin write may carry: the API takes 1 MiB of JSON a
# request, and base64 makes bytes a third longer.
MAX_STDIN_CHUNK = 512 << 10


def process_stdin(sandbox_id: str, pid: str, data: Union[str, bytes] = b"",
                  close: bool = False) -> Call[ProcessInfo]:
    """Append data (at most MAX_STDIN_CHUNK bytes) to the process's stdin,
    then close it with close."""
    body: Dict[str, Any] = {}
    if data:
        fields = _stdin_fields(data)
        if "stdin" in fields:
            body["data"] = fields["stdin"]
        else:
            body["data_base64"] = fields["stdin_base64"]
    if close:
        body["close"] = True
    return Call("POST", _process_path(sandbox_id, pid, "/stdin"), json_body=body,
                timeout=TIMEOUT_MARGIN + 30, decode=_process)


def stdin_chunks(data: Union[str, bytes]) -> List[bytes]:
    """data in pieces one stdin write each may carry (at least one piece)."""
    b = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    return [b[i:i + MAX_STDIN_CHUNK] for i in range(0, len(b), MAX_STDIN_CHUNK)] or [b""]


def resize_process(sandbox_id: str, pid: str, rows: int, cols: int) -> Call[ProcessInfo]:
    size = pty_size((rows, cols))
    return Call("POST", _process_path(sandbox_id, pid, "/resize"), json_body=size, decode=_process)


def list_processes(sandbox_id: str) -> Call[List[ProcessInfo]]:
    return Call("GET", sandbox_path(sandbox_id, "/processes"), decode=_processes)


def get_process(sandbox_id: str, pid: str) -> Call[ProcessInfo]:
    return Call("GET", _process_path(sandbox_id, pid), decode=_process)


def wait_process(sandbox_id: str, pid: str, timeout_seconds: float) -> Call[ProcessInfo]:
    """One server wait: the process once ended, or DeadlineExceededError
    (504) while it still runs after timeout_seconds (at most 3600)."""
    return Call("POST", _process_path(sandbox_id, pid, "/wait"),
                query={"timeout_seconds": _seconds("timeout_seconds", timeout_seconds)},
                timeout=float(timeout_seconds) + TIMEOUT_MARGIN, decode=_process)


def kill_process(sandbox_id: str, pid: str, signal: str = "KILL") -> Call[ProcessInfo]:
    return Call("DELETE", _process_path(sandbox_id, pid), query={"signal": signal or "KILL"},
                decode=_process)


def process_output(sandbox_id: str, pid: str, stream: str = "stdout", offset: int = 0,
                   wait_seconds: float = 0, max_bytes: Optional[int] = None) -> Call[ProcessOutput]:
    query: Dict[str, Any] = {"stream": stream, "offset": int(offset), "max_bytes": max_bytes}
    if wait_seconds:
        query["wait_seconds"] = _seconds("wait_seconds", wait_seconds)
    return Call("GET", _process_path(sandbox_id, pid, "/output"), query=query,
                timeout=float(wait_seconds or 0) + TIMEOUT_MARGIN, decode=ProcessOutput.from_json)


class WaitClock:
    """The server waits of one Process.wait: at most MAX_WAIT_STEP each,
    until timeout_seconds have passed (None: until the process ends)."""

    def __init__(self, timeout_seconds: Optional[float]):
        if timeout_seconds is not None:
            _seconds("timeout_seconds", timeout_seconds)
        self.deadline = None if timeout_seconds is None else time.monotonic() + float(timeout_seconds)

    def step(self) -> float:
        """How long the next server wait may be."""
        if self.deadline is None:
            return MAX_WAIT_STEP
        return min(MAX_WAIT_STEP, max(self.deadline - time.monotonic(), 0.0))

    def again(self, err: errors.AirlockError) -> bool:
        """Whether to wait on after err: the server said the process still
        runs (504) and time is left. Anything else is raised."""
        if not (isinstance(err, errors.DeadlineExceededError) and err.status == 504):
            return False
        return self.deadline is None or time.monotonic() < self.deadline


# -- files ----------------------------------------------------------------

FileData = Any  # bytes, bytearray, str (UTF-8) or a binary file object


def _remaining(f: Any) -> Optional[int]:
    """Bytes left in a regular file, or None when unknown (sent chunked)."""
    try:
        st = os.fstat(f.fileno())
        pos = f.tell()
    except (AttributeError, OSError, ValueError):
        return None
    if not _stat.S_ISREG(st.st_mode):
        return None
    return max(int(st.st_size - pos), 0)


def _written(d: Any) -> int:
    return int(d["bytes"])


def write_file(sandbox_id: str, path: str, data: FileData, mode: Optional[int] = None) -> Call[int]:
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
    return Call("PUT", sandbox_path(sandbox_id, "/files"), query=query, body=data, length=length,
                timeout=None, decode=_written)


def read_file(sandbox_id: str, path: str) -> Call[None]:
    return Call("GET", sandbox_path(sandbox_id, "/files"), query={"path": path}, timeout=None, kind=RAW)


def stat(sandbox_id: str, path: str) -> Call[FileInfo]:
    return Call("GET", sandbox_path(sandbox_id, "/files/stat"), query={"path": path},
                decode=FileInfo.from_json)


def exists(sandbox_id: str, path: str) -> Call[bool]:
    """Whether path exists in the guest (a dangling symlink does: it is
    described, not followed)."""
    return Call("GET", sandbox_path(sandbox_id, "/files/stat"), query={"path": path},
                decode=lambda d: d is not None, ignore=(errors.NotFoundError,))


def text_of(data: bytes, format: str) -> Union[bytes, str]:
    """A file's content as read() returns it: bytes, or with format="text"
    UTF-8 text (invalid bytes raise UnicodeDecodeError: the file is not text)."""
    if format == "bytes":
        return data
    if format == "text":
        return data.decode("utf-8")
    raise errors.InvalidArgumentError("format %r: want 'bytes' or 'text'" % (format,), status=0)


def _entries(d: Any) -> List[FileInfo]:
    return [FileInfo.from_json(e) for e in (d or {}).get("entries") or []]


def list_files(sandbox_id: str, path: str) -> Call[List[FileInfo]]:
    return Call("GET", sandbox_path(sandbox_id, "/files/list"), query={"path": path}, decode=_entries)


def remove(sandbox_id: str, path: str, recursive: bool = False) -> Call[None]:
    query = {"path": path}
    if recursive:
        query["recursive"] = "true"
    return Call("DELETE", sandbox_path(sandbox_id, "/files"), query=query)


def write_archive(sandbox_id: str, path: str, data: Any) -> Call[ArchiveResult]:
    """A tar stream (bytes or a binary file object, streamed) unpacked
    into directory path in the guest."""
    length = None
    if not isinstance(data, (bytes, bytearray, memoryview)):
        if not hasattr(data, "read"):
            raise TypeError("write_archive() takes bytes or a binary file-like object")
        length = _remaining(data)
    return Call("PUT", sandbox_path(sandbox_id, "/archive"), query={"path": path}, body=data, length=length,
                timeout=None, decode=ArchiveResult.from_json)


def read_archive(sandbox_id: str, path: str) -> Call[None]:
    """path (a directory or a file) as a tar stream, entries named from
    its base name."""
    return Call("GET", sandbox_path(sandbox_id, "/archive"), query={"path": path}, timeout=None, kind=RAW)


def make_dir(sandbox_id: str, path: str) -> Call[None]:
    return Call("POST", sandbox_path(sandbox_id, "/files/mkdir"), query={"path": path})


# -- templates and audit --------------------------------------------------


def _templates(d: Any) -> List[Template]:
    return [Template.from_json(t) for t in (d or {}).get("templates") or []]


def templates() -> Call[List[Template]]:
    return Call("GET", "/v1/templates", decode=_templates)


def template(name: str) -> Call[Template]:
    return Call("GET", "/v1/templates/" + _q(name), decode=Template.from_json)


TimeLike = Union[datetime, str]

# The most records one audit page may hold (the API's maximum limit).
MAX_AUDIT_PAGE = 10000


def audit_page(sandbox: Optional[str] = None, metadata: Optional[Mapping[str, str]] = None,
               since: Optional[TimeLike] = None, until: Optional[TimeLike] = None,
               event: Optional[Iterable[str]] = None, limit: Optional[int] = None,
               after_seq: Optional[int] = None) -> Call[AuditPage]:
    query: Dict[str, Any] = {"metadata." + k: v for k, v in (metadata or {}).items()}
    query.update({"sandbox": sandbox, "limit": limit, "after_seq": after_seq or None,
                  "since": format_time(since) if since is not None else None,
                  "until": format_time(until) if until is not None else None})
    if event:
        query["event"] = list(event)
    return Call("GET", "/v1/audit", query=query, decode=AuditPage.from_json)


def _keys(d: Any) -> List[Key]:
    return [Key.from_json(k) for k in (d or {}).get("keys") or []]


def keys() -> Call[List[Key]]:
    return Call("GET", "/v1/keys", decode=_keys)


def health() -> Call[Dict[str, Any]]:
    return Call("GET", "/healthz", decode=lambda d: dict(d or {}))
