"""REST routes of the gateway (seed 002 §10.2, §11, §12): session lifecycle operations.

Every route needs a bearer token of the path's tenant; session_service checks that the caller
is the owner or a tenant admin. All operations are idempotent: archiving an archived session,
resuming an open one, reactivating a reactivated one return the current state; deleting a
deleted session answers `{"deleted": false}`.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from gateway.errors import GatewayError
from gateway.ranges import MAX_DURATION_MS, MAX_EPOCH_MS
from gateway.rest_deps import PathId, caller, clients, principal
from vance.domain import PROFILE_PATTERN
from vance.v1 import common_pb2 as pb
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import session_pb2 as spb

router = APIRouter()


class ReactivateBody(BaseModel):
    model_config = ConfigDict(strict=True)

    profile: str = Field(default="", max_length=64)


class ExtendBody(BaseModel):
    model_config = ConfigDict(populate_by_name=True, strict=True)  # true is not 1

    # Refused here (422) past a date or a duration that session_service can add to (and
    # store): gateway/ranges.py.
    transition_at: int = Field(default=0, alias="transitionAt", ge=0, le=MAX_EPOCH_MS)
    extend_by_ms: int = Field(default=0, alias="extendByMs", ge=0, le=MAX_DURATION_MS)


async def _op(
    request: Request, tenant: PathId, session_id: PathId, profile: str = ""
) -> spb.SessionOpRequest:
    p = await principal(request, tenant)
    return spb.SessionOpRequest(
        tenant_id=tenant, session_id=session_id, caller=caller(p), profile=profile
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
async def archive(request: Request, tenant: PathId, session_id: PathId) -> dict[str, Any]:
    op = await _op(request, tenant, session_id)
    return session_data(await clients(request).sessions.ArchiveSession(op))


@router.post("/brain/{tenant}/session/{session_id}/reactivate")
async def reactivate(
    request: Request, tenant: PathId, session_id: PathId, body: ReactivateBody | None = None
) -> dict[str, Any]:
    profile = (body.profile if body else "") or request.headers.get("x-vance-profile") or ""
    if profile and not re.match(PROFILE_PATTERN, profile):
        raise GatewayError(400, f"profile must match {PROFILE_PATTERN}", "bad_profile")
    op = await _op(request, tenant, session_id, profile)
    return session_data(await clients(request).sessions.ReactivateSession(op))


@router.post("/brain/{tenant}/session/{session_id}/resume")
async def resume(request: Request, tenant: PathId, session_id: PathId) -> dict[str, Any]:
    op = await _op(request, tenant, session_id)
    return session_data(await clients(request).sessions.ResumeSession(op))


@router.post("/brain/{tenant}/session/{session_id}/extend")
async def extend(
    request: Request, tenant: PathId, session_id: PathId, body: ExtendBody
) -> dict[str, Any]:
    op = await _op(request, tenant, session_id)
    req = spb.ExtendSessionRequest(
        tenant_id=tenant,
        session_id=session_id,
        caller=op.caller,
        transition_at_ms=body.transition_at,
        extend_by_ms=body.extend_by_ms,
    )
    return session_data(await clients(request).sessions.ExtendSession(req))


@router.delete("/brain/{tenant}/session/{session_id}")
async def delete(request: Request, tenant: PathId, session_id: PathId) -> dict[str, Any]:
    op = await _op(request, tenant, session_id)
    found = clients(request)
    resp = await found.sessions.DeleteSession(op, timeout=found.batch_timeout_s)
    return {"sessionId": session_id, "deleted": resp.deleted}
