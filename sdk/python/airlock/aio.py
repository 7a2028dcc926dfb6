"""The asyncio client: AsyncClient and AsyncSandbox, the same surface as
Client and Sandbox with coroutines.

    from airlock import AsyncSandbox

    async with AsyncSandbox.create(template="invoice-ocr", ttl_seconds=120) as sbx:
        await sbx.filesystem.write("/job/in.pdf", pdf_bytes)
        result = await sbx.exec("ocr /job/in.pdf", timeout_seconds=60)

It carries out the same Calls (_calls.py) as the blocking client, each
HTTP exchange in a worker thread (``asyncio.to_thread``) so the event loop
never blocks; the retries are the blocking client's (429 for any method,
503 for GET, PUT and DELETE, never a streamed body), waited out with
``asyncio.sleep``. Cancelling a call closes its connection, which the
daemon sees as the client going away (a running exec is killed).
"""

from __future__ import annotations

import asyncio
import http.client
import inspect
import io
import socket
import tempfile
import threading
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import (Any, AsyncGenerator, AsyncIterator, Awaitable, BinaryIO, Callable, Dict, Generator, Iterable, List,
                    Mapping, Optional, TypeVar, Union)

from . import _calls as calls
from . import _http
from . import _tar
from . import errors
from ._calls import Call, Cmd, EgressLike, FileData, PtyLike, RuleLike, Stdin, TimeLike
from ._http import DEFAULT_RETRIES, Client
from .process import _ProcessState
from .sandbox import _info_of, _SandboxState
from .types import (ArchiveResult, AuditPage, AuditRecord, EgressPolicy, ExecResult, FileInfo, Key, ProbeResult, ProcessInfo,
                    ProcessOutput, Template)

T = TypeVar("T")


class _Conn:
    """The connection a worker thread is using, so that a cancelled call
    can shut it down (which makes the thread's blocking read return)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: Optional[http.client.HTTPConnection] = None
        self._aborted = False

    def set(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            self._conn = conn
            aborted = self._aborted
        if aborted:
            _shutdown(conn)

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            conn = self._conn
        if conn is not None:
            _shutdown(conn)


def _shutdown(conn: http.client.HTTPConnection) -> None:
    sock = conn.sock
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


async def _in_thread(pool: Executor, conn: _Conn, fn: Callable[..., T], *args: Any) -> T:
    """fn(*args) in a worker thread of pool. Cancelling aborts conn (again
    until the thread notices) and waits for the thread, so no request
    outlives its task."""
    fut = asyncio.get_running_loop().run_in_executor(pool, fn, *args)
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        while not fut.done():
            conn.abort()
            await asyncio.wait({fut}, timeout=0.05)
        if not fut.cancelled():
            fut.exception()  # retrieved: what the aborted thread raised is moot
        raise


class AsyncClient:
    """A connection configuration for one airlock daemon, for asyncio.

    Arguments and environment are Client's (AIRLOCK_URL, AIRLOCK_API_KEY,
    ``timeout``, ``retries``); ``AsyncClient(client=Client(...))`` wraps an
    existing one. Each call in flight holds one worker thread of the
    client's own pool, of at most ``max_concurrency`` threads (calls past
    that wait for a thread); ``aclose()`` (or leaving ``async with``)
    stops the pool's idle threads.
    """

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None,
                 timeout: Optional[float] = 60.0, retries: int = DEFAULT_RETRIES,
                 client: Optional[Client] = None, max_concurrency: int = 64):
        self.sync = client if client is not None else Client(url=url, api_key=api_key, timeout=timeout,
                                                             retries=retries)
        self.max_concurrency = max(int(max_concurrency), 1)
        self._pool: Optional[ThreadPoolExecutor] = None
        self._pool_lock = threading.Lock()

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.max_concurrency, thread_name_prefix="airlock-aio")
            return self._pool

    async def aclose(self) -> None:
        """Stop the worker threads (a later call starts new ones)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.get_running_loop().run_in_executor(None, pool.shutdown)

    @property
    def url(self) -> str:
        return self.sync.url

    def __repr__(self) -> str:
        return "airlock.AsyncClient(url=%r)" % self.sync.url  # never the key

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()  # no connection is kept between calls

    async def send(self, c: Call[Any], conn: _Conn) -> http.client.HTTPResponse:
        """Carry out c's request, with the blocking client's retries."""
        attempt = 0
        while True:
            try:
                return await _in_thread(self._executor(), conn, self.sync.send_once, c, conn.set)
            except errors.AirlockError as e:
                wait = _http.retry_wait(c, e, attempt, self.sync.retries)
                if wait is None:
                    raise
                await asyncio.sleep(wait)
                attempt += 1

    async def call(self, c: Call[T]) -> T:
        """Carry out a JSON call and return its typed result."""
        conn = _Conn()
        try:
            resp = await self.send(c, conn)
        except c.ignore:
            return c.decode(None)
        return c.decode(await _in_thread(self._executor(), conn, _http.read_json, c, resp))

    async def stream(self, c: Call[Any]) -> AsyncGenerator[Dict[str, Any], None]:
        """Carry out an NDJSON call, yielding one decoded object per line."""
        conn = _Conn()
        resp = await self.send(c, conn)
        try:
            while True:
                line = await _in_thread(self._executor(), conn, _http.read_line, c, resp)
                if line is None:
                    return
                if line:
                    yield line
        finally:
            _http.close(resp)

    async def download(self, c: Call[Any], fileobj: BinaryIO) -> int:
        """Carry out a RAW call, copying the body into fileobj; its length."""
        conn = _Conn()
        resp = await self.send(c, conn)
        n = 0
        try:
            while True:
                chunk = await _in_thread(self._executor(), conn, _http.read_chunk, c, resp)
                if not chunk:
                    return n
                fileobj.write(chunk)
                n += len(chunk)
        finally:
            _http.close(resp)


_default_client: Optional[AsyncClient] = None


def _client(client: Optional[AsyncClient]) -> AsyncClient:
    """The given client, or one configured from the environment."""
    if client is not None:
        return client
    global _default_client
    if _default_client is None:
        _default_client = AsyncClient()
    return _default_client


OnChunk = Optional[Callable[[Any], Any]]  # a function or a coroutine function; bytes, or str with text=True


async def _deliver(cb: OnChunk, data: Any) -> None:
    if cb is None or not data:
        return
    r = cb(data)
    if inspect.isawaitable(r):
        await r


class AsyncFilesystem:
    """File operations on one sandbox, for asyncio (see Filesystem)."""

    def __init__(self, sbx: "AsyncSandbox"):
        self._sbx = sbx

    async def write(self, path: str, data: FileData, mode: Optional[int] = None) -> int:
        """Write bytes, text (UTF-8) or a binary file-like object (streamed,
        read in a worker thread) to ``path``, creating parents. Returns the
        number of bytes written."""
        return await self._sbx._client.call(calls.write_file(self._sbx.id, path, data, mode))

    async def read(self, path: str, format: str = "bytes") -> Union[bytes, str]:
        """The whole content of ``path``: bytes, or with ``format="text"``
        its UTF-8 text (see Filesystem.read)."""
        buf = io.BytesIO()
        await self.read_to(path, buf)
        return calls.text_of(buf.getvalue(), format)

    async def read_text(self, path: str) -> str:
        """The whole content of ``path`` as UTF-8 text."""
        return await self.read(path, format="text")  # type: ignore[return-value]

    async def exists(self, path: str) -> bool:
        """Whether ``path`` exists in the guest (see Filesystem.exists)."""
        return await self._sbx._client.call(calls.exists(self._sbx.id, path))

    async def read_to(self, path: str, fileobj: BinaryIO) -> int:
        """Stream ``path`` into a writable binary file object; returns bytes copied."""
        return await self._sbx._client.download(calls.read_file(self._sbx.id, path), fileobj)

    async def stat(self, path: str) -> FileInfo:
        return await self._sbx._client.call(calls.stat(self._sbx.id, path))

    async def list(self, path: str) -> List[FileInfo]:
        """The entries of directory ``path``, by name."""
        return await self._sbx._client.call(calls.list_files(self._sbx.id, path))

    async def remove(self, path: str, recursive: bool = False) -> None:
        await self._sbx._client.call(calls.remove(self._sbx.id, path, recursive))

    async def make_dir(self, path: str) -> None:
        """Create a directory and its missing parents."""
        await self._sbx._client.call(calls.make_dir(self._sbx.id, path))

    mkdir = make_dir

    async def write_archive(self, path: str, data: Any) -> ArchiveResult:
        """Unpack a tar stream into directory ``path`` (see Filesystem)."""
        return await self._sbx._client.call(calls.write_archive(self._sbx.id, path, data))

    async def read_archive(self, path: str, fileobj: BinaryIO) -> int:
        """Stream ``path`` as a tar stream into fileobj (see Filesystem)."""
        return await self._sbx._client.download(calls.read_archive(self._sbx.id, path), fileobj)

    async def upload_dir(self, local_dir: str, remote_dir: str) -> ArchiveResult:
        """Copy the contents of local_dir into remote_dir (the tar is built
        in a worker thread)."""
        with tempfile.TemporaryFile() as tmp:
            await asyncio.to_thread(_tar.pack_dir, local_dir, tmp)
            tmp.seek(0)
            return await self.write_archive(remote_dir, tmp)

    async def download_dir(self, remote_path: str, local_dir: str) -> ArchiveResult:
        """Copy the contents of remote_path into local_dir, confined (see
        Filesystem); extraction runs in a worker thread."""
        with tempfile.TemporaryFile() as tmp:
            await self.read_archive(remote_path, _tar.LimitedWriter(tmp, _tar.MAX_DOWNLOAD_BYTES))
            tmp.seek(0)
            entries, n = await asyncio.to_thread(_tar.extract_dir, tmp, local_dir)
            return ArchiveResult(entries=entries, bytes=n)


class AsyncNetwork:
    """Egress control for one sandbox, for asyncio (see Network)."""

    def __init__(self, sbx: "AsyncSandbox"):
        self._sbx = sbx

    async def set_egress(self, default: str = "deny", allow: Optional[Iterable[RuleLike]] = None,
                         tls: Optional[str] = None) -> None:
        """Replace the egress policy (see Network.set_egress)."""
        self._sbx._update(await self._sbx._client.call(calls.set_egress(self._sbx.id, default, allow, tls)))

    @property
    def egress(self) -> EgressPolicy:
        """The policy as last reported by the server."""
        return self._sbx.info.egress

    async def probe(self) -> List[ProbeResult]:
        """Run the egress self-check inside the sandbox (see Network.probe)."""
        return await self._sbx._client.call(calls.probe(self._sbx.id))


class AsyncProcess(_ProcessState):
    """A handle on one background process, for asyncio (see Process)."""

    def __init__(self, sbx: "AsyncSandbox", info: ProcessInfo):
        self._sbx = sbx
        self.info = info

    async def refresh(self) -> "AsyncProcess":
        """Read the process's state again."""
        self.info = await self._sbx._client.call(calls.get_process(self._sbx.id, self.id))
        return self

    async def wait(self, timeout_seconds: Optional[float] = None) -> "AsyncProcess":
        """Wait for the process to end (see Process.wait): None waits
        however long it takes; DeadlineExceededError after timeout_seconds."""
        clock = calls.WaitClock(timeout_seconds)
        while True:
            try:
                self.info = await self._sbx._client.call(calls.wait_process(self._sbx.id, self.id, clock.step()))
                return self
            except errors.DeadlineExceededError as e:
                if not clock.again(e):
                    raise

    async def kill(self, signal: str = "KILL") -> "AsyncProcess":
        """Signal the process's whole tree and return at once (see Process.kill)."""
        self.info = await self._sbx._client.call(calls.kill_process(self._sbx.id, self.id, signal))
        return self

    async def send_stdin(self, data: Union[str, bytes], close: bool = False) -> "AsyncProcess":
        """Append data to the process's stdin, then close it with close
        (see Process.send_stdin)."""
        chunks = calls.stdin_chunks(data)
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            if chunk or (last and close):
                self.info = await self._sbx._client.call(
                    calls.process_stdin(self._sbx.id, self.id, chunk, close and last))
        return self

    async def close_stdin(self) -> "AsyncProcess":
        """Close the process's stdin (on a pty: send its EOF, ^D)."""
        self.info = await self._sbx._client.call(calls.process_stdin(self._sbx.id, self.id, b"", True))
        return self

    async def resize(self, rows: int, cols: int) -> "AsyncProcess":
        """Set the window size of a process started on a pty."""
        self.info = await self._sbx._client.call(calls.resize_process(self._sbx.id, self.id, rows, cols))
        return self

    async def output(self, stream: str = "stdout", offset: int = 0, wait_seconds: float = 0,
                     max_bytes: Optional[int] = None) -> ProcessOutput:
        """Read ``stream`` from offset on (see Process.output)."""
        return await self._sbx._client.call(calls.process_output(self._sbx.id, self.id, stream, offset,
                                                                 wait_seconds, max_bytes))

    async def iter_output(self, stream: str = "stdout", offset: int = 0) -> AsyncIterator[ProcessOutput]:
        """The pieces of ``stream`` as they arrive, until the process has
        ended and all was read: ``async for piece in p.iter_output()``."""
        while True:
            piece = await self.output(stream, offset, calls.FOLLOW_WAIT)
            offset = piece.next_offset
            if piece.data or piece.dropped:
                yield piece
            if piece.eof:
                return

    async def follow(self, stream: str = "stdout", on_data: OnChunk = None, offset: int = 0,
                     text: bool = False) -> int:
        """Call on_data (a function or coroutine function) with each chunk
        of ``stream`` (bytes, or str with text=True) until the process has
        ended and all was delivered; returns the offset after the last
        byte (see Process.follow)."""
        decode = calls.TextDecoder() if text else None
        async for piece in self.iter_output(stream, offset):
            offset = piece.next_offset
            await _deliver(on_data, decode(stream, piece.data) if decode else piece.data)
        return offset


class AsyncProcesses:
    """The background processes of one sandbox, for asyncio (see Processes)."""

    def __init__(self, sbx: "AsyncSandbox"):
        self._sbx = sbx

    async def start(self, cmd: Cmd, timeout_seconds: Optional[float] = None,
                    env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
                    stdin: Union[Stdin, bool] = None, user: Optional[str] = None,
                    pty: PtyLike = None) -> AsyncProcess:
        """Start ``cmd`` and return at once, with it running (see Processes.start)."""
        data, keep_open = (None, True) if stdin is True else (None, False) if stdin is False else (stdin, False)
        return AsyncProcess(self._sbx, await self._sbx._client.call(
            calls.start_process(self._sbx.id, cmd, timeout_seconds, env, cwd, data, keep_open, user, pty)))

    async def send_stdin(self, pid: str, data: Union[str, bytes]) -> AsyncProcess:
        """Append data to the stdin of process ``pid`` (see Processes.send_stdin)."""
        return await AsyncProcess(self._sbx, ProcessInfo(id=pid, sandbox_id=self._sbx.id)).send_stdin(data)

    async def list(self) -> List[AsyncProcess]:
        """The sandbox's processes, running and ended, in start order."""
        return [AsyncProcess(self._sbx, i) for i in await self._sbx._client.call(calls.list_processes(self._sbx.id))]

    async def get(self, pid: str) -> AsyncProcess:
        """Process ``pid`` as it is now (NotFoundError if none such)."""
        return AsyncProcess(self._sbx, await self._sbx._client.call(calls.get_process(self._sbx.id, pid)))


class _Creating:
    """What AsyncSandbox.create returns: await it for the sandbox, or use
    it as ``async with AsyncSandbox.create(...) as sbx:`` to have the
    sandbox killed when the block ends."""

    def __init__(self, make: Callable[[], Awaitable["AsyncSandbox"]]):
        self._make = make
        self._sbx: Optional[AsyncSandbox] = None

    def __await__(self) -> Generator[Any, None, "AsyncSandbox"]:
        return self._make().__await__()

    async def __aenter__(self) -> "AsyncSandbox":
        self._sbx = await self._make()
        return self._sbx

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        assert self._sbx is not None
        await self._sbx.__aexit__(exc_type, exc, tb)


class AsyncSandbox(_SandboxState):
    """A throwaway microVM, for asyncio. Create one with
    ``await AsyncSandbox.create(...)`` or ``async with AsyncSandbox.create(...)``.

    Used as an async context manager, the sandbox is killed on exit, also
    when the block raises.
    """

    def __init__(self, info: Any, client: Optional[AsyncClient] = None):
        self._client = _client(client)
        self._update(_info_of(info))
        self.filesystem = AsyncFilesystem(self)
        self.files = self.filesystem  # E2B's name
        self.network = AsyncNetwork(self)
        self.processes = AsyncProcesses(self)

    # -- lifecycle -------------------------------------------------------

    @classmethod
    def create(cls, template: str, ttl_seconds: Optional[int] = None,
               metadata: Optional[Mapping[str, str]] = None, egress: Optional[EgressLike] = None,
               client: Optional[AsyncClient] = None, probe: bool = False) -> _Creating:
        """A new sandbox restored from ``template`` (see Sandbox.create)."""
        c = _client(client)
        # Built now, so bad arguments raise here, not at the await.
        call = calls.create(template, ttl_seconds, metadata, egress, probe)

        async def make() -> "AsyncSandbox":
            return cls(await c.call(call), client=c)
        return _Creating(make)

    @classmethod
    async def get(cls, sandbox_id: str, client: Optional[AsyncClient] = None) -> "AsyncSandbox":
        """The sandbox as it is now, in whatever state (see connect)."""
        c = _client(client)
        return cls(await c.call(calls.get(sandbox_id)), client=c)

    @classmethod
    async def connect(cls, sandbox_id: str, client: Optional[AsyncClient] = None) -> "AsyncSandbox":
        """A running sandbox of yours by id, resumed first if it is paused
        (see Sandbox.connect)."""
        c = _client(client)
        sbx = cls(await c.call(calls.get(sandbox_id)), client=c)
        if sbx.state == "paused":
            await sbx.resume()
        elif sbx.state != "running":
            raise errors.FailedPreconditionError("sandbox %s is %s" % (sandbox_id, sbx.state), status=0)
        return sbx

    @classmethod
    async def list(cls, metadata: Optional[Mapping[str, str]] = None, all: bool = False,
                   client: Optional[AsyncClient] = None) -> List["AsyncSandbox"]:
        """Your running sandboxes whose metadata contains every given pair
        (``all=True``: ended ones too)."""
        c = _client(client)
        return [cls(i, client=c) for i in await c.call(calls.list_sandboxes(metadata, all))]

    async def refresh(self) -> "AsyncSandbox":
        """Read the sandbox's state again."""
        self._update(await self._client.call(calls.get(self.id)))
        return self

    async def set_ttl(self, ttl_seconds: int) -> "AsyncSandbox":
        """End the sandbox ttl_seconds from now (see Sandbox.set_ttl)."""
        self._update(await self._client.call(calls.set_ttl(self.id, ttl_seconds)))
        return self

    async def pause(self) -> "AsyncSandbox":
        """Save the sandbox to disk and end its VM (see Sandbox.pause)."""
        self._update(await self._client.call(calls.pause(self.id)))
        return self

    async def resume(self) -> "AsyncSandbox":
        """Restore a paused sandbox under the same id (see Sandbox.resume)."""
        self._update(await self._client.call(calls.resume(self.id)))
        return self

    async def kill(self) -> None:
        """Destroy the sandbox; one that has already ended is not an error."""
        await self._client.call(calls.kill(self.id))

    async def fork(self, count: int = 1) -> List["AsyncSandbox"]:
        """Copy-on-write copies of this running sandbox; always a list."""
        return [AsyncSandbox(i, client=self._client) for i in await self._client.call(calls.fork(self.id, count))]

    async def __aenter__(self) -> "AsyncSandbox":
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            await self.kill()
        except errors.AirlockError:
            if exc_type is None:
                raise

    # -- exec ------------------------------------------------------------

    async def exec(self, cmd: Cmd, timeout_seconds: Optional[float] = None,
                   env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
                   stdin: Stdin = None, max_output_bytes: Optional[int] = None,
                   user: Optional[str] = None, pty: PtyLike = None) -> ExecResult:
        """Run ``cmd`` and wait for it (see Sandbox.exec)."""
        return await self._client.call(calls.exec_(self.id, cmd, timeout_seconds, env, cwd, stdin,
                                                   max_output_bytes, user, pty))

    async def exec_stream(self, cmd: Cmd, on_stdout: OnChunk = None, on_stderr: OnChunk = None,
                          timeout_seconds: Optional[float] = None, env: Optional[Mapping[str, str]] = None,
                          cwd: Optional[str] = None, stdin: Stdin = None, user: Optional[str] = None,
                          pty: PtyLike = None, text: bool = False) -> ExecResult:
        """Run ``cmd`` and call on_stdout/on_stderr (functions or coroutine
        functions, called on the event loop) with each chunk as it arrives:
        bytes, or str with text=True. The result's stdout and stderr are
        empty."""
        c = calls.exec_stream(self.id, cmd, timeout_seconds, env, cwd, stdin, user, pty)
        decode = calls.TextDecoder() if text else None
        agen = self._client.stream(c)
        try:
            async for ev in agen:
                kind, data, result = calls.stream_event(ev)
                if result is not None:
                    return result
                cb = on_stdout if kind == "stdout" else on_stderr if kind == "stderr" else None
                await _deliver(cb, decode(kind, data) if decode and cb else data)
        finally:
            await agen.aclose()
        raise calls.stream_ended()


async def templates(client: Optional[AsyncClient] = None) -> List[Template]:
    """The templates sandboxes can be created from."""
    return await _client(client).call(calls.templates())


async def template(name: str, client: Optional[AsyncClient] = None) -> Template:
    """One template by name (NotFoundError when it is not built)."""
    return await _client(client).call(calls.template(name))


async def keys(client: Optional[AsyncClient] = None) -> List[Key]:
    """Your tenant's API keys (see airlock.keys)."""
    return await _client(client).call(calls.keys())


async def audit_page(sandbox: Optional[str] = None, metadata: Optional[Mapping[str, str]] = None,
                     since: Optional[TimeLike] = None, until: Optional[TimeLike] = None,
                     event: Optional[Iterable[str]] = None, limit: Optional[int] = None,
                     after_seq: Optional[int] = None, client: Optional[AsyncClient] = None) -> AuditPage:
    """One page of your tenant's audit records (see airlock.audit_page)."""
    return await _client(client).call(calls.audit_page(sandbox, metadata, since, until, event, limit, after_seq))


async def audit(sandbox: Optional[str] = None, metadata: Optional[Mapping[str, str]] = None,
                since: Optional[TimeLike] = None, until: Optional[TimeLike] = None,
                event: Optional[Iterable[str]] = None, limit: Optional[int] = None,
                after_seq: Optional[int] = None, client: Optional[AsyncClient] = None) -> List[AuditRecord]:
    """One page of audit records, as a list (see airlock.audit)."""
    return (await audit_page(sandbox, metadata, since, until, event, limit, after_seq, client)).records


async def audit_iter(sandbox: Optional[str] = None, metadata: Optional[Mapping[str, str]] = None,
                     since: Optional[TimeLike] = None, until: Optional[TimeLike] = None,
                     event: Optional[Iterable[str]] = None, page_size: int = 1000,
                     after_seq: Optional[int] = None, client: Optional[AsyncClient] = None
                     ) -> AsyncIterator[AuditRecord]:
    """Every matching audit record, oldest first, ``page_size`` at a time:
    ``async for rec in airlock.aio.audit_iter(...)``."""
    c = _client(client)
    cursor = after_seq
    while True:
        page = await c.call(calls.audit_page(sandbox, metadata, since, until, event, page_size, cursor))
        for rec in page.records:
            yield rec
        if not page.next_after_seq:
            return
        cursor = page.next_after_seq


__all__ = ["AsyncClient", "AsyncSandbox", "AsyncFilesystem", "AsyncNetwork", "AsyncProcesses", "AsyncProcess",
           "templates", "template", "keys", "audit", "audit_page", "audit_iter"]
