"""REST routes of a project's memory and RAG documents (docs/protocol.md "Memory and RAG"):
listed, pruned and uploaded by the project's users: a shared project's (no owner) by everyone
of the tenant, an owned one by its owner and the tenant's admins, a hub project by its user
only. Any other caller is told the project does not exist (process_service/knowledge/service.py
applies session_service's rule for projects with the caller's token)."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from gateway.auth import Principal
from gateway.errors import GatewayError
from gateway.rest_deps import PathId, clients, principal
from vance.v1 import knowledge_pb2 as kpb

router = APIRouter(tags=["knowledge"])

SourcePath = Annotated[str, Path(max_length=200)]
RecordId = Annotated[str, Path(max_length=400)]


class UploadBody(BaseModel):
    """Markdown or text as `text`, or a file (a PDF) as `contentBase64`."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    title: str = Field(default="", max_length=200)
    mediaType: str = Field(default="", max_length=100)
    text: str | None = None
    contentBase64: str | None = None


async def _project(
    request: Request, tenant: str, project_id: str
) -> tuple[Principal, kpb.ProjectRef]:
    # Whether the caller sees the project is process_service's check (it answers NOT_FOUND).
    return await principal(request, tenant), kpb.ProjectRef(tenant_id=tenant, project_id=project_id)


def _record(r: kpb.KnowledgeRecord) -> dict[str, Any]:
    return {
        "id": r.id,
        "scope": r.scope.lower(),
        "kind": r.kind,
        "title": r.title or None,
        "text": r.content,
        "tags": list(r.tags),
        "processId": r.process_id or None,
        "createdAt": r.created_at_ms,
    }


def _document(d: kpb.RagDocument) -> dict[str, Any]:
    return {
        "name": d.source,
        "title": d.title,
        "mediaType": d.media_type,
        "chunks": d.chunks,
        "size": d.size,
        "updatedAt": d.updated_at_ms or None,
        "addedBy": d.added_by or None,
    }


@router.get("/brain/{tenant}/projects/{project_id}/memory")
async def list_memory(request: Request, tenant: PathId, project_id: PathId) -> dict[str, Any]:
    _, ref = await _project(request, tenant, project_id)
    resp = await clients(request).knowledge.ListProjectMemory(ref)
    return {"records": [_record(r) for r in resp.records]}


@router.delete("/brain/{tenant}/projects/{project_id}/memory/{record_id}")
async def delete_memory(
    request: Request, tenant: PathId, project_id: PathId, record_id: RecordId
) -> dict[str, Any]:
    _, ref = await _project(request, tenant, project_id)
    await clients(request).knowledge.DeleteProjectMemory(
        kpb.DeleteProjectMemoryRequest(project=ref, id=record_id)
    )
    return {"deleted": record_id}


@router.get("/brain/{tenant}/projects/{project_id}/rag/documents")
async def list_rag_documents(
    request: Request, tenant: PathId, project_id: PathId
) -> dict[str, Any]:
    _, ref = await _project(request, tenant, project_id)
    resp = await clients(request).knowledge.ListRagDocuments(ref)
    return {"documents": [_document(d) for d in resp.documents]}


@router.post("/brain/{tenant}/projects/{project_id}/rag/documents")
async def upload_rag_document(
    request: Request, tenant: PathId, project_id: PathId, body: UploadBody
) -> dict[str, Any]:
    p, ref = await _project(request, tenant, project_id)
    if (body.text is None) == (body.contentBase64 is None):
        raise GatewayError(400, "give either text or contentBase64", "bad_upload", field="text")
    if body.text is not None:
        content = body.text.encode("utf-8")
    else:
        try:
            content = base64.b64decode(body.contentBase64 or "", validate=True)
        except binascii.Error:
            raise GatewayError(
                400, "contentBase64 is not base64", "bad_base64", field="contentBase64"
            ) from None
    found = clients(request)
    doc = await found.knowledge.AddRagDocument(
        kpb.AddRagDocumentRequest(
            project=ref,
            source=body.name,
            title=body.title,
            media_type=body.mediaType,
            content=content,
            added_by=p.username,
        ),
        timeout=found.batch_timeout_s,
    )
    return _document(doc)


@router.delete("/brain/{tenant}/projects/{project_id}/rag/documents/{name:path}")
async def delete_rag_document(
    request: Request, tenant: PathId, project_id: PathId, name: SourcePath
) -> dict[str, Any]:
    _, ref = await _project(request, tenant, project_id)
    await clients(request).knowledge.DeleteRagDocument(
        kpb.DeleteRagDocumentRequest(project=ref, source=name)
    )
    return {"deleted": name}
