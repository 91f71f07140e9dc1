"""REST routes of the hub (docs/protocol.md "Hub"): projects (SYSTEM ones hidden by default,
never deletable) and the caller's own inbox (list, read, mark, answer)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from gateway.rest import _call, _clients, _principal
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb

router = APIRouter()


class MarkBody(BaseModel):
    read: bool = True


class AnswerBody(BaseModel):
    answer: str = Field(min_length=1)


def project_data(p: spb.Project) -> dict[str, Any]:
    return {
        "projectId": p.project_id,
        "title": p.title,
        "kind": pb.ProjectKind.Name(p.kind).removeprefix("PROJECT_KIND_") if p.kind else "NORMAL",
        "ownerUserId": p.owner_user_id or None,
        "group": p.group or None,
        "archived": p.archived,
        "createdAt": p.created_at_ms,
    }


def inbox_data(i: spb.InboxItem) -> dict[str, Any]:
    return {
        "id": i.id,
        "title": i.title,
        "body": i.body,
        "sourceProcessId": i.source_process_id or None,
        "sourceSessionId": i.source_session_id or None,
        "createdAt": i.created_at_ms,
        "read": i.read,
        "answered": i.answered,
        "answer": i.answer or None,
        "requiresAnswer": i.requires_answer,
    }


def _caller(request: Request, tenant: str) -> spb.Caller:
    p = _principal(request, tenant)
    return spb.Caller(user_id=p.username, roles=list(p.roles))


@router.get("/brain/{tenant}/projects")
async def list_projects(
    request: Request, tenant: str, kind: str = "", includeArchived: bool = False
) -> dict[str, Any]:
    resp = await _call(
        _clients(request).sessions.ListProjects(
            spb.ListProjectsRequest(
                tenant_id=tenant,
                caller=_caller(request, tenant),
                kind=kind,
                include_archived=includeArchived,
            )
        )
    )
    return {"projects": [project_data(p) for p in resp.projects]}


@router.delete("/brain/{tenant}/projects/{project_id}")
async def delete_project(request: Request, tenant: str, project_id: str) -> dict[str, Any]:
    op = spb.ProjectOpRequest(
        tenant_id=tenant, project_id=project_id, caller=_caller(request, tenant)
    )
    resp = await _call(_clients(request).sessions.DeleteProject(op))
    return {"deleted": resp.deleted}


def _ref(request: Request, tenant: str, item_id: str) -> spb.InboxItemRef:
    p = _principal(request, tenant)
    return spb.InboxItemRef(tenant_id=tenant, user_id=p.username, item_id=item_id)


@router.get("/brain/{tenant}/inbox")
async def list_inbox(request: Request, tenant: str, unreadOnly: bool = False) -> dict[str, Any]:
    p = _principal(request, tenant)
    resp = await _call(
        _clients(request).sessions.ListInboxItems(
            spb.ListInboxItemsRequest(tenant_id=tenant, user_id=p.username, unread_only=unreadOnly)
        )
    )
    return {"items": [inbox_data(i) for i in resp.items]}


@router.get("/brain/{tenant}/inbox/{item_id}")
async def read_inbox_item(request: Request, tenant: str, item_id: str) -> dict[str, Any]:
    item = await _call(_clients(request).sessions.GetInboxItem(_ref(request, tenant, item_id)))
    return inbox_data(item)


@router.post("/brain/{tenant}/inbox/{item_id}/mark")
async def mark_inbox_item(
    request: Request, tenant: str, item_id: str, body: MarkBody | None = None
) -> dict[str, Any]:
    ref = _ref(request, tenant, item_id)
    read = body.read if body else True
    item = await _call(
        _clients(request).sessions.MarkInboxItem(spb.MarkInboxItemRequest(ref=ref, read=read))
    )
    return inbox_data(item)


@router.post("/brain/{tenant}/inbox/{item_id}/answer")
async def answer_inbox_item(
    request: Request, tenant: str, item_id: str, body: AnswerBody
) -> dict[str, Any]:
    ref = _ref(request, tenant, item_id)
    item = await _call(
        _clients(request).sessions.AnswerInboxItem(
            spb.AnswerInboxItemRequest(ref=ref, answer=body.answer)
        )
    )
    return inbox_data(item)
