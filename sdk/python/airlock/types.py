"""Typed results: one dataclass per JSON shape of the API.

Attribute names are the API's JSON field names (internal/api/wire.go,
internal/api/openapi.json); timestamps are timezone-aware ``datetime``s.
Each class has ``from_json`` (tolerant of fields a newer daemon adds) and
``to_json``. For code written against the dict results of 0.1, a record
also reads like a mapping by field name (``rec["event"]``, ``rec.get``).
"""

from __future__ import annotations

import base64
import dataclasses
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Optional, Tuple, Type, TypeVar, Union

R = TypeVar("R", bound="_Record")

_TIME_RE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def parse_time(s: Optional[str]) -> Optional[datetime]:
    """An RFC 3339 time as Go writes it (nanoseconds, "Z") as a datetime;
    None for None or ""."""
    if not s:
        return None
    m = _TIME_RE.match(s)
    if not m:
        raise ValueError("not an RFC 3339 time: %r" % s)
    frac = (m.group(2) or "")[1:7].ljust(6, "0") if m.group(2) else "000000"
    zone = "+00:00" if m.group(3) == "Z" else m.group(3)
    return datetime.fromisoformat("%s.%s%s" % (m.group(1), frac, zone))


def format_time(t: Union[datetime, str]) -> str:
    """A datetime (naive means UTC) as RFC 3339; a string is passed as is."""
    if isinstance(t, str):
        return t
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.isoformat().replace("+00:00", "Z")


def _time_json(t: Optional[datetime]) -> Optional[str]:
    return None if t is None else format_time(t)


class _Record:
    """Mapping-style reads by JSON field name, for 0.1 code that got dicts."""

    def __getitem__(self, key: str) -> Any:
        if key not in _field_names(type(self)):
            raise KeyError(key)
        return getattr(self, key)

    def __contains__(self, key: object) -> bool:
        return key in _field_names(type(self))

    def get(self, key: str, default: Any = None) -> Any:
        v = getattr(self, key, None) if key in _field_names(type(self)) else None
        return default if v is None else v

    def keys(self) -> List[str]:
        return list(_field_names(type(self)))

    def to_json(self) -> Dict[str, Any]:
        """The JSON object this record came from (empty optional fields omitted)."""
        raise NotImplementedError


def _field_names(cls: type) -> List[str]:
    return [f.name for f in dataclasses.fields(cls) if not f.name.endswith("_raw")]


def _plain(cls: Type[R], d: Mapping[str, Any]) -> Dict[str, Any]:
    """The entries of d that are fields of cls (newer daemons may add more)."""
    names = set(_field_names(cls))
    return {k: v for k, v in (d or {}).items() if k in names and v is not None}


@dataclass
class EgressRule(_Record):
    """One allow rule: a CIDR (with ports and protocol) or a domain (exact,
    or a leading ``*.``). ``credential=True`` requires the domain to be one
    of the tenant's credential routes (refused otherwise, never opened as a
    plain domain)."""

    name: str
    cidr: str = ""
    ports: List[int] = field(default_factory=list)
    protocol: str = ""  # tcp, udp, icmp, any
    domain: str = ""
    credential: bool = False

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "EgressRule":
        kw = _plain(cls, d)
        kw["ports"] = [int(p) for p in kw.get("ports") or []]
        return cls(**kw)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"name": self.name}
        for k in ("cidr", "ports", "protocol", "domain", "credential"):
            v = getattr(self, k)
            if v:
                out[k] = list(v) if k == "ports" else v
        return out


@dataclass
class EgressPolicy(_Record):
    """A sandbox's egress policy: deny (or allow) by default, allow rules,
    and the TLS mode of domain rules ("", "passthrough" or "inspect")."""

    default: str = "deny"
    allow: List[EgressRule] = field(default_factory=list)
    tls: str = ""

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> "EgressPolicy":
        d = d or {}
        return cls(default=d.get("default") or "deny",
                   allow=[EgressRule.from_json(r) for r in d.get("allow") or []],
                   tls=d.get("tls") or "")

    @classmethod
    def of(cls, policy: Union["EgressPolicy", Mapping[str, Any]]) -> "EgressPolicy":
        """A policy given as an EgressPolicy or as its JSON dict."""
        return policy if isinstance(policy, EgressPolicy) else cls.from_json(policy)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"default": self.default, "allow": [r.to_json() for r in self.allow]}
        if self.tls:
            out["tls"] = self.tls
        return out


def rule_of(r: Union[EgressRule, Mapping[str, Any]]) -> EgressRule:
    """A rule given as an EgressRule or as its JSON dict."""
    return r if isinstance(r, EgressRule) else EgressRule.from_json(r)


@dataclass
class SandboxInfo(_Record):
    """A sandbox's externally visible state (the API's Sandbox object)."""

    id: str
    tenant: str = ""
    template: str = ""
    parent_id: str = ""  # set for forks
    metadata: Dict[str, str] = field(default_factory=dict)
    state: str = ""  # running, paused, killed, expired, failed; lost in a cluster
    created_at: Optional[datetime] = None
    deadline: Optional[datetime] = None  # ended by the reaper at this time
    ended_at: Optional[datetime] = None
    egress: EgressPolicy = field(default_factory=EgressPolicy)
    net_addr: str = ""
    jailed: bool = False
    # The cluster node that runs it: set by a cluster's API, "" on one host.
    node: str = ""
    # Host CPU and memory of a running sandbox: set by get and refresh,
    # None after create, in lists and once it has ended.
    usage: Optional["Usage"] = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "SandboxInfo":
        kw = _plain(cls, d)
        for k in ("created_at", "deadline", "ended_at"):
            kw[k] = parse_time(kw.get(k))
        kw["metadata"] = {str(k): str(v) for k, v in (kw.get("metadata") or {}).items()}
        kw["egress"] = EgressPolicy.from_json(kw.get("egress"))
        if kw.get("usage") is not None:
            kw["usage"] = Usage.from_json(kw["usage"])
        return cls(**kw)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"id": self.id, "tenant": self.tenant, "template": self.template,
                               "metadata": dict(self.metadata), "state": self.state,
                               "created_at": _time_json(self.created_at),
                               "deadline": _time_json(self.deadline),
                               "egress": self.egress.to_json(), "jailed": self.jailed}
        for k in ("parent_id", "net_addr", "node"):
            if getattr(self, k):
                out[k] = getattr(self, k)
        if self.ended_at is not None:
            out["ended_at"] = _time_json(self.ended_at)
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        return out


@dataclass
class Usage(_Record):
    """What a running sandbox's VMM uses on the host, when it was read."""

    cpu_seconds: float = 0.0  # CPU time since the VMM started
    memory_pss_bytes: int = 0  # shared pages divided among their sharers
    memory_rss_bytes: int = 0  # every resident page in full
    memory_private_bytes: int = 0  # what killing the sandbox gives back
    measured_at: Optional[datetime] = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Usage":
        kw = _plain(cls, d)
        kw["cpu_seconds"] = float(kw.get("cpu_seconds") or 0)
        kw["measured_at"] = parse_time(kw.get("measured_at"))
        return cls(**kw)

    def to_json(self) -> Dict[str, Any]:
        out = {f: getattr(self, f) for f in _field_names(type(self))}
        out["measured_at"] = _time_json(self.measured_at)
        return out


@dataclass
class ArchiveResult(_Record):
    """What an uploaded tar stream wrote: entries (directories, files,
    links) and bytes of regular files."""

    entries: int = 0
    bytes: int = 0

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ArchiveResult":
        return cls(**_plain(cls, d))

    def to_json(self) -> Dict[str, Any]:
        return {f: getattr(self, f) for f in _field_names(type(self))}


def _b64(s: Optional[str]) -> bytes:
    return base64.b64decode(s.encode("ascii")) if s else b""


@dataclass
class ExecResult(_Record):
    """How a process ended and what it printed.

    ``stdout``/``stderr`` are text (invalid UTF-8 replaced by U+FFFD);
    ``stdout_raw``/``stderr_raw`` the exact bytes (the API sends output
    that is not UTF-8 base64-encoded as well). ``stdout_bytes`` and
    ``stderr_bytes`` count what the process wrote, dropped bytes included.
    After ``exec_stream`` the text and raw fields are empty.
    """

    exit_code: int = 0  # 128+n when killed by signal n
    signal: str = ""
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    duration_ms: int = 0
    stdout: str = ""
    stderr: str = ""
    stdout_raw: bytes = field(default=b"", repr=False)
    stderr_raw: bytes = field(default=b"", repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ExecResult":
        kw = _plain(cls, d)
        for s in ("stdout", "stderr"):
            raw = d.get(s + "_base64")
            if raw:
                kw[s + "_raw"] = _b64(raw)
                kw[s] = kw[s + "_raw"].decode("utf-8", errors="replace")
            else:
                kw[s + "_raw"] = (kw.get(s) or "").encode("utf-8")
        return cls(**kw)

    @property
    def ok(self) -> bool:
        """Exit code 0 and not timed out."""
        return self.exit_code == 0 and not self.timed_out

    def to_json(self) -> Dict[str, Any]:
        out = {f: getattr(self, f) for f in _field_names(type(self))}
        for s in ("stdout", "stderr"):
            raw = getattr(self, s + "_raw")
            if raw != getattr(self, s).encode("utf-8"):
                out[s + "_base64"] = base64.b64encode(raw).decode("ascii")
        if not self.signal:
            del out["signal"]
        return out

    def __repr__(self) -> str:
        return "ExecResult(exit_code=%d, timed_out=%s, stdout=%d chars, stderr=%d chars)" % (
            self.exit_code, self.timed_out, len(self.stdout), len(self.stderr))


@dataclass
class FileInfo(_Record):
    """One guest path, as stat and list describe it."""

    path: str = ""
    name: str = ""
    size: int = 0
    mode: int = 0  # Go fs.FileMode bits
    mode_string: str = ""  # e.g. "-rw-r--r--"
    is_dir: bool = False
    mod_time: Optional[datetime] = None
    symlink_target: str = ""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "FileInfo":
        kw = _plain(cls, d)
        kw["mod_time"] = parse_time(kw.get("mod_time"))
        return cls(**kw)

    def to_json(self) -> Dict[str, Any]:
        out = {f: getattr(self, f) for f in _field_names(type(self))}
        out["mod_time"] = _time_json(self.mod_time)
        if not self.symlink_target:
            del out["symlink_target"]
        return out


@dataclass
class Template(_Record):
    """A baked template sandboxes can be created from."""

    name: str
    hash: str = ""  # content hash of the spec and its inputs
    memory_mib: int = 0
    vcpus: int = 0
    default_ttl_seconds: int = 0
    built_at: Optional[datetime] = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Template":
        kw = _plain(cls, d)
        kw["built_at"] = parse_time(kw.get("built_at"))
        return cls(**kw)

    def to_json(self) -> Dict[str, Any]:
        out = {f: getattr(self, f) for f in _field_names(type(self))}
        out["built_at"] = _time_json(self.built_at)
        return out


@dataclass
class AuditRecord(_Record):
    """One record of the hash-chained audit log: ids, metadata, outcomes,
    sizes and durations, never document content."""

    seq: int
    time: Optional[datetime] = None
    tenant: str = ""
    sandbox_id: str = ""
    parent_id: str = ""
    template: str = ""
    event: str = ""
    metadata: Dict[str, str] = field(default_factory=dict)
    exit_code: Optional[int] = None
    bytes: int = 0
    duration_ms: int = 0
    outcome: str = ""
    detail: Dict[str, str] = field(default_factory=dict)
    prev_hash: str = ""
    hash: str = ""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "AuditRecord":
        kw = _plain(cls, d)
        kw["time"] = parse_time(kw.get("time"))
        return cls(**kw)

    def to_json(self) -> Dict[str, Any]:
        out = {f: getattr(self, f) for f in _field_names(type(self))}
        out["time"] = _time_json(self.time)
        for k in ("tenant", "sandbox_id", "parent_id", "template", "metadata", "exit_code", "detail"):
            if out[k] in (None, "", {}):
                del out[k]
        return out


@dataclass
class AuditPage(_Record):
    """One page of audit records, oldest first. ``next_after_seq`` is set
    (non-zero) when the page is full: pass it as ``after_seq`` for the
    next page."""

    records: List[AuditRecord] = field(default_factory=list)
    next_after_seq: int = 0

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> "AuditPage":
        d = d or {}
        return cls(records=[AuditRecord.from_json(r) for r in d.get("records") or []],
                   next_after_seq=int(d.get("next_after_seq") or 0))

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"records": [r.to_json() for r in self.records]}
        if self.next_after_seq:
            out["next_after_seq"] = self.next_after_seq
        return out


@dataclass
class ProbeResult(_Record):
    """One egress self-check: ``name`` is stable (tcp-gateway, tcp-host,
    tcp-public, tcp-metadata, dns-denied); ``reachable`` means traffic got
    through, so the check failed."""

    name: str
    target: str = ""
    reachable: bool = False
    detail: str = ""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ProbeResult":
        return cls(**_plain(cls, d))

    def to_json(self) -> Dict[str, Any]:
        out = {f: getattr(self, f) for f in _field_names(type(self))}
        if not self.detail:
            del out["detail"]
        return out


@dataclass
class ProcessInfo(_Record):
    """A background process as the server last reported it (the API's
    Process object). ``exit_code`` is None while it runs and when it
    failed (the sandbox ended under it: see ``error``)."""

    id: str  # "p-1", "p-2", ... per sandbox
    sandbox_id: str = ""
    cmd: str = ""  # set when started with a shell command
    argv: List[str] = field(default_factory=list)  # set when started with an argv
    cwd: str = ""
    timeout_seconds: float = 0.0  # 0: none
    state: str = ""  # running, exited, killed, failed
    exit_code: Optional[int] = None  # 128+n when killed by signal n
    signal: str = ""  # e.g. "SIGTERM"
    timed_out: bool = False
    error: str = ""
    stdout_bytes: int = 0  # what arrived so far: the stream's end offset
    stderr_bytes: int = 0
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    started_at: Optional[datetime] = None
    ended_at: Optional[datetime] = None
    user: str = ""  # the guest user it runs as; "" = root
    pty: Optional[Tuple[int, int]] = None  # (rows, cols) of its terminal; None on pipes
    stdin_open: bool = False  # its stdin takes send_stdin now

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ProcessInfo":
        kw = _plain(cls, d)
        kw["argv"] = [str(a) for a in kw.get("argv") or []]
        kw["timeout_seconds"] = float(kw.get("timeout_seconds") or 0)
        for k in ("started_at", "ended_at"):
            kw[k] = parse_time(kw.get(k))
        if kw.get("pty"):
            kw["pty"] = (int(kw["pty"].get("rows", 0)), int(kw["pty"].get("cols", 0)))
        return cls(**kw)

    def to_json(self) -> Dict[str, Any]:
        out = {f: getattr(self, f) for f in _field_names(type(self))}
        for k in ("started_at", "ended_at"):
            out[k] = _time_json(out[k])
        if out["pty"] is not None:
            out["pty"] = {"rows": out["pty"][0], "cols": out["pty"][1]}
        for k in ("cmd", "argv", "timeout_seconds", "signal", "error", "user", "stdin_open"):
            if not out[k]:
                del out[k]
        for k in ("exit_code", "ended_at", "pty"):
            if out[k] is None:
                del out[k]
        return out


@dataclass
class ProcessOutput(_Record):
    """A piece of one output stream of a background process.

    ``data`` holds the stream's bytes from ``offset`` on; read on from
    ``next_offset``. ``dropped`` counts the bytes between the offset asked
    for and ``offset`` that the server no longer keeps (it keeps the
    latest 1 MiB of each stream). ``eof``: the process has ended and
    ``next_offset`` is the stream's end.
    """

    stream: str = "stdout"
    data: bytes = field(default=b"", repr=False)
    offset: int = 0
    next_offset: int = 0
    dropped: int = 0
    eof: bool = False

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ProcessOutput":
        kw = _plain(cls, d)
        kw["data"] = _b64(kw.get("data"))
        return cls(**kw)

    @property
    def text(self) -> str:
        """``data`` as text (invalid UTF-8, also a character cut at the
        piece's edge, replaced by U+FFFD)."""
        return self.data.decode("utf-8", errors="replace")

    def to_json(self) -> Dict[str, Any]:
        out = {f: getattr(self, f) for f in _field_names(type(self))}
        out["data"] = base64.b64encode(self.data).decode("ascii")
        return out

    def __repr__(self) -> str:
        return "ProcessOutput(stream=%r, offset=%d, next_offset=%d, dropped=%d, eof=%s, %d bytes)" % (
            self.stream, self.offset, self.next_offset, self.dropped, self.eof, len(self.data))


@dataclass
class Key(_Record):
    """One of the caller's tenant's API keys: never the key itself."""

    id: str
    tenant: str = ""
    name: str = ""
    prefix: str = ""  # the key's first characters, to tell keys apart
    created_at: Optional[datetime] = None
    revoked_at: Optional[datetime] = None
    current: bool = False  # the key the call was made with

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Key":
        kw = _plain(cls, d)
        for k in ("created_at", "revoked_at"):
            kw[k] = parse_time(kw.get(k))
        return cls(**kw)

    def to_json(self) -> Dict[str, Any]:
        out = {f: getattr(self, f) for f in _field_names(type(self))}
        for k in ("created_at", "revoked_at"):
            out[k] = _time_json(out[k])
        if out["revoked_at"] is None:
            del out["revoked_at"]
        if not self.current:
            del out["current"]
        return out
