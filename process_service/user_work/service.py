"""UserWorkService: the user's documents for the web client (gateway/rest_documents.py). Thin:
the gateway names the caller's own tenant and user, and the domain (documents.py) reads."""

from __future__ import annotations

import grpc

from process_service.tool_args import ToolError
from process_service.user_work.documents import Documents, clean_path
from process_service.user_work.owner import Owner
from vance.errors import InvalidArgumentError, NotFoundError, grpc_errors
from vance.v1 import work_pb2 as wpb
from vance.v1 import work_pb2_grpc


def _owner(o: wpb.DocumentOwner) -> Owner:
    if not o.tenant_id or not o.user_id:
        raise InvalidArgumentError("owner.tenant_id and owner.user_id are required")
    return Owner(o.tenant_id, o.user_id)


class UserWorkServicer(work_pb2_grpc.UserWorkServiceServicer):
    def __init__(self, documents: Documents) -> None:
        self._documents = documents

    @grpc_errors
    async def ListDocuments(
        self,
        request: wpb.ListDocumentsRequest,
        context: grpc.aio.ServicerContext[wpb.ListDocumentsRequest, wpb.ListDocumentsResponse],
    ) -> wpb.ListDocumentsResponse:
        owner = _owner(request.owner)
        try:
            found = await self._documents.listing(owner, request.prefix)
        except ToolError as exc:
            raise InvalidArgumentError(str(exc)) from exc
        return wpb.ListDocumentsResponse(
            documents=[
                wpb.DocumentSummary(
                    path=d.path,
                    title=d.title,
                    size=d.size,
                    updated_at_ms=d.updated_at,
                    source=d.source,
                )
                for d in found
            ]
        )

    @grpc_errors
    async def ReadDocument(
        self,
        request: wpb.ReadDocumentRequest,
        context: grpc.aio.ServicerContext[wpb.ReadDocumentRequest, wpb.UserDocument],
    ) -> wpb.UserDocument:
        owner = _owner(request.owner)
        try:
            path = clean_path(request.path)
        except ToolError as exc:
            raise InvalidArgumentError(str(exc), reason="bad_path") from exc
        try:
            doc = await self._documents.get(owner, path)
        except ToolError as exc:
            raise NotFoundError(str(exc), reason="document_not_found") from exc
        return wpb.UserDocument(
            path=doc.path,
            title=doc.title or doc.path,
            body=doc.body,
            updated_at_ms=doc.updated_at_ms or 0,
            source=doc.source,
        )
