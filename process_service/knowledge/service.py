"""KnowledgeService (protos/vance/v1/knowledge.proto): memory recall for engines, a project's
memory and RAG documents for its users (through the gateway), RAG queries for engines."""

from __future__ import annotations

import grpc

from process_service.knowledge.base import Knowledge
from process_service.knowledge.memory_store import MemoryRecord, process_or_404
from process_service.knowledge.rag_index import RagDoc, project_corpus
from process_service.knowledge.rag_text import extract, media_type_of
from process_service.knowledge.recall import check_scope
from process_service.store.process_store import ProcessStore
from vance.auth import current_identity
from vance.errors import InvalidArgumentError, NotFoundError, grpc_errors
from vance.internal.v1 import knowledge_internal_pb2 as kipb
from vance.internal.v1 import knowledge_internal_pb2_grpc
from vance.v1 import common_pb2 as pb
from vance.v1 import knowledge_pb2 as kpb
from vance.v1 import knowledge_pb2_grpc, session_pb2_grpc
from vance.v1 import session_pb2 as spb

MAX_SOURCE_CHARS = 200
MAX_RECALL = 200


def record_to_proto(r: MemoryRecord, score: float = 0.0) -> kpb.KnowledgeRecord:
    return kpb.KnowledgeRecord(
        id=r.id,
        scope=r.scope,
        kind=r.kind,
        title=r.title,
        content=r.content,
        process_id=r.process_id,
        created_at_ms=r.created_at_ms,
        tags=list(r.tags),
        score=score,
    )


def rag_doc_to_proto(d: RagDoc) -> kpb.RagDocument:
    return kpb.RagDocument(
        source=d.source,
        title=d.title,
        media_type=d.media_type,
        chunks=d.chunks,
        size=d.size,
        updated_at_ms=d.updated_at_ms,
        added_by=d.added_by,
    )


def _source(raw: str) -> str:
    source = raw.strip().strip("/")
    if not source or len(source) > MAX_SOURCE_CHARS or any(ord(ch) < 32 for ch in source):
        raise InvalidArgumentError(
            f"a document needs a name of 1 to {MAX_SOURCE_CHARS} printable characters",
            reason="bad_source",
        )
    return source


class KnowledgeServicer(
    knowledge_pb2_grpc.KnowledgeServiceServicer,
    knowledge_internal_pb2_grpc.KnowledgeInternalServiceServicer,
):
    def __init__(
        self,
        knowledge: Knowledge,
        store: ProcessStore,
        sessions: session_pb2_grpc.SessionServiceAsyncStub,
    ) -> None:
        self._k = knowledge
        self._store = store
        self._sessions = sessions

    async def _project(self, ref: kpb.ProjectRef) -> tuple[str, str]:
        """The project, when the caller sees it: a service always; a user a shared project
        (no owner), their own, or another's as a tenant admin unless it is a hub (SYSTEM)
        project: session_service's rule (session_service/hub/home.py). NOT_FOUND otherwise."""
        if not ref.tenant_id or not ref.project_id:
            raise InvalidArgumentError("tenant_id and project_id are required")
        who = current_identity.get()
        if who is not None and not who.is_service:
            try:
                found = await self._sessions.GetProject(
                    spb.GetProjectRequest(tenant_id=ref.tenant_id, project_id=ref.project_id)
                )
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.NOT_FOUND:
                    raise
                found = None
            owner = found.owner_user_id if found is not None else ""
            hub = found is not None and found.kind == pb.PROJECT_KIND_SYSTEM
            if found is None or (owner and owner != who.name and (hub or not who.is_admin)):
                raise NotFoundError(f"no project {ref.project_id!r}", reason="project_not_found")
        return ref.tenant_id, ref.project_id

    @grpc_errors
    async def RecallMemory(
        self,
        request: kipb.RecallMemoryRequest,
        context: grpc.aio.ServicerContext[kipb.RecallMemoryRequest, kipb.RecallMemoryResponse],
    ) -> kipb.RecallMemoryResponse:
        process = await process_or_404(self._store.get, request.process_id)
        if not 0 <= request.limit <= MAX_RECALL or request.max_chars < 0:
            raise InvalidArgumentError(f"limit must be 0..{MAX_RECALL}, max_chars at least 0")
        found = await self._k.recall.recall(
            process,
            check_scope(request.scope),
            request.query,
            limit=request.limit or 20,
            max_chars=request.max_chars,
        )
        return kipb.RecallMemoryResponse(
            records=[record_to_proto(s.record, s.score) for s in found]
        )

    @grpc_errors
    async def ListProjectMemory(
        self,
        request: kpb.ProjectRef,
        context: grpc.aio.ServicerContext[kpb.ProjectRef, kpb.ProjectMemoryList],
    ) -> kpb.ProjectMemoryList:
        tenant, project = await self._project(request)
        records = await self._k.recall.project_records(tenant, project)
        return kpb.ProjectMemoryList(records=[record_to_proto(r) for r in records])

    @grpc_errors
    async def DeleteProjectMemory(
        self,
        request: kpb.DeleteProjectMemoryRequest,
        context: grpc.aio.ServicerContext[
            kpb.DeleteProjectMemoryRequest, kpb.DeleteProjectMemoryResponse
        ],
    ) -> kpb.DeleteProjectMemoryResponse:
        tenant, project = await self._project(request.project)
        await self._k.recall.delete_project_record(tenant, project, request.id)
        return kpb.DeleteProjectMemoryResponse(deleted=True)

    @grpc_errors
    async def AddRagDocument(
        self,
        request: kpb.AddRagDocumentRequest,
        context: grpc.aio.ServicerContext[kpb.AddRagDocumentRequest, kpb.RagDocument],
    ) -> kpb.RagDocument:
        tenant, project = await self._project(request.project)
        source = _source(request.source)
        media = media_type_of(source, request.media_type)
        doc = await self._k.rag.put(
            project_corpus(tenant, project),
            tenant=tenant,
            source=source,
            title=request.title.strip()[:200] or source,
            media_type=media,
            text=extract(media, request.content),
            added_by=request.added_by,
        )
        return rag_doc_to_proto(doc)

    @grpc_errors
    async def ListRagDocuments(
        self,
        request: kpb.ProjectRef,
        context: grpc.aio.ServicerContext[kpb.ProjectRef, kpb.RagDocumentList],
    ) -> kpb.RagDocumentList:
        tenant, project = await self._project(request)
        docs = await self._k.rag.listing(project_corpus(tenant, project))
        return kpb.RagDocumentList(documents=[rag_doc_to_proto(d) for d in docs])

    @grpc_errors
    async def DeleteRagDocument(
        self,
        request: kpb.DeleteRagDocumentRequest,
        context: grpc.aio.ServicerContext[
            kpb.DeleteRagDocumentRequest, kpb.DeleteRagDocumentResponse
        ],
    ) -> kpb.DeleteRagDocumentResponse:
        tenant, project = await self._project(request.project)
        source = _source(request.source)
        if not await self._k.rag.remove(project_corpus(tenant, project), source):
            raise NotFoundError(f"no document {source!r} in project {project!r}")
        return kpb.DeleteRagDocumentResponse(deleted=True)

    @grpc_errors
    async def QueryRag(
        self,
        request: kipb.QueryRagRequest,
        context: grpc.aio.ServicerContext[kipb.QueryRagRequest, kipb.QueryRagResponse],
    ) -> kipb.QueryRagResponse:
        process = await process_or_404(self._store.get, request.process_id)
        if not 0 <= request.top_k <= 50 or not 0.0 <= request.min_score <= 1.0:
            raise InvalidArgumentError("top_k must be 0..50 and min_score 0..1")
        hits, hybrid = await self._k.rag_for(
            process, request.query, request.top_k or 5, request.min_score
        )
        return kipb.QueryRagResponse(
            chunks=[
                kipb.RagChunk(
                    source=h.source,
                    title=h.title,
                    text=h.text,
                    ordinal=h.ordinal,
                    score=h.score,
                    keyword_score=h.keyword_score,
                    vector_score=h.vector_score,
                )
                for h in hits
            ],
            hybrid=hybrid,
        )
