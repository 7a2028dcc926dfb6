"""Sandbox: the object users work with (the blocking client).

Each method is a one-line wrapper over a Call from _calls.py; aio.py has
the same surface for asyncio over the same Calls.
"""

from __future__ import annotations

import io
import tempfile
from typing import Any, BinaryIO, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Union

from . import _calls as calls
from . import _tar
from . import errors
from ._calls import Cmd, EgressLike, FileData, PtyLike, RuleLike, Stdin, TimeLike
from ._http import Client
from .process import Processes
from .types import (ArchiveResult, AuditPage, AuditRecord, EgressPolicy, ExecResult, FileInfo, Key, ProbeResult, SandboxInfo,
                    Template, Usage)

_default_client: Optional[Client] = None


def _client(client: Optional[Client]) -> Client:
    """The given client, or one configured from the environment."""
    if client is not None:
        return client
    global _default_client
    if _default_client is None:
        _default_client = Client()
    return _default_client


# Called with each chunk of output: bytes, or str with text=True.
OnChunk = Optional[Callable[[Any], Any]]


class Filesystem:
    """File operations on one sandbox. Paths are absolute and clean."""

    def __init__(self, sbx: "Sandbox"):
        self._sbx = sbx

    def write(self, path: str, data: FileData, mode: Optional[int] = None) -> int:
        """Write bytes, text (UTF-8) or a binary file-like object (streamed,
        never read whole into memory) to ``path``, creating parents.
        Returns the number of bytes written."""
        return self._sbx._client.call(calls.write_file(self._sbx.id, path, data, mode))

    def read(self, path: str, format: str = "bytes") -> Union[bytes, str]:
        """The whole content of ``path``: bytes, or with ``format="text"``
        its UTF-8 text (UnicodeDecodeError if it is not)."""
        buf = io.BytesIO()
        self.read_to(path, buf)
        return calls.text_of(buf.getvalue(), format)

    def read_text(self, path: str) -> str:
        """The whole content of ``path`` as UTF-8 text."""
        return self.read(path, format="text")  # type: ignore[return-value]

    def exists(self, path: str) -> bool:
        """Whether ``path`` exists in the guest (a symlink counts, even a
        dangling one)."""
        return self._sbx._client.call(calls.exists(self._sbx.id, path))

    def read_to(self, path: str, fileobj: BinaryIO) -> int:
        """Stream ``path`` into a writable binary file object; returns bytes copied."""
        return self._sbx._client.download(calls.read_file(self._sbx.id, path), fileobj)

    def stat(self, path: str) -> FileInfo:
        return self._sbx._client.call(calls.stat(self._sbx.id, path))

    def list(self, path: str) -> List[FileInfo]:
        """The entries of directory ``path``, by name."""
        return self._sbx._client.call(calls.list_files(self._sbx.id, path))

    def remove(self, path: str, recursive: bool = False) -> None:
        self._sbx._client.call(calls.remove(self._sbx.id, path, recursive))

    def make_dir(self, path: str) -> None:
        """Create a directory and its missing parents."""
        self._sbx._client.call(calls.make_dir(self._sbx.id, path))

    mkdir = make_dir

    def write_archive(self, path: str, data: Any) -> ArchiveResult:
        """Unpack a tar stream (bytes or a binary file object, streamed) into
        directory ``path`` in the guest, created if missing. The guest
        refuses entries that escape it, links out, device nodes and FIFOs
        (InvalidArgumentError) and too much (ResourceExhaustedError)."""
        return self._sbx._client.call(calls.write_archive(self._sbx.id, path, data))

    def read_archive(self, path: str, fileobj: BinaryIO) -> int:
        """Stream ``path`` (a directory or a file) as a tar stream into
        fileobj, entries named from its base name; returns bytes copied."""
        return self._sbx._client.download(calls.read_archive(self._sbx.id, path), fileobj)

    def upload_dir(self, local_dir: str, remote_dir: str) -> ArchiveResult:
        """Copy the contents of local_dir into remote_dir (one tar stream,
        built here in a temporary file; symlinks are sent as links)."""
        with tempfile.TemporaryFile() as tmp:
            _tar.pack_dir(local_dir, tmp)
            tmp.seek(0)
            return self.write_archive(remote_dir, tmp)

    def download_dir(self, remote_path: str, local_dir: str) -> ArchiveResult:
        """Copy the contents of directory remote_path (or the file) into
        local_dir, created if missing, confined as the guest confines
        uploads (see airlock._tar); returns the entries and bytes written."""
        with tempfile.TemporaryFile() as tmp:
            self.read_archive(remote_path, _tar.LimitedWriter(tmp, _tar.MAX_DOWNLOAD_BYTES))
            tmp.seek(0)
            entries, n = _tar.extract_dir(tmp, local_dir)
            return ArchiveResult(entries=entries, bytes=n)


class Network:
    """Egress control for one sandbox."""

    def __init__(self, sbx: "Sandbox"):
        self._sbx = sbx

    def set_egress(self, default: str = "deny", allow: Optional[Iterable[RuleLike]] = None,
                   tls: Optional[str] = None) -> None:
        """Replace the egress policy. ``allow`` entries are EgressRules or
        dicts such as {"name": "dms", "cidr": "10.250.0.2/32", "ports": [8080],
        "protocol": "tcp"} or {"name": "llm", "domain": "api.example.com"}.
        ``tls="inspect"`` makes the egress proxy terminate TLS to domain
        rules with a per-sandbox CA the guest trusts and refuse requests for
        any host but the TLS server name (no domain fronting); the default,
        "passthrough", only checks the server name. Connections the new
        policy no longer allows are closed, on both sides of the proxy,
        before this returns."""
        self._sbx._update(self._sbx._client.call(calls.set_egress(self._sbx.id, default, allow, tls)))

    @property
    def egress(self) -> EgressPolicy:
        """The policy as last reported by the server."""
        return self._sbx.info.egress

    def probe(self) -> List[ProbeResult]:
        """Run the egress self-check inside the sandbox (TCP to the gateway,
        the host, a public address and cloud metadata; DNS for a name no
        policy allows). Returns the per-probe results when all were blocked;
        raises FailedPreconditionError naming the probes that got out."""
        return self._sbx._client.call(calls.probe(self._sbx.id))


class _SandboxState:
    """What Sandbox and AsyncSandbox share: the last state the server
    reported (``info``) and read-only views of it."""

    info: SandboxInfo

    def _update(self, info: SandboxInfo) -> None:
        self.info = info

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def template(self) -> str:
        return self.info.template

    @property
    def state(self) -> str:
        """running, killed, expired or failed, as last reported."""
        return self.info.state

    @property
    def metadata(self) -> Dict[str, str]:
        return self.info.metadata

    @property
    def parent_id(self) -> str:
        return self.info.parent_id

    @property
    def node(self) -> str:
        """The cluster node that runs this sandbox ("" on a single host)."""
        return self.info.node

    @property
    def jailed(self) -> bool:
        """Whether this sandbox's VMM runs in a jail of its own (False only
        where the daemon was started with --jail=off)."""
        return self.info.jailed

    @property
    def usage(self) -> Optional[Usage]:
        """Host CPU and memory as of the last get or refresh of the running
        sandbox; None after create, in lists and once ended."""
        return self.info.usage

    def __repr__(self) -> str:
        return "%s(id=%r, template=%r, state=%r)" % (type(self).__name__, self.id, self.template, self.state)


def _info_of(info: Any) -> SandboxInfo:
    return info if isinstance(info, SandboxInfo) else SandboxInfo.from_json(info)


class Sandbox(_SandboxState):
    """A throwaway microVM. Create one with ``Sandbox.create(...)``.

    Used as a context manager, the sandbox is killed on exit, also when the
    block raises.
    """

    def __init__(self, info: Any, client: Optional[Client] = None):
        self._client = _client(client)
        self._update(_info_of(info))
        self.filesystem = Filesystem(self)
        self.files = self.filesystem  # E2B's name
        self.network = Network(self)
        self.processes = Processes(self)

    # -- lifecycle -------------------------------------------------------

    @classmethod
    def create(cls, template: str, ttl_seconds: Optional[int] = None,
               metadata: Optional[Mapping[str, str]] = None, egress: Optional[EgressLike] = None,
               client: Optional[Client] = None, probe: bool = False) -> "Sandbox":
        """A new sandbox restored from ``template``. ``egress`` is an
        EgressPolicy or its dict (absent: deny everything).
        ``probe=True`` runs the in-guest egress self-check before returning:
        if anything gets out, the sandbox is killed and FailedPreconditionError
        is raised, so no document is ever written into an open sandbox."""
        c = _client(client)
        return cls(c.call(calls.create(template, ttl_seconds, metadata, egress, probe)), client=c)

    @classmethod
    def get(cls, sandbox_id: str, client: Optional[Client] = None) -> "Sandbox":
        """The sandbox as it is now, in whatever state (see connect)."""
        c = _client(client)
        return cls(c.call(calls.get(sandbox_id)), client=c)

    @classmethod
    def connect(cls, sandbox_id: str, client: Optional[Client] = None) -> "Sandbox":
        """A running sandbox of yours by id, resumed first if it is paused
        (E2B's Sandbox.connect). One that has ended raises
        FailedPreconditionError; an unknown id NotFoundError."""
        c = _client(client)
        sbx = cls(c.call(calls.get(sandbox_id)), client=c)
        if sbx.state == "paused":
            sbx.resume()
        elif sbx.state != "running":
            raise errors.FailedPreconditionError("sandbox %s is %s" % (sandbox_id, sbx.state), status=0)
        return sbx

    @classmethod
    def list(cls, metadata: Optional[Mapping[str, str]] = None, all: bool = False,
             client: Optional[Client] = None) -> List["Sandbox"]:
        """Your running sandboxes whose metadata contains every given pair
        (``all=True``: ended ones too)."""
        c = _client(client)
        return [cls(i, client=c) for i in c.call(calls.list_sandboxes(metadata, all))]

    def refresh(self) -> "Sandbox":
        """Read the sandbox's state again."""
        self._update(self._client.call(calls.get(self.id)))
        return self

    def set_ttl(self, ttl_seconds: int) -> "Sandbox":
        """End the sandbox ttl_seconds from now (longer or shorter than
        before), within the daemon's maximum lifetime counted from its
        creation (InvalidArgumentError past it; FailedPreconditionError
        once it has ended)."""
        self._update(self._client.call(calls.set_ttl(self.id, ttl_seconds)))
        return self

    def pause(self) -> "Sandbox":
        """Save the sandbox to the host's disk and end its VM: it holds no
        memory or process on the host, keeps its id, and its TTL keeps
        counting (extend it with set_ttl). Calls into it raise
        FailedPreconditionError until ``resume()`` (or ``connect``). One
        with background processes running cannot be paused."""
        self._update(self._client.call(calls.pause(self.id)))
        return self

    def resume(self) -> "Sandbox":
        """Restore a paused sandbox under the same id, with a fresh clock,
        entropy and identity and its egress policy in force."""
        self._update(self._client.call(calls.resume(self.id)))
        return self

    def kill(self) -> None:
        """Destroy the sandbox. Killing one that has already ended (killed,
        expired) or is gone is not an error, so ``finally: sbx.kill()`` never
        hides the exception that got there."""
        self._client.call(calls.kill(self.id))

    def fork(self, count: int = 1) -> List["Sandbox"]:
        """Copy-on-write copies of this running sandbox; it keeps running.
        Always a list, count long: ``child, = sbx.fork()``."""
        return [Sandbox(i, client=self._client) for i in self._client.call(calls.fork(self.id, count))]

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

    def exec(self, cmd: Cmd, timeout_seconds: Optional[float] = None,
             env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
             stdin: Stdin = None, max_output_bytes: Optional[int] = None,
             user: Optional[str] = None, pty: PtyLike = None) -> ExecResult:
        """Run ``cmd`` (a shell string, or an argv list run without a shell)
        and wait for it. A non-zero exit code is a result, not an exception.
        ``user`` runs it as that guest user (unable to become root again;
        an unknown one raises InvalidArgumentError). ``pty=True`` (or
        ``(rows, cols)``) runs it on a terminal: its output arrives merged
        in stdout, with the terminal's line endings (\r\n).
        """
        return self._client.call(calls.exec_(self.id, cmd, timeout_seconds, env, cwd, stdin,
                                             max_output_bytes, user, pty))

    def exec_stream(self, cmd: Cmd, on_stdout: OnChunk = None, on_stderr: OnChunk = None,
                    timeout_seconds: Optional[float] = None, env: Optional[Mapping[str, str]] = None,
                    cwd: Optional[str] = None, stdin: Stdin = None, user: Optional[str] = None,
                    pty: PtyLike = None, text: bool = False) -> ExecResult:
        """Run ``cmd`` and call on_stdout/on_stderr with each chunk as it
        arrives: bytes, or with ``text=True`` str (a character split
        between chunks is delivered whole). The result's stdout and stderr
        are empty. ``user`` and ``pty`` as for exec."""
        c = calls.exec_stream(self.id, cmd, timeout_seconds, env, cwd, stdin, user, pty)
        decode = calls.TextDecoder() if text else None
        for ev in self._client.stream(c):
            kind, data, result = calls.stream_event(ev)
            if result is not None:
                return result
            cb = on_stdout if kind == "stdout" else on_stderr if kind == "stderr" else None
            if cb is not None:
                piece = decode(kind, data) if decode else data
                if piece:
                    cb(piece)
        raise calls.stream_ended()


def templates(client: Optional[Client] = None) -> List[Template]:
    """The templates sandboxes can be created from."""
    return _client(client).call(calls.templates())


def template(name: str, client: Optional[Client] = None) -> Template:
    """One template by name (NotFoundError when it is not built)."""
    return _client(client).call(calls.template(name))


def keys(client: Optional[Client] = None) -> List[Key]:
    """Your tenant's API keys, revoked ones included, oldest first; never
    the keys themselves (``current`` marks the one this client uses)."""
    return _client(client).call(calls.keys())


def audit_page(sandbox: Optional[str] = None, metadata: Optional[Mapping[str, str]] = None,
               since: Optional[TimeLike] = None, until: Optional[TimeLike] = None,
               event: Optional[Iterable[str]] = None, limit: Optional[int] = None,
               after_seq: Optional[int] = None, client: Optional[Client] = None) -> AuditPage:
    """One page of your tenant's audit records with seq > after_seq, oldest
    first, at most ``limit`` (default 1000, at most 10000). A full page has
    ``next_after_seq``: pass it as ``after_seq`` for the next."""
    return _client(client).call(calls.audit_page(sandbox, metadata, since, until, event, limit, after_seq))


def audit(sandbox: Optional[str] = None, metadata: Optional[Mapping[str, str]] = None,
          since: Optional[TimeLike] = None, until: Optional[TimeLike] = None,
          event: Optional[Iterable[str]] = None, limit: Optional[int] = None,
          after_seq: Optional[int] = None, client: Optional[Client] = None) -> List[AuditRecord]:
    """Your tenant's audit records (ids, metadata, outcomes; never content):
    one page, as audit_page. ``audit_iter`` walks every page."""
    return audit_page(sandbox, metadata, since, until, event, limit, after_seq, client).records


def audit_iter(sandbox: Optional[str] = None, metadata: Optional[Mapping[str, str]] = None,
               since: Optional[TimeLike] = None, until: Optional[TimeLike] = None,
               event: Optional[Iterable[str]] = None, page_size: int = 1000,
               after_seq: Optional[int] = None, client: Optional[Client] = None) -> Iterator[AuditRecord]:
    """Every matching audit record, oldest first, fetched ``page_size`` at
    a time (one request per page, made as the iteration gets there)."""
    c = _client(client)
    cursor = after_seq
    while True:
        page = c.call(calls.audit_page(sandbox, metadata, since, until, event, page_size, cursor))
        yield from page.records
        if not page.next_after_seq:
            return
        cursor = page.next_after_seq
