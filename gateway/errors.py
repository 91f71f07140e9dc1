"""The one place that turns a failure into what a client sees: an `error` frame on the
WebSocket, or a JSON body on REST (`{"detail": {"errorCode", "errorMessage", "reason"}}`).

Both sides call `describe`, so a service's `vance-reason` (carried as gRPC trailing metadata,
see vance/errors.py) reaches WebSocket and REST clients as the same `reason` with the same
HTTP-style status."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import grpc
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from vance.errors import VanceError, http_status_for, reason_of

logger = logging.getLogger(__name__)

# gRPC puts `details` into a header; a message echoing a huge id must not overflow it.
_MAX_MESSAGE = 500


class GatewayError(VanceError):
    """An error the gateway raises itself, with any HTTP-style status. `field` names the input
    field at fault (dotted path), when there is one."""

    def __init__(self, status: int, message: str, reason: str, *, field: str = "") -> None:
        super().__init__(message, reason=reason)
        self.http_status = status
        self.field = field


@dataclass(frozen=True)
class ErrorInfo:
    status: int
    message: str
    reason: str
    field: str = ""

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "errorCode": self.status,
            "errorMessage": self.message[:_MAX_MESSAGE],
            "reason": self.reason,
        }
        if self.field:
            out["field"] = self.field
        return out


def describe(exc: BaseException) -> ErrorInfo:
    """Status, message and reason for any failure; unexpected ones are logged with their
    traceback here (never passed over silently) and answered as 500 `internal`."""
    if isinstance(exc, GatewayError):
        return ErrorInfo(exc.http_status, exc.message, exc.reason, exc.field)
    if isinstance(exc, VanceError):
        return ErrorInfo(exc.http_status, exc.message, exc.reason)
    if isinstance(exc, grpc.aio.AioRpcError):
        return ErrorInfo(http_status_for(exc.code()), exc.details() or "", reason_of(exc))
    if isinstance(exc, ValidationError):
        return from_validation(exc.errors(include_url=False, include_input=False))
    logger.error("unexpected error", exc_info=exc)
    return ErrorInfo(500, f"internal error: {type(exc).__name__}", "internal")


def from_validation(errors: Any, *, status: int = 400, skip: int = 0) -> ErrorInfo:
    """The first pydantic error as `bad_<field>` (`<field>` is the top-level name after `skip`
    location parts), with the whole path in `field` and every problem in the message."""
    first = errors[0] if errors else {"loc": (), "msg": "invalid input"}
    loc = [str(p) for p in first.get("loc", ())][skip:]
    top = loc[0] if loc else "input"
    message = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ())[skip:]) or 'input'}: {e.get('msg', '')}"
        for e in list(errors)[:5]
    )
    return ErrorInfo(status, message, f"bad_{top}", ".".join(loc))


def rest_response(info: ErrorInfo) -> JSONResponse:
    return JSONResponse({"detail": info.body()}, status_code=info.status)


def install(app: FastAPI) -> None:
    """Every REST failure answers JSON with a reason: ours, a service's, FastAPI's validation
    (422, or 400 for path and query parameters), and anything unexpected (500 `internal`)."""

    async def on_error(request: Request, exc: Exception) -> JSONResponse:
        return rest_response(describe(exc))

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        detail = exc.detail
        if isinstance(detail, dict):
            return JSONResponse({"detail": detail}, status_code=exc.status_code)
        reason = str(detail).lower().replace(" ", "_") if detail else "http_error"
        info = ErrorInfo(exc.status_code, str(detail), reason)
        return JSONResponse({"detail": info.body()}, status_code=exc.status_code)

    async def on_invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = list(exc.errors())
        in_body = bool(errors) and str(errors[0].get("loc", ("body",))[0]) == "body"
        info = from_validation(
            [{k: v for k, v in e.items() if k != "input"} for e in errors],
            status=422 if in_body else 400,
            skip=1,
        )
        return rest_response(info)

    app.add_exception_handler(VanceError, on_error)
    app.add_exception_handler(grpc.aio.AioRpcError, on_error)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(RequestValidationError, on_invalid)
    app.add_exception_handler(Exception, on_error)
