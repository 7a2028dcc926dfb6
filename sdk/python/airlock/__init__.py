"""airlock: run untrusted document jobs in throwaway microVMs.

    from airlock import Sandbox

    with Sandbox.create(template="invoice-ocr", ttl_seconds=120,
                        metadata={"tenant_id": t, "invoice_id": i}) as sbx:
        sbx.filesystem.write("/job/in.pdf", pdf_bytes)
        result = sbx.exec("ocr /job/in.pdf", timeout_seconds=60)

Configuration comes from AIRLOCK_URL (unix:///run/airlock/airlock.sock by
default, or http://host:port) and AIRLOCK_API_KEY, or from an explicit
``Client(url=..., api_key=...)`` passed as ``client=``.
"""

from ._http import DEFAULT_URL, Client
from .errors import (AirlockError, AlreadyExistsError, DeadlineExceededError,
                     FailedPreconditionError, InternalError, InvalidArgumentError,
                     NotFoundError, PermissionDeniedError, ResourceExhaustedError,
                     UnavailableError)
from .sandbox import ExecResult, FileInfo, Filesystem, Network, Sandbox, audit, templates

__version__ = "0.1.0"

__all__ = [
    "Sandbox", "Client", "ExecResult", "FileInfo", "Filesystem", "Network", "templates", "audit",
    "DEFAULT_URL", "AirlockError", "InvalidArgumentError", "PermissionDeniedError",
    "NotFoundError", "AlreadyExistsError", "FailedPreconditionError", "ResourceExhaustedError",
    "DeadlineExceededError", "UnavailableError", "InternalError",
]
