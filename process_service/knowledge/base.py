"""What process_service knows beyond chats, in one place: memory recall (recall.py) and the RAG
index (rag_index.py), with the corpora a process may search and the hook that keeps the user's
documents indexed as the doc tools change them (process_service/user_work/host.py)."""

from __future__ import annotations

import logging

from process_service.knowledge.memory_store import MemoryRecord, MemoryStore
from process_service.knowledge.rag_index import Hit, RagIndex, project_corpus, user_corpus
from process_service.knowledge.recall import MemoryRecall
from process_service.process_model import Process
from process_service.tool_args import ToolResult
from process_service.user_work.documents import UserDocument
from process_service.user_work.owner import Owner

logger = logging.getLogger(__name__)

DOCUMENTS = "documents"  # the label of a user's documents in a chunk's source
PROJECT = "project"


class MemoryNote(ToolResult):
    """A memory record as the memory tools show it."""

    id: str
    scope: str
    kind: str
    title: str | None
    text: str
    tags: list[str]
    created_at: int

    @classmethod
    def of(cls, r: MemoryRecord) -> MemoryNote:
        return cls(
            id=r.id,
            scope=r.scope.lower(),
            kind=r.kind,
            title=r.title or None,
            text=r.content,
            tags=list(r.tags),
            created_at=r.created_at_ms,
        )


class Knowledge:
    def __init__(self, memory: MemoryStore, recall: MemoryRecall, rag: RagIndex) -> None:
        self.memory = memory
        self.recall = recall
        self.rag = rag

    @staticmethod
    def corpora(process: Process) -> dict[str, str]:
        """The corpora a process searches: its project's files and its owner's documents."""
        tenant = process.tenant_id
        out = {project_corpus(tenant, process.project_id): PROJECT}
        user = process.owner_user_id
        if user:
            out[user_corpus(tenant, user)] = DOCUMENTS
        return out

    async def rag_for(
        self, process: Process, query: str, top_k: int, min_score: float
    ) -> tuple[list[Hit], bool]:
        return await self.rag.query(
            self.corpora(process),
            query,
            tenant=process.tenant_id,
            top_k=top_k,
            min_score=min_score,
        )

    async def document_changed(self, owner: Owner, path: str, doc: UserDocument | None) -> None:
        """A doc tool created, changed (doc) or deleted (None) one of the user's documents.
        The document is stored whatever happens here; a failed index write is logged, and the
        next change of the document indexes it again."""
        corpus = user_corpus(owner.tenant_id, owner.user_id)
        try:
            if doc is None:
                await self.rag.remove(corpus, path)
                return
            body = doc.body
            if not body.strip():
                await self.rag.remove(corpus, path)
                return
            await self.rag.put(
                corpus,
                tenant=owner.tenant_id,
                source=path,
                title=doc.title or path,
                media_type="text/markdown",
                text=body,
                added_by=owner.user_id,
            )
        except Exception:
            logger.exception("document %r of %s not indexed", path, owner.user_id)
