"""REST routes of the gateway (seed 002 §10.2, §11, §12): session lifecycle operations.

Every route needs a bearer token of the path's tenant; session_service checks that the caller
is the owner or a tenant admin. All operations are idempotent: archiving an archived session,
resuming an open one, reactivating a reactivated one return the current state; deleting a
deleted session answers `{"deleted": false}`.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

import grpc
from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field

from gateway.auth import Principal, Tokens, bearer
from gateway.clients import Clients
from vance.errors import UnauthenticatedError, http_status_for, reason_of
from vance.v1 import common_pb2 as pb
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import session_pb2 as spb

router = APIRouter()
T = TypeVar("T")


class ReactivateBody(BaseModel):
    profile: str = ""


class ExtendBody(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    transition_at: int = Field(default=0, alias="transitionAt", ge=0)
    extend_by_ms: int = Field(default=0, alias="extendByMs", ge=0)


def _principal(request: Request, tenant: str) -> Principal:
    tokens: Tokens = request.app.state.tokens
    try:
        principal = tokens.verify(
            bearer(request.headers.get("authorization"), request.query_params.get("token"))
        )
    except UnauthenticatedError as exc:
        raise HTTPException(401, _error(401, exc.message, exc.reason)) from exc
    if principal.tenant_id != tenant:
        raise HTTPException(403, _error(403, "the token is for another tenant", "tenant_mismatch"))
    return principal


def _clients(request: Request) -> Clients:
    clients: Clients = request.app.state.clients()
    return clients


def _error(code: int, message: str, reason: str) -> dict[str, Any]:
    return {"errorCode": code, "errorMessage": message, "reason": reason}


async def _call(call: Awaitable[T]) -> T:
    try:
        return await call
    except grpc.aio.AioRpcError as exc:
        status = http_status_for(exc.code())
        raise HTTPException(status, _error(status, exc.details() or "", reason_of(exc))) from exc


def _op(request: Request, tenant: str, session_id: str, profile: str = "") -> spb.SessionOpRequest:
    p = _principal(request, tenant)
    return spb.SessionOpRequest(
        tenant_id=tenant,
        session_id=session_id,
        caller=spb.Caller(user_id=p.username, roles=list(p.roles)),
        profile=profile,
    )


def _name(enum: Any, value: int, prefix: str) -> str | None:
    return str(enum.Name(value)).removeprefix(prefix) if value else None


def session_data(s: spb.Session) -> dict[str, Any]:
    """A session's lifecycle view, as the REST routes return it."""
    lc = s.lifecycle
    return {
        "sessionId": s.session_id,
        "projectId": s.project_id,
        "ownerUserId": s.owner_user_id,
        "status": _name(pb.SessionStatus, s.status, "SESSION_STATUS_"),
        "profile": s.profile,
        "chatProcessId": s.chat_process_id or None,
        "chatProcessName": s.chat_process_name or None,
        "chatEngine": s.chat_engine or None,
        "bootstrapRecipe": s.bootstrap_recipe or None,
        "lifecycle": {
            "onDisconnect": _name(rpb.OnDisconnect, lc.on_disconnect, "ON_DISCONNECT_"),
            "onIdle": _name(rpb.OnIdle, lc.on_idle, "ON_IDLE_"),
            "onSuspend": _name(rpb.OnSuspend, lc.on_suspend, "ON_SUSPEND_"),
            "idleTimeoutMs": lc.idle_timeout_ms,
            "suspendKeepDurationMs": lc.suspend_keep_duration_ms,
        },
        "bound": bool(s.bound_connection_id),
        "suspendCause": _name(pb.SuspendCause, s.suspend_cause, "SUSPEND_CAUSE_"),
        "suspendedAt": s.suspended_at_ms or None,
        "transitionAt": s.transition_at_ms or None,
        "closeReason": _name(pb.CloseReason, s.close_reason, "CLOSE_REASON_"),
        "archivedAt": s.archived_at_ms or None,
        "reactivatedAt": s.reactivated_at_ms or None,
        "lastActivityAt": s.last_activity_at_ms,
        "generation": s.generation,
    }


@router.post("/brain/{tenant}/session/{session_id}/archive")
async def archive(request: Request, tenant: str, session_id: str) -> dict[str, Any]:
    op = _op(request, tenant, session_id)
    return session_data(await _call(_clients(request).sessions.ArchiveSession(op)))


@router.post("/brain/{tenant}/session/{session_id}/reactivate")
async def reactivate(
    request: Request, tenant: str, session_id: str, body: ReactivateBody | None = None
) -> dict[str, Any]:
    profile = (body.profile if body else "") or request.headers.get("x-vance-profile") or ""
    op = _op(request, tenant, session_id, profile)
    return session_data(await _call(_clients(request).sessions.ReactivateSession(op)))


@router.post("/brain/{tenant}/session/{session_id}/resume")
async def resume(request: Request, tenant: str, session_id: str) -> dict[str, Any]:
    op = _op(request, tenant, session_id)
    return session_data(await _call(_clients(request).sessions.ResumeSession(op)))


@router.post("/brain/{tenant}/session/{session_id}/extend")
async def extend(
    request: Request, tenant: str, session_id: str, body: ExtendBody
) -> dict[str, Any]:
    op = _op(request, tenant, session_id)
    req = spb.ExtendSessionRequest(
        tenant_id=tenant,
        session_id=session_id,
        caller=op.caller,
        transition_at_ms=body.transition_at,
        extend_by_ms=body.extend_by_ms,
    )
    return session_data(await _call(_clients(request).sessions.ExtendSession(req)))


@router.delete("/brain/{tenant}/session/{session_id}")
async def delete(request: Request, tenant: str, session_id: str) -> dict[str, Any]:
    op = _op(request, tenant, session_id)
    resp = await _call(_clients(request).sessions.DeleteSession(op))
    return {"sessionId": session_id, "deleted": resp.deleted}
