"""Background processes: commands started in a sandbox without waiting
for them (the blocking client; aio.py has AsyncProcesses/AsyncProcess).

    p = sbx.processes.start("python3 /opt/serve.py", timeout_seconds=600)
    for piece in p.iter_output("stdout"):      # until the process ends
        print(piece.text, end="")
    p.kill("TERM")
    p.wait()                                   # p.state, p.exit_code, p.signal

The server keeps the latest 1 MiB of each output stream, readable while
the process runs and after it ended; a sandbox runs at most 32 at once
(ResourceExhaustedError past that) and keeps 64 records, which go with
the sandbox.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Mapping, Optional, Tuple, Union

from . import _calls as calls
from . import errors
from ._calls import Cmd, PtyLike, Stdin
from .types import ProcessInfo, ProcessOutput

if TYPE_CHECKING:
    from .sandbox import Sandbox

OnData = Optional[Callable[[Any], Any]]  # bytes, or str with text=True


class _ProcessState:
    """What Process and AsyncProcess share: the process as last reported
    (``info``) and read-only views of its fields, named as in the API."""

    info: ProcessInfo

    @property
    def id(self) -> str:
        """The process id: "p-1", "p-2", ... per sandbox."""
        return self.info.id

    @property
    def sandbox_id(self) -> str:
        return self.info.sandbox_id

    @property
    def cmd(self) -> str:
        return self.info.cmd

    @property
    def argv(self) -> List[str]:
        return self.info.argv

    @property
    def cwd(self) -> str:
        return self.info.cwd

    @property
    def timeout_seconds(self) -> float:
        return self.info.timeout_seconds

    @property
    def state(self) -> str:
        """running, exited (on its own), killed (a kill or its timeout) or
        failed (the sandbox ended under it), as last read."""
        return self.info.state

    @property
    def running(self) -> bool:
        """Whether it was running when last read."""
        return self.info.state == "running"

    @property
    def exit_code(self) -> Optional[int]:
        """Once exited or killed (128+n for signal n); None before and when failed."""
        return self.info.exit_code

    @property
    def signal(self) -> str:
        """The fatal signal's name, e.g. "SIGTERM"; "" if none."""
        return self.info.signal

    @property
    def timed_out(self) -> bool:
        return self.info.timed_out

    @property
    def error(self) -> str:
        """Why a failed process has no exit status."""
        return self.info.error

    @property
    def stdout_bytes(self) -> int:
        return self.info.stdout_bytes

    @property
    def stderr_bytes(self) -> int:
        return self.info.stderr_bytes

    @property
    def stdout_truncated(self) -> bool:
        return self.info.stdout_truncated

    @property
    def stderr_truncated(self) -> bool:
        return self.info.stderr_truncated

    @property
    def started_at(self) -> Optional[datetime]:
        return self.info.started_at

    @property
    def ended_at(self) -> Optional[datetime]:
        return self.info.ended_at

    @property
    def user(self) -> str:
        """The guest user it runs as; "" for root."""
        return self.info.user

    @property
    def pty(self) -> Optional[Tuple[int, int]]:
        """Its terminal's (rows, cols); None when it runs on pipes."""
        return self.info.pty

    @property
    def stdin_open(self) -> bool:
        """Whether its stdin takes send_stdin now, as last read."""
        return self.info.stdin_open

    def __repr__(self) -> str:
        return "%s(id=%r, sandbox_id=%r, state=%r, exit_code=%r)" % (
            type(self).__name__, self.id, self.sandbox_id, self.state, self.exit_code)


class Process(_ProcessState):
    """A handle on one background process. Its fields are a snapshot from
    the last call that returned them (refresh, wait and kill update it)."""

    def __init__(self, sbx: "Sandbox", info: ProcessInfo):
        self._sbx = sbx
        self.info = info

    def refresh(self) -> "Process":
        """Read the process's state again."""
        self.info = self._sbx._client.call(calls.get_process(self._sbx.id, self.id))
        return self

    def wait(self, timeout_seconds: Optional[float] = None) -> "Process":
        """Wait for the process to end (None: however long it takes, in
        server waits of at most 60 s). One still running after
        timeout_seconds raises DeadlineExceededError (status 504). A
        non-zero exit code is a result: check exit_code and state."""
        clock = calls.WaitClock(timeout_seconds)
        while True:
            try:
                self.info = self._sbx._client.call(calls.wait_process(self._sbx.id, self.id, clock.step()))
                return self
            except errors.DeadlineExceededError as e:
                if not clock.again(e):
                    raise

    def kill(self, signal: str = "KILL") -> "Process":
        """Send signal (TERM, KILL, INT, HUP, QUIT, USR1, USR2) to the
        process's whole tree and return at once; wait() tells when it
        ended (state killed). An ended process is FailedPreconditionError."""
        self.info = self._sbx._client.call(calls.kill_process(self._sbx.id, self.id, signal))
        return self

    def send_stdin(self, data: Union[str, bytes], close: bool = False) -> "Process":
        """Append ``data`` (text as UTF-8, or bytes) to the stdin of a
        process started with ``stdin=True`` or on a pty, in order with
        every other write, then close it with ``close``. Returns once the
        sandbox has taken the bytes; a process that does not read them for
        30 s raises DeadlineExceededError (they stay queued). A process
        without stdin, whose stdin is closed or that has ended raises
        FailedPreconditionError."""
        chunks = calls.stdin_chunks(data)
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            if chunk or (last and close):
                self.info = self._sbx._client.call(
                    calls.process_stdin(self._sbx.id, self.id, chunk, close and last))
        return self

    def close_stdin(self) -> "Process":
        """Close the process's stdin (on a pty: send its EOF, ^D)."""
        self.info = self._sbx._client.call(calls.process_stdin(self._sbx.id, self.id, b"", True))
        return self

    def resize(self, rows: int, cols: int) -> "Process":
        """Set the window size of a process started on a pty."""
        self.info = self._sbx._client.call(calls.resize_process(self._sbx.id, self.id, rows, cols))
        return self

    def output(self, stream: str = "stdout", offset: int = 0, wait_seconds: float = 0,
               max_bytes: Optional[int] = None) -> ProcessOutput:
        """Read ``stream`` (stdout or stderr) from offset on, at most
        max_bytes (default and at most 1 MiB). With nothing new yet and
        wait_seconds > 0 (at most 60), wait that long for output or the
        process's end."""
        return self._sbx._client.call(calls.process_output(self._sbx.id, self.id, stream, offset,
                                                           wait_seconds, max_bytes))

    def iter_output(self, stream: str = "stdout", offset: int = 0) -> Iterator[ProcessOutput]:
        """The pieces of ``stream`` from offset on as they arrive, until the
        process has ended and all of it was read. Each piece's ``dropped``
        counts the bytes before it the server no longer kept."""
        while True:
            piece = self.output(stream, offset, calls.FOLLOW_WAIT)
            offset = piece.next_offset
            if piece.data or piece.dropped:
                yield piece
            if piece.eof:
                return

    def follow(self, stream: str = "stdout", on_data: OnData = None, offset: int = 0,
               text: bool = False) -> int:
        """Call on_data with each chunk of ``stream`` from offset on as it
        arrives (bytes, or with ``text=True`` str, a character split
        between chunks delivered whole), until the process has ended and
        all of it was delivered. Returns the offset after the last byte
        (the stream's end)."""
        decode = calls.TextDecoder() if text else None
        for piece in self.iter_output(stream, offset):
            offset = piece.next_offset
            data: Any = decode(stream, piece.data) if decode else piece.data
            if on_data is not None and data:
                on_data(data)
        return offset


class Processes:
    """The background processes of one sandbox (``sbx.processes``)."""

    def __init__(self, sbx: "Sandbox"):
        self._sbx = sbx

    def start(self, cmd: Cmd, timeout_seconds: Optional[float] = None,
              env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
              stdin: Union[Stdin, bool] = None, user: Optional[str] = None, pty: PtyLike = None) -> Process:
        """Start ``cmd`` (a shell string, or an argv list run without a
        shell) and return at once, with the process running. It runs until
        it exits, is killed, reaches timeout_seconds or the sandbox ends.
        A command that cannot be started still starts a process, which
        exits 127 or 126 with the reason on stderr.

        ``stdin``: text or bytes are fed and closed; ``stdin=True`` keeps
        stdin open for ``send_stdin``; None: /dev/null. ``pty=True`` (or
        ``(rows, cols)``) runs it on a terminal (stdin always open, output
        merged in stdout, ``resize`` changes its size). ``user`` runs it as
        that guest user."""
        data, keep_open = (None, True) if stdin is True else (None, False) if stdin is False else (stdin, False)
        return Process(self._sbx, self._sbx._client.call(
            calls.start_process(self._sbx.id, cmd, timeout_seconds, env, cwd, data, keep_open, user, pty)))

    def send_stdin(self, pid: str, data: Union[str, bytes]) -> Process:
        """Append data to the stdin of process ``pid`` (see Process.send_stdin;
        E2B's commands.send_stdin)."""
        return Process(self._sbx, ProcessInfo(id=pid, sandbox_id=self._sbx.id)).send_stdin(data)

    def list(self) -> List[Process]:
        """The sandbox's processes, running and ended, in start order."""
        return [Process(self._sbx, i) for i in self._sbx._client.call(calls.list_processes(self._sbx.id))]

    def get(self, pid: str) -> Process:
        """Process ``pid`` as it is now (NotFoundError if the sandbox has none such)."""
        return Process(self._sbx, self._sbx._client.call(calls.get_process(self._sbx.id, pid)))
