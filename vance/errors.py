"""One error hierarchy for every service, mapped to gRPC status codes in exactly one place."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar, cast

import grpc

logger = logging.getLogger(__name__)

REASON_KEY = "vance-reason"


class VanceError(Exception):
    """Base of every error a service raises on purpose. `reason` is a stable machine string."""

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL
    http_status = 500

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or self.default_reason()

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


def from_rpc_error(err: grpc.aio.AioRpcError) -> VanceError:
    """A downstream service's error as ours, same status and reason, to pass on unchanged."""
    classes: list[type[VanceError]] = [
        NotFoundError,
        InvalidArgumentError,
        FailedPreconditionError,
        AlreadyExistsError,
        AbortedError,
        PermissionDeniedError,
        UnauthenticatedError,
        UnavailableError,
    ]
    cls = next((c for c in classes if c.code == err.code()), VanceError)
    return cls(err.details() or err.code().name, reason=reason_of(err))


def reason_of(err: grpc.aio.AioRpcError) -> str:
    """The `reason` a service attached to a failed call, or a name derived from the code."""
    for key, value in err.trailing_metadata() or ():
        if key == REASON_KEY:
            return str(value)
    return str(err.code().name).lower()


F = TypeVar("F", bound=Callable[..., Any])


async def _abort(context: grpc.aio.ServicerContext[Any, Any], exc: BaseException) -> None:
    if isinstance(exc, VanceError):
        context.set_trailing_metadata(((REASON_KEY, exc.reason),))
        await context.abort(exc.code, exc.message)
    logger.exception("unhandled error in servicer", exc_info=exc)
    context.set_trailing_metadata(((REASON_KEY, "internal"),))
    await context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}")


def grpc_errors(fn: F) -> F:
    """Maps VanceError (and anything unexpected) raised by a servicer method to a gRPC status."""
    if inspect.isasyncgenfunction(fn):

        @functools.wraps(fn)
        async def stream_wrapper(self: Any, request: Any, context: Any) -> AsyncIterator[Any]:
            try:
                async for item in fn(self, request, context):
                    yield item
            except (VanceError, Exception) as exc:
                if isinstance(exc, grpc.aio.AbortError):
                    raise
                await _abort(context, exc)

        return cast(F, stream_wrapper)

    @functools.wraps(fn)
    async def unary_wrapper(self: Any, request: Any, context: Any) -> Any:
        try:
            return await fn(self, request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as exc:
            await _abort(context, exc)

    return cast(F, unary_wrapper)
