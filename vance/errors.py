"""One error hierarchy for every service, mapped to gRPC status codes in exactly one place:
`abort`, called by the server interceptor every service installs (vance/rpc_calls.py) and by the
auth interceptor (vance/authz.py). A refused call carries the standard rich status
(`google.rpc.Status` in `grpc-status-details-bin`, with `google.rpc.ErrorInfo` and, for invalid
input, `google.rpc.BadRequest`) and, for older clients, the `vance-reason` trailer
(docs/protocol.md, "Errors")."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

logger = logging.getLogger(__name__)

REASON_KEY = "vance-reason"
DETAILS_KEY = "grpc-status-details-bin"
DOMAIN = "vance.dev"


class VanceError(Exception):
    """Base of every error a service raises on purpose. `reason` is a stable machine string."""

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL
    http_status = 500

    def __init__(
        self,
        message: str,
        *,
        reason: str = "",
        field: str = "",
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or self.default_reason()
        # The request field at fault (a BadRequest.FieldViolation for INVALID_ARGUMENT), and
        # facts a program may act on (ErrorInfo.metadata), e.g. {"sessionId": ...}.
        self.field = field
        self.metadata = dict(metadata) if metadata else {}

    @classmethod
    def default_reason(cls) -> str:
        return cls.__name__.removesuffix("Error").lower()


class NotFoundError(VanceError):
    code = grpc.StatusCode.NOT_FOUND
    http_status = 404


class InvalidArgumentError(VanceError):
    code = grpc.StatusCode.INVALID_ARGUMENT
    http_status = 400


class FailedPreconditionError(VanceError):
    code = grpc.StatusCode.FAILED_PRECONDITION
    http_status = 409


class AlreadyExistsError(VanceError):
    code = grpc.StatusCode.ALREADY_EXISTS
    http_status = 409


class AbortedError(VanceError):
    code = grpc.StatusCode.ABORTED
    http_status = 409


class PermissionDeniedError(VanceError):
    code = grpc.StatusCode.PERMISSION_DENIED
    http_status = 403


class UnauthenticatedError(VanceError):
    code = grpc.StatusCode.UNAUTHENTICATED
    http_status = 401


class UnavailableError(VanceError):
    code = grpc.StatusCode.UNAVAILABLE
    http_status = 503


class DeadlineExceededError(VanceError):
    """A peer service did not answer a call within its deadline (vance/authclient.py)."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED
    http_status = 504


class UnimplementedError(VanceError):
    """A method this server does not serve (the generated base servicer's NotImplementedError)."""

    code = grpc.StatusCode.UNIMPLEMENTED
    http_status = 501


_HTTP_BY_CODE: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}


def http_status_for(code: grpc.StatusCode) -> int:
    return _HTTP_BY_CODE.get(code, 500)


_PASSED_ON_CLASSES: tuple[type[VanceError], ...] = (
    NotFoundError,
    InvalidArgumentError,
    FailedPreconditionError,
    AlreadyExistsError,
    AbortedError,
    PermissionDeniedError,
    UnauthenticatedError,
    UnavailableError,
    DeadlineExceededError,
)


def from_rpc_error(err: grpc.aio.AioRpcError) -> VanceError:
    """A downstream service's error as ours, same status, reason, field and metadata, to pass
    on unchanged."""
    cls = next((c for c in _PASSED_ON_CLASSES if c.code == err.code()), VanceError)
    info = error_info(err)
    violations = field_violations(err)
    message = err.details() or err.code().name
    if cls is DeadlineExceededError and info is None:
        message = f"a service did not answer within the call's deadline ({message})"
    return cls(
        message,
        reason=info.reason if info is not None else reason_of(err),
        field=violations[0].field if violations else "",
        metadata=dict(info.metadata) if info is not None else None,
    )


def reason_of(err: grpc.aio.AioRpcError) -> str:
    """The `reason` a service attached to a failed call, or a name derived from the code."""
    info = error_info(err)
    if info is not None and info.reason:
        return str(info.reason)
    for key, value in err.trailing_metadata() or ():
        if key == REASON_KEY:
            return str(value)
    return str(err.code().name).lower()


def rich_status(err: grpc.aio.AioRpcError) -> status_pb2.Status | None:
    """The `google.rpc.Status` a failed call carries, if any."""
    for key, value in err.trailing_metadata() or ():
        if key == DETAILS_KEY and isinstance(value, bytes):
            return status_pb2.Status.FromString(value)
    return None


def error_info(err: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo | None:
    return _info_in(rich_status(err))


def field_violations(
    err: grpc.aio.AioRpcError,
) -> list[error_details_pb2.BadRequest.FieldViolation]:
    return _violations_in(rich_status(err))


def _info_in(status: status_pb2.Status | None) -> error_details_pb2.ErrorInfo | None:
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info
    return None


def _violations_in(
    status: status_pb2.Status | None,
) -> list[error_details_pb2.BadRequest.FieldViolation]:
    for detail in status.details if status is not None else ():
        bad = error_details_pb2.BadRequest()
        if detail.Unpack(bad):
            return list(bad.field_violations)
    return []


_SUBJECT_AFFIXES = (("bad_", ""), ("invalid_", ""), ("", "_required"), ("", "_too_long"))


def field_of(error: VanceError) -> str:
    """The field an invalid-input error names: its own `field`, else the subject of its reason
    (`project` for `project_required`, `session_id` for `bad_session_id`)."""
    if error.field:
        return error.field
    for prefix, suffix in _SUBJECT_AFFIXES:
        reason = error.reason
        if reason.startswith(prefix) and reason.endswith(suffix) and reason != prefix + suffix:
            return reason[len(prefix) : len(reason) - len(suffix)]
    return ""


def status_details(code: grpc.StatusCode, error: VanceError) -> bytes:
    """`google.rpc.Status` for a refused call: ErrorInfo always, BadRequest for bad input.
    Its message is the call's details, as grpcio-status's `from_call` checks."""
    status = status_pb2.Status(code=code.value[0], message=error.message)
    info = any_pb2.Any()
    info.Pack(
        error_details_pb2.ErrorInfo(reason=error.reason, domain=DOMAIN, metadata=error.metadata)
    )
    status.details.append(info)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        violation = error_details_pb2.BadRequest.FieldViolation(
            field=field_of(error), description=error.message, reason=error.reason
        )
        bad = any_pb2.Any()
        bad.Pack(error_details_pb2.BadRequest(field_violations=[violation]))
        status.details.append(bad)
    serialized: bytes = status.SerializeToString()
    return serialized


# A peer's failures that a servicer's caller gets with their own code, also when the servicer
# called the peer's stub directly (not through vance/clients/_rpc.py): anything else is INTERNAL.
_PASSED_ON = frozenset({grpc.StatusCode.DEADLINE_EXCEEDED})


def as_error(exc: BaseException) -> VanceError:
    """The error a call that failed with `exc` ends with: a VanceError as it is, anything else
    as INTERNAL `internal` (logged with its traceback, never passed over)."""
    if isinstance(exc, VanceError):
        return exc
    if isinstance(exc, grpc.aio.AioRpcError) and exc.code() in _PASSED_ON:
        return from_rpc_error(exc)  # a peer's deadline passed: the caller learns it as such
    if isinstance(exc, NotImplementedError):
        return UnimplementedError("method not implemented", reason="unimplemented")
    logger.exception("unhandled error in servicer", exc_info=exc)
    return VanceError(f"internal error: {type(exc).__name__}", reason="internal")


_CODES = {c.value[0]: c for c in grpc.StatusCode}


def from_status(code: int, message: str, reason: str, status: bytes) -> VanceError:
    """A failed call's status that came as data (a call multiplexed on a stream, the
    `CallError` of process_service's SteerStream) as the error `from_rpc_error` makes of the
    same status ending a unary call."""
    grpc_code = _CODES.get(code, grpc.StatusCode.UNKNOWN)
    cls = next((c for c in _PASSED_ON_CLASSES if c.code == grpc_code), VanceError)
    parsed = status_pb2.Status.FromString(status) if status else None
    info = _info_in(parsed)
    violations = _violations_in(parsed)
    error = cls(
        message or grpc_code.name,
        reason=(info.reason if info is not None and info.reason else reason)
        or grpc_code.name.lower(),
        field=violations[0].field if violations else "",
        metadata=dict(info.metadata) if info is not None else None,
    )
    if cls is VanceError:
        # A code without a class of its own (UNKNOWN, INTERNAL, ...): the status as it came.
        error.code = grpc_code
        error.http_status = http_status_for(grpc_code)
    return error


async def abort(context: grpc.aio.ServicerContext[Any, Any], exc: BaseException) -> NoReturn:
    """Ends a call with the status of `exc` (`as_error`)."""
    error = as_error(exc)
    code = error.code
    await context.abort(
        code,
        error.message,
        ((REASON_KEY, error.reason), (DETAILS_KEY, status_details(code, error))),
    )
    raise AssertionError("context.abort returned")  # grpc.aio's abort always raises


F = TypeVar("F", bound=Callable[..., Any])


def grpc_errors(fn: F) -> F:
    """Marks a servicer method whose errors are mapped to a status. The mapping itself happens
    once for every method of every server, in its interceptor (vance/rpc_calls.py), so this
    adds nothing to a call; kept so servicers read as before."""
    return fn
