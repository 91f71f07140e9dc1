"""The gateway side of session binding (seed 002 §8, §13): the heartbeat before every frame,
releasing the bind when a connection leaves, and the frames that bind or watch a session.

A connection is bound (holds the session's bind, or joined a multi-client session) or a
monitor (sees events and may steer, pause, resume and stop, but never binds and never
heartbeats, so it cannot keep a session alive or steal it).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

import grpc

from gateway.handlers import FrameError, _str, handles
from vance.domain import PROFILE_PATTERN
from vance.v1 import common_pb2 as pb
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import session_pb2 as spb

if TYPE_CHECKING:
    from gateway.ws import Connection

logger = logging.getLogger(__name__)

# WebSocket close code when the bind is lost for good (taken over, session closed/archived).
CLOSE_BIND_LOST = 4409

_ENUMS: dict[str, tuple[Any, str]] = {
    "onDisconnect": (rpb.OnDisconnect, "ON_DISCONNECT_"),
    "onIdle": (rpb.OnIdle, "ON_IDLE_"),
    "onSuspend": (rpb.OnSuspend, "ON_SUSPEND_"),
}
_DURATIONS = {
    "idleTimeoutMs": "idle_timeout_ms",
    "suspendKeepDurationMs": "suspend_keep_duration_ms",
}


def caller(conn: Connection) -> spb.Caller:
    return spb.Caller(user_id=conn.principal.username, roles=list(conn.principal.roles))


def lifecycle_from_frame(data: dict[str, Any]) -> rpb.LifecycleProperties:
    """`session-create{lifecycle:{...}}`: the caller's explicit values (seed 002 §6)."""
    raw = data.get("lifecycle") or {}
    if not isinstance(raw, dict):
        raise FrameError(400, "lifecycle must be an object", "bad_lifecycle")
    out = rpb.LifecycleProperties()
    for key, value in raw.items():
        if key in _ENUMS:
            enum, prefix = _ENUMS[key]
            name = f"{prefix}{str(value).upper()}"
            if name not in enum.keys() or name.endswith("UNSPECIFIED"):
                raise FrameError(400, f"lifecycle.{key} {value!r} is not allowed", "bad_lifecycle")
            setattr(out, _snake(key), enum.Value(name))
        elif key in _DURATIONS:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise FrameError(
                    400, f"lifecycle.{key} must be a non-negative integer", "bad_lifecycle"
                )
            setattr(out, _DURATIONS[key], value)
        else:
            raise FrameError(400, f"unknown lifecycle property {key!r}", "bad_lifecycle")
    return out


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


async def heartbeat(conn: Connection) -> str:
    """Before every frame of a bound connection: "" to go on, else the reason to close.
    A session_service outage does not drop clients: the frame goes on unchecked."""
    if not conn.session_id or conn.monitor:
        return ""
    try:
        beat = await conn.clients.sessions.Heartbeat(
            spb.HeartbeatRequest(
                session_id=conn.session_id, connection_id=conn.connection_id, reclaim=True
            )
        )
    except grpc.aio.AioRpcError as exc:
        logger.warning("heartbeat of %s failed: %s", conn.session_id, exc.code().name)
        return ""
    return "" if beat.ok else beat.reason or "session_bound_elsewhere"


def lost_code(reason: str) -> int:
    """As in the resume table: a closed (or deleted) session is gone, the rest a conflict."""
    return 404 if reason == "session_closed" else 409


async def release(conn: Connection, *, disconnect: bool) -> None:
    """Gives the bind back (escalating to a survivor of a multi-client session); with
    `disconnect`, session_service applies the session's onDisconnect."""
    if not conn.session_id or conn.monitor:
        return
    try:
        await conn.clients.sessions.ReleaseBind(
            spb.ReleaseBindRequest(
                session_id=conn.session_id,
                connection_id=conn.connection_id,
                disconnect=disconnect,
            )
        )
    except grpc.aio.AioRpcError as exc:
        # The stale-bind sweep frees it later; onDisconnect is lost for this once.
        logger.warning("releasing the bind of %s failed: %s", conn.session_id, exc.code().name)


def _since(data: dict[str, Any]) -> int:
    since = data.get("sinceSeq", 0)
    if not isinstance(since, int) or isinstance(since, bool) or since < 0:
        raise FrameError(400, "sinceSeq must be a non-negative integer", "bad_sinceSeq")
    return since


def _reply(s: spb.Session) -> dict[str, Any]:
    return {
        "sessionId": s.session_id,
        "projectId": s.project_id,
        "chatProcessId": s.chat_process_id or None,
        "chatProcessName": s.chat_process_name or None,
        "chatEngine": s.chat_engine or None,
        "status": pb.SessionStatus.Name(s.status).removeprefix("SESSION_STATUS_")
        if s.status
        else None,
    }


@handles("session-create")
async def session_create(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    """Creates a session bound to this connection from the start (no window in which another
    connection could take it)."""
    profile = _str(data, "profile") or conn.profile
    if not re.match(PROFILE_PATTERN, profile):
        raise FrameError(400, f"profile must match {PROFILE_PATTERN}", "bad_profile")
    multi = data.get("allowMultipleClients", False)
    if not isinstance(multi, bool):
        raise FrameError(400, "allowMultipleClients must be a boolean", "bad_allowMultipleClients")
    hub = data.get("hub", False)
    if not isinstance(hub, bool):
        raise FrameError(400, "hub must be a boolean", "bad_hub")
    if hub:
        return await _open_hub(conn, profile)
    session = await conn.clients.sessions.CreateSession(
        spb.CreateSessionRequest(
            tenant_id=conn.principal.tenant_id,
            project_id=_str(data, "projectId", required=True),
            owner_user_id=conn.principal.username,
            profile=profile,
            autonomous=bool(data.get("autonomous", False)),
            chat_engine=_str(data, "chatEngine"),
            lifecycle=lifecycle_from_frame(data),
            allow_multiple_clients=multi,
            recipe=_str(data, "recipe"),
            connection_id=conn.connection_id,
        )
    )
    await release(conn, disconnect=False)
    await conn.bind(session.session_id, session.chat_process_id, 0)
    return _reply(session)


async def _open_hub(conn: Connection, profile: str) -> dict[str, Any]:
    """`session-create{hub:true}`: the user's most recent unbound open hub session, or a new one
    whose chat runs Eddie (session_service/home.py)."""
    opened = await conn.clients.sessions.OpenHubSession(
        spb.OpenHubSessionRequest(
            tenant_id=conn.principal.tenant_id,
            username=conn.principal.username,
            connection_id=conn.connection_id,
            profile=profile,
        )
    )
    if conn.session_id and conn.session_id != opened.session.session_id:
        await release(conn, disconnect=False)
    s = opened.session
    await conn.bind(s.session_id, s.chat_process_id, 0)
    return {**_reply(s), "hub": True, "resumed": opened.resumed}


@handles("session-resume")
async def session_resume(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    """404 missing or closed, 403 foreign, 409 archived, 409 session_bound_elsewhere unless
    `takeover` (owner only); a stale bind is taken over, a SUSPENDED session resumed."""
    session_id = data.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise FrameError(400, "sessionId is required", "sessionId_required")
    takeover = data.get("takeover", False)
    if not isinstance(takeover, bool):
        raise FrameError(400, "takeover must be a boolean", "bad_takeover")
    since = _since(data)
    bound = await conn.clients.sessions.BindSession(
        spb.BindSessionRequest(
            tenant_id=conn.principal.tenant_id,
            session_id=session_id,
            connection_id=conn.connection_id,
            caller=caller(conn),
            takeover=takeover,
        )
    )
    if conn.session_id and conn.session_id != session_id:
        await release(conn, disconnect=False)
    s = bound.session
    await conn.bind(s.session_id, s.chat_process_id, since)
    return {
        **_reply(s),
        "sinceSeq": since,
        "bound": bound.bound,
        "resumed": bound.resumed,
        "tookOver": bool(bound.previous_connection_id),
    }


@handles("session-monitor")
async def session_monitor(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    """Watches a session without binding it (web/mobile/event-driven Monitor-Reattach)."""
    session_id = data.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise FrameError(400, "sessionId is required", "sessionId_required")
    since = _since(data)
    s = await conn.clients.sessions.MonitorSession(
        spb.SessionOpRequest(
            tenant_id=conn.principal.tenant_id, session_id=session_id, caller=caller(conn)
        )
    )
    await release(conn, disconnect=False)
    await conn.bind(s.session_id, s.chat_process_id, since, monitor=True)
    return {**_reply(s), "sinceSeq": since, "monitor": True}


@handles("session-unbind")
async def session_unbind(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    """Leaves the session without onDisconnect: the client stays and may bind another."""
    await release(conn, disconnect=False)
    await conn.unbind()
    return {}


@handles("logout")
async def logout(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    """The same path as a disconnect (onDisconnect applies), then the socket closes."""
    await release(conn, disconnect=True)
    await conn.unbind()
    conn.close_after_reply = (1000, "logout")
    return {}
