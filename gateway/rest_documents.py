"""REST routes of the user's documents (docs/protocol.md "Documents"): the caller's own
documents and workspace files, listed and read. The user id is always the token's: there is no
way to name another user's documents, and a tenant admin sees only their own too."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from gateway.rest_deps import PathId, clients, principal
from vance.v1 import work_pb2 as wpb

router = APIRouter(tags=["documents"])

DocPath = Annotated[str, Path(max_length=200)]


async def _owner(request: Request, tenant: str) -> wpb.DocumentOwner:
    p = await principal(request, tenant)
    return wpb.DocumentOwner(tenant_id=tenant, user_id=p.username)


def _summary(d: wpb.DocumentSummary) -> dict[str, Any]:
    return {
        "path": d.path,
        "title": d.title,
        "size": d.size,
        "updatedAt": d.updated_at_ms or None,
        "source": d.source,
    }


@router.get("/brain/{tenant}/documents")
async def list_documents(
    request: Request, tenant: PathId, prefix: Annotated[str, Query(max_length=200)] = ""
) -> dict[str, Any]:
    resp = await clients(request).work.ListDocuments(
        wpb.ListDocumentsRequest(owner=await _owner(request, tenant), prefix=prefix)
    )
    return {"documents": [_summary(d) for d in resp.documents]}


@router.get("/brain/{tenant}/documents/{path:path}")
async def read_document(request: Request, tenant: PathId, path: DocPath) -> dict[str, Any]:
    doc = await clients(request).work.ReadDocument(
        wpb.ReadDocumentRequest(owner=await _owner(request, tenant), path=path)
    )
    return {
        "path": doc.path,
        "title": doc.title,
        "body": doc.body,
        "updatedAt": doc.updated_at_ms or None,
        "source": doc.source,
    }
