"""ASGI middleware: every REST request body passes gateway/limits.py before FastAPI parses it,
so a body that is too large, nested too deep, holds NaN, a lone surrogate or an integer beyond
64 bits gets a JSON 400 (413 for size) with a reason, never a 500."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.errors import ErrorInfo, GatewayError, describe, rest_response
from gateway.limits import MAX_BODY_BYTES, parse_json


class BodyGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            await self._refuse(scope, receive, send, _too_large())
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                await self._refuse(scope, receive, send, _too_large())
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body.strip():
            try:
                parse_json(body, limit=MAX_BODY_BYTES, what="body")
            except GatewayError as exc:
                await self._refuse(scope, receive, send, describe(exc))
                return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, info: ErrorInfo) -> None:
        await rest_response(info)(scope, receive, send)


def _too_large() -> ErrorInfo:
    return ErrorInfo(413, f"the body is larger than {MAX_BODY_BYTES} bytes", "body_too_large")
