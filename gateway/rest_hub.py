"""REST routes of the hub (docs/protocol.md "Hub"): projects (SYSTEM ones hidden by default,
never deletable) and the caller's own inbox (list, read, mark, answer)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from gateway.rest_deps import PathId, caller, clients, principal
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


async def _caller(request: Request, tenant: PathId) -> spb.Caller:
    return caller(await principal(request, tenant))


@router.get("/brain/{tenant}/projects")
async def list_projects(
    request: Request, tenant: PathId, kind: str = "", includeArchived: bool = False
) -> dict[str, Any]:
    resp = await clients(request).sessions.ListProjects(
        spb.ListProjectsRequest(
            tenant_id=tenant,
            caller=await _caller(request, tenant),
            kind=kind,
            include_archived=includeArchived,
        )
    )
    return {"projects": [project_data(p) for p in resp.projects]}


@router.delete("/brain/{tenant}/projects/{project_id}")
async def delete_project(request: Request, tenant: PathId, project_id: PathId) -> dict[str, Any]:
    op = spb.ProjectOpRequest(
        tenant_id=tenant, project_id=project_id, caller=await _caller(request, tenant)
    )
    resp = await clients(request).sessions.DeleteProject(op)
    return {"deleted": resp.deleted}


async def _ref(request: Request, tenant: PathId, item_id: PathId) -> spb.InboxItemRef:
    p = await principal(request, tenant)
    return spb.InboxItemRef(tenant_id=tenant, user_id=p.username, item_id=item_id)


@router.get("/brain/{tenant}/inbox")
async def list_inbox(request: Request, tenant: PathId, unreadOnly: bool = False) -> dict[str, Any]:
    p = await principal(request, tenant)
    resp = await clients(request).sessions.ListInboxItems(
        spb.ListInboxItemsRequest(tenant_id=tenant, user_id=p.username, unread_only=unreadOnly)
    )
    return {"items": [inbox_data(i) for i in resp.items]}


@router.get("/brain/{tenant}/inbox/{item_id}")
async def read_inbox_item(request: Request, tenant: PathId, item_id: PathId) -> dict[str, Any]:
    item = await clients(request).sessions.GetInboxItem(await _ref(request, tenant, item_id))
    return inbox_data(item)


@router.post("/brain/{tenant}/inbox/{item_id}/mark")
async def mark_inbox_item(
    request: Request, tenant: PathId, item_id: PathId, body: MarkBody | None = None
) -> dict[str, Any]:
    ref = await _ref(request, tenant, item_id)
    read = body.read if body else True
    item = await clients(request).sessions.MarkInboxItem(
        spb.MarkInboxItemRequest(ref=ref, read=read)
    )
    return inbox_data(item)


@router.post("/brain/{tenant}/inbox/{item_id}/answer")
async def answer_inbox_item(
    request: Request, tenant: PathId, item_id: PathId, body: AnswerBody
) -> dict[str, Any]:
    ref = await _ref(request, tenant, item_id)
    item = await clients(request).sessions.AnswerInboxItem(
        spb.AnswerInboxItemRequest(ref=ref, answer=body.answer)
    )
    return inbox_data(item)
