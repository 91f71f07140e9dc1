"""Handlers of the frames that bind, watch or leave a session (docs/protocol.md)."""

from __future__ import annotations

import re
from typing import Any

from gateway.binding import caller, release
from gateway.connection import Connection
from gateway.connection_profile import apply_profile
from gateway.errors import GatewayError
from gateway.inputs import CreateData, LifecycleData, MonitorData, NoData, ResumeData, required
from vance.domain import PROFILE_PATTERN
from vance.v1 import common_pb2 as pb
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import session_pb2 as spb

_ENUMS: dict[str, tuple[Any, str]] = {
    "on_disconnect": (rpb.OnDisconnect, "ON_DISCONNECT_"),
    "on_idle": (rpb.OnIdle, "ON_IDLE_"),
    "on_suspend": (rpb.OnSuspend, "ON_SUSPEND_"),
}


def lifecycle_proto(data: LifecycleData | None) -> rpb.LifecycleProperties:
    """`session-create{lifecycle:{...}}`: the caller's explicit values (seed 002 §6). Types
    and ranges are checked by LifecycleData; here the enum names."""
    out = rpb.LifecycleProperties()
    if data is None:
        return out
    for key, (enum, prefix) in _ENUMS.items():
        value = getattr(data, key)
        if value is None:
            continue
        name = f"{prefix}{value.upper()}"
        if name not in enum.keys() or name.endswith("UNSPECIFIED"):
            raise GatewayError(
                400, f"lifecycle.{key} {value!r} is not allowed", "bad_lifecycle", field="lifecycle"
            )
        setattr(out, key, enum.Value(name))
    if data.idle_timeout_ms is not None:
        out.idle_timeout_ms = data.idle_timeout_ms
    if data.suspend_keep_duration_ms is not None:
        out.suspend_keep_duration_ms = data.suspend_keep_duration_ms
    return out


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


async def session_create(conn: Connection, data: CreateData) -> dict[str, Any]:
    """Creates a session bound to this connection from the start (no window in which another
    connection could take it)."""
    profile = data.profile or conn.profile
    if not re.match(PROFILE_PATTERN, profile):
        raise GatewayError(400, f"profile must match {PROFILE_PATTERN}", "bad_profile")
    if data.hub:
        return await _open_hub(conn, profile)
    session = await conn.clients.sessions.CreateSession(
        spb.CreateSessionRequest(
            tenant_id=conn.principal.tenant_id,
            project_id=required(data.project_id, "projectId"),
            owner_user_id=conn.principal.username,
            profile=profile,
            autonomous=data.autonomous,
            chat_engine=data.chat_engine or "",
            lifecycle=lifecycle_proto(data.lifecycle),
            allow_multiple_clients=data.allow_multiple_clients,
            recipe=data.recipe or "",
            connection_id=conn.connection_id,
        )
    )
    await release(conn, disconnect=False)
    await conn.bind(session.session_id, session.chat_process_id, 0)
    return _reply(session)


async def _open_hub(conn: Connection, profile: str) -> dict[str, Any]:
    """`session-create{hub:true}`: the user's most recent unbound open hub session of this
    profile, or a new one whose chat runs Eddie (session_service/hub/home.py)."""
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


async def session_resume(conn: Connection, data: ResumeData) -> dict[str, Any]:
    """404 missing or closed, 403 foreign, 409 archived, 409 session_bound_elsewhere unless
    `takeover` (owner only); a stale bind is taken over, a SUSPENDED session resumed."""
    session_id = required(data.session_id, "sessionId")
    bound = await conn.clients.sessions.BindSession(
        spb.BindSessionRequest(
            tenant_id=conn.principal.tenant_id,
            session_id=session_id,
            connection_id=conn.connection_id,
            caller=caller(conn),
            takeover=data.takeover,
        )
    )
    if conn.session_id and conn.session_id != session_id:
        await release(conn, disconnect=False)
    s = bound.session
    await conn.bind(s.session_id, s.chat_process_id, data.since_seq)
    if bound.bound:
        await apply_profile(conn, s)
    return {
        **_reply(s),
        "sinceSeq": data.since_seq,
        "bound": bound.bound,
        "resumed": bound.resumed,
        "tookOver": bool(bound.previous_connection_id),
    }


async def session_monitor(conn: Connection, data: MonitorData) -> dict[str, Any]:
    """Watches a session without binding it (web/mobile/event-driven Monitor-Reattach)."""
    session_id = required(data.session_id, "sessionId")
    s = await conn.clients.sessions.MonitorSession(
        spb.SessionOpRequest(
            tenant_id=conn.principal.tenant_id, session_id=session_id, caller=caller(conn)
        )
    )
    await release(conn, disconnect=False)
    await conn.bind(s.session_id, s.chat_process_id, data.since_seq, monitor=True)
    return {**_reply(s), "sinceSeq": data.since_seq, "monitor": True}


async def session_unbind(conn: Connection, data: NoData) -> dict[str, Any]:
    """Leaves the session without onDisconnect: the client stays and may bind another."""
    await release(conn, disconnect=False)
    await conn.unbind()
    return {}
