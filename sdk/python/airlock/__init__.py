"""airlock: run untrusted document jobs in throwaway microVMs.

    from airlock import Sandbox

    with Sandbox.create(template="invoice-ocr", ttl_seconds=120,
                        metadata={"tenant_id": t, "invoice_id": i}) as sbx:
        sbx.filesystem.write("/job/in.pdf", pdf_bytes)
        result = sbx.exec("ocr /job/in.pdf", timeout_seconds=60)

The same with asyncio (``airlock.aio``):

    async with AsyncSandbox.create(template="invoice-ocr", ttl_seconds=120) as sbx:
        await sbx.filesystem.write("/job/in.pdf", pdf_bytes)
        result = await sbx.exec("ocr /job/in.pdf", timeout_seconds=60)

Configuration comes from AIRLOCK_URL (unix:///run/airlock/airlock.sock by
default, or http://host:port) and AIRLOCK_API_KEY, or from an explicit
``Client(url=..., api_key=...)`` (``AsyncClient`` for asyncio) passed as
``client=``. Results are typed (airlock.types): SandboxInfo, Usage,
ExecResult, FileInfo, EgressPolicy, ProbeResult, Template, AuditRecord,
AuditPage, ProcessInfo, ProcessOutput, Key.

Background processes (``sbx.processes``) run without being waited for:

    p = sbx.processes.start("python3 /opt/serve.py")
    p.follow("stdout", on_data=sys.stdout.buffer.write)   # until it ends
    p.wait()                                            # p.exit_code, p.signal
"""

from . import aio
from ._http import DEFAULT_URL, Client
from .aio import AsyncClient, AsyncFilesystem, AsyncNetwork, AsyncProcess, AsyncProcesses, AsyncSandbox
from .errors import (AirlockError, AlreadyExistsError, DeadlineExceededError, EgressOpenError,
                     FailedPreconditionError, InternalError, InvalidArgumentError,
                     NotFoundError, PermissionDeniedError, ResourceExhaustedError,
                     UnavailableError)
from .process import Process, Processes
from .sandbox import (Filesystem, Network, Sandbox, audit, audit_iter, audit_page, keys, template,
                      templates)
from .types import (ArchiveResult, AuditPage, AuditRecord, EgressPolicy, EgressRule, ExecResult, FileInfo, Key,
                    ProbeResult, ProcessInfo, ProcessOutput, SandboxInfo, Template, Usage)

__version__ = "0.1.0"

__all__ = [
    "Sandbox", "Client", "Filesystem", "Network", "Processes", "Process", "templates", "template", "keys",
    "audit", "audit_page", "audit_iter", "aio", "AsyncClient", "AsyncSandbox", "AsyncFilesystem",
    "AsyncNetwork", "AsyncProcesses", "AsyncProcess",
    "SandboxInfo", "Usage", "ExecResult", "FileInfo", "EgressPolicy", "EgressRule", "ProbeResult", "Template",
    "AuditRecord", "AuditPage", "ProcessInfo", "ProcessOutput", "Key", "ArchiveResult",
    "DEFAULT_URL", "AirlockError", "InvalidArgumentError", "PermissionDeniedError",
    "NotFoundError", "AlreadyExistsError", "FailedPreconditionError", "EgressOpenError", "ResourceExhaustedError",
    "DeadlineExceededError", "UnavailableError", "InternalError",
]
