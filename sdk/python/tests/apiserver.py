"""The real airlock API handler for the unit tests.

internal/api/apitest/cmd/apiserver serves the daemon's own HTTP handler
over a real sandbox manager on local machines (directories and host
processes instead of VMs) with a fresh store and a key for each of two
tenants. It is built once per test run into a temporary directory (or
taken from AIRLOCK_TEST_APISERVER, a prebuilt binary), started by a test
module, and stops when its stdin closes.

Exec runs host commands with the sandbox's root as the working directory,
so commands name sandbox files by relative paths (``cat job/in.txt``).
AIRLOCK_TEST_APISERVER_LOG=1 shows the server's log of failed requests.
"""

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
import uuid

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
PACKAGE = "./internal/api/apitest/cmd/apiserver"

_build_lock = threading.Lock()
_binary = None


def _go() -> str:
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else None)
    if go is None:
        raise unittest.SkipTest("no Go toolchain to build %s (set AIRLOCK_TEST_APISERVER to a built binary)"
                                % PACKAGE)
    return go


def binary() -> str:
    """The apiserver binary: AIRLOCK_TEST_APISERVER, or built once per run."""
    global _binary
    with _build_lock:
        if _binary is None:
            _binary = os.environ.get("AIRLOCK_TEST_APISERVER") or _build()
        return _binary


def _build() -> str:
    tmp = tempfile.mkdtemp(prefix="airlock-pytest-")
    atexit.register(shutil.rmtree, tmp, True)
    out = os.path.join(tmp, "apiserver")
    proc = subprocess.run([_go(), "build", "-o", out, PACKAGE], cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise RuntimeError("go build %s failed:\n%s" % (PACKAGE, proc.stdout.decode(errors="replace")))
    return out


class APIServer:
    """One running apiserver: ``url`` (TCP), ``socket`` (unix:// URL),
    ``keys`` (tenant -> API key)."""

    def __init__(self, *args: str):
        if os.environ.get("AIRLOCK_TEST_APISERVER_LOG"):
            args = ("-v",) + args
        self.proc = subprocess.Popen([binary(), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=sys.stderr)
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            raise RuntimeError("apiserver exited (%s) before it was ready" % self.proc.returncode)
        ready = json.loads(line)
        self.url = ready["url"]
        self.socket = ready["socket"]
        self.keys = ready["keys"]
        self.templates = ready["templates"]

    def stop(self) -> None:
        """Close stdin (the server kills its sandboxes and exits), then wait."""
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


def tag(name: str) -> str:
    """A name unique to this process and call."""
    return "%s-%s" % (name, uuid.uuid4().hex[:12])
