"""Typed exceptions, one per airlock error code."""

from typing import Optional


class AirlockError(Exception):
    """Base of every error the SDK raises for a failed call.

    ``code`` is the server's stable error code ("not_found", ...), ``status``
    the HTTP status (0 when the daemon could not be reached at all) and
    ``reason`` the code's refinement for failures a caller decides on
    ("egress_open"), or None.
    """

    code = "internal"
    reason: Optional[str] = None

    def __init__(self, message: str, code: Optional[str] = None, status: int = 0,
                 reason: Optional[str] = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if reason is not None:
            self.reason = reason
        self.status = status

    def __str__(self) -> str:
        return "%s [%s]" % (self.message, self.code)


class InvalidArgumentError(AirlockError):
    code = "invalid_argument"


class PermissionDeniedError(AirlockError):
    code = "permission_denied"


class NotFoundError(AirlockError):
    code = "not_found"


class AlreadyExistsError(AirlockError):
    code = "already_exists"


class FailedPreconditionError(AirlockError):
    code = "failed_precondition"


class EgressOpenError(FailedPreconditionError):
    """A sandbox's egress self-check found a way out (``probe=True`` at
    create, or ``sbx.network.probe()``): send it nothing."""

    reason = "egress_open"


class ResourceExhaustedError(AirlockError):
    code = "resource_exhausted"


class DeadlineExceededError(AirlockError):
    code = "deadline_exceeded"


class UnavailableError(AirlockError):
    code = "unavailable"


class InternalError(AirlockError):
    code = "internal"


_BY_CODE = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        PermissionDeniedError,
        NotFoundError,
        AlreadyExistsError,
        FailedPreconditionError,
        ResourceExhaustedError,
        DeadlineExceededError,
        UnavailableError,
        InternalError,
    )
}

# The code of an error response that carries none (a proxy in between),
# by HTTP status: a copy of the table in internal/errdefs/http.go, which a
# test there keeps equal. Other 4xx are invalid_argument, the rest internal.
_BY_STATUS = {
    400: "invalid_argument",
    401: "permission_denied",
    403: "permission_denied",
    404: "not_found",
    409: "failed_precondition",
    413: "resource_exhausted",
    429: "resource_exhausted",
    500: "internal",
    502: "unavailable",
    503: "unavailable",
    504: "deadline_exceeded",
}


# Exceptions for a reason, by (code, reason).
_BY_REASON = {(EgressOpenError.code, EgressOpenError.reason): EgressOpenError}


def error_for(code: Optional[str], message: str, status: int,
              reason: Optional[str] = None) -> AirlockError:
    """The exception for an error code (and reason); a missing code is
    guessed from status."""
    if not code:
        code = _BY_STATUS.get(status, "invalid_argument" if 400 <= status < 500 else "internal")
    cls = _BY_REASON.get((code, reason)) or _BY_CODE.get(code, AirlockError)
    return cls(message, code=code, status=status, reason=reason or None)
