"""The client WebSocket: who may connect (token from a header, `?token=`, the subprotocol or
a first `auth` frame), then the frame loop: limits and the envelope are checked here, the
frame itself goes to gateway/dispatch.py."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from gateway import binding
from gateway.auth import Principal
from gateway.bind_rounds import BindRounds
from gateway.client_tools import ClientToolHub
from gateway.clients import Clients
from gateway.connection import Connection
from gateway.dispatch import dispatch, error_frame_for
from gateway.errors import GatewayError
from gateway.frames import error_frame
from gateway.inputs import AuthData, Envelope
from gateway.limits import MAX_FRAME_BYTES, MAX_ID_CHARS, check_tree, load_json
from gateway.replica import GOING_AWAY, Replica
from vance.domain import PROFILE_PATTERN
from vance.errors import UnauthenticatedError
from vance.observability import tracing

logger = logging.getLogger(__name__)

SUBPROTOCOL = "vance.v1"
BEARER_SUBPROTOCOL = "vance.bearer."
AUTH_FRAME_TIMEOUT_S = 10.0

Authenticate = Callable[[str], Awaitable[Principal]]
CheckRevoked = Callable[[Principal], Awaitable[None]]


@dataclass(frozen=True)
class SocketDeps:
    authenticate: Authenticate  # verifies signature, expiry and revocation
    check_revoked: CheckRevoked  # revocation alone, before every frame (cached briefly)
    revoke: CheckRevoked  # revokes the token (the `logout` frame)
    clients: Callable[[], Clients]  # made lazily, in the server's event loop
    ping_interval_s: int
    bind_lease_ms: int
    replica: Replica | None = None  # this replica's sessions (gateway/replica.py)
    client_tools: ClientToolHub | None = None  # tools clients host (gateway/client_tools.py)
    # The replica's bind rounds (gateway/bind_rounds.py); None: every frame asks (no lease).
    bind_rounds: BindRounds | None = None


def _offered_token(ws: WebSocket) -> str:
    header = ws.headers.get("authorization") or ""
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    if token := ws.query_params.get("token"):
        return token
    for proto in ws.scope.get("subprotocols", []):
        if proto.startswith(BEARER_SUBPROTOCOL):
            return str(proto[len(BEARER_SUBPROTOCOL) :])
    return ""


async def _auth_frame_token(ws: WebSocket) -> str:
    """The token of a first `{"type": "auth", "data": {"token": ...}}` frame sent within
    AUTH_FRAME_TIMEOUT_S; "" when none came."""
    try:
        async with asyncio.timeout(AUTH_FRAME_TIMEOUT_S):
            message = await ws.receive()
    except TimeoutError:
        return ""
    text = message.get("text")
    if message["type"] != "websocket.receive" or text is None:
        return ""
    try:
        raw = load_json(text, limit=MAX_FRAME_BYTES)
        check_tree(raw)
        env = Envelope.model_validate(raw)
        if env.type != "auth":
            return ""
        return AuthData.model_validate(env.data).token
    except (GatewayError, ValidationError):
        return ""


async def serve(ws: WebSocket, tenant: str, deps: SocketDeps) -> None:
    # Accept first, then refuse with a close code and reason a client can read. A client that
    # offers the `vance.v1` subprotocol (a browser sending its token as a subprotocol) must get
    # it back, or the browser drops the socket.
    offered = ws.scope.get("subprotocols", [])
    await ws.accept(subprotocol=SUBPROTOCOL if SUBPROTOCOL in offered else None)
    token = _offered_token(ws) or await _auth_frame_token(ws)
    try:
        if not token:
            raise UnauthenticatedError("a bearer token is required", reason="token_required")
        principal = await deps.authenticate(token)
    except UnauthenticatedError as exc:
        await ws.close(code=4401, reason=exc.reason)
        return
    if principal.tenant_id != tenant:
        await ws.close(code=4403, reason="tenant_mismatch")
        return
    profile = ws.headers.get("x-vance-profile") or ws.query_params.get("profile") or "default"
    if not re.match(PROFILE_PATTERN, profile):
        await ws.close(code=4400, reason="bad_profile")
        return
    async with asyncio.TaskGroup() as tasks:
        conn = Connection(
            ws,
            principal,
            deps.clients(),
            tasks,
            profile=profile,
            ping_interval_s=deps.ping_interval_s,
            bind_lease_ms=deps.bind_lease_ms,
            bind_rounds=deps.bind_rounds,
            revoke=deps.revoke,
        )
        conn.client_tools = deps.client_tools
        going_away = False
        if deps.replica is not None:
            deps.replica.add(conn)
        try:
            await conn.welcome()
            going_away = await _frames(conn, deps) == GOING_AWAY
        except WebSocketDisconnect as exc:
            # The client left: the normal end of a socket; the bind is released below.
            going_away = exc.code == GOING_AWAY
        finally:
            keep_bind = False
            if deps.replica is not None:
                keep_bind = deps.replica.remove(conn, going_away=going_away)
            if not keep_bind:
                # onDisconnect applies. A stopping replica (or one that lost its lease) instead
                # keeps the bind for the client to resume (gateway/replica.py).
                await binding.release(conn, disconnect=True)
            await conn.unbind()


async def _frames(conn: Connection, deps: SocketDeps) -> int | None:
    """Handles frames until the socket ends; the close code when the peer (or the stopping
    server) ended it."""
    while not conn.closed:
        message = await conn.ws.receive()
        if message["type"] == "websocket.disconnect":
            return int(message.get("code") or 1000)
        text = message.get("text")
        if text is None:
            await conn.send(
                error_frame(
                    400,
                    "binary frames are not accepted: send each frame as a JSON text message",
                    "binary_frame",
                    reply_to=None,
                )
            )
            continue
        await _handle(conn, deps, text)
    return None


def _reply_id(raw: Any) -> str | None:
    """The frame's own id, when it is usable, so even a refused frame's error can be matched."""
    fid = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(fid, str) and len(fid) <= MAX_ID_CHARS and fid.isascii():
        return fid
    return None


async def _handle(conn: Connection, deps: SocketDeps, text: str) -> None:
    raw: Any = None
    try:
        raw = load_json(text, limit=MAX_FRAME_BYTES)
        check_tree(raw)
        if not isinstance(raw, dict):
            raise GatewayError(400, "a frame is a JSON object", "bad_frame")
        env = Envelope.model_validate(raw)
    except ValidationError as exc:
        err = GatewayError(400, f"not a frame: {exc.errors()[0]['msg']}", "bad_frame")
        await conn.send(error_frame_for(err, reply_to=None))
        return
    except GatewayError as exc:
        await conn.send(error_frame_for(exc, reply_to=_reply_id(raw)))
        return
    # A token revoked (logout elsewhere, an admin) ends the socket at its next frame.
    try:
        await deps.check_revoked(conn.principal)
    except UnauthenticatedError as exc:
        await conn.send(error_frame(401, exc.message, exc.reason, reply_to=env.id))
        await conn.close(4401, exc.reason)
        return
    # Every inbound frame renews the bind (seed 002 §8.3); a lost bind ends the connection.
    lost = await binding.heartbeat(conn)
    if lost:
        await conn.send(
            error_frame(
                binding.lost_code(lost),
                "this connection lost the session's bind",
                lost,
                reply_to=env.id,
            )
        )
        conn.session_id = ""  # nothing to release: the bind is someone else's
        await conn.close(binding.CLOSE_BIND_LOST, lost)
        return
    with tracing.frame_span(env.type, conn.session_id):
        await dispatch(conn, env)
    if conn.close_after_reply is not None:
        await conn.close(*conn.close_after_reply)
