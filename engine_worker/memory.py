"""The memory API of the engine context (`ctx.memory()`): records of this process (working
notes, `record_turn`) and of its project (what every later session of the project should know).
Stored by process_service (process_service/knowledge/memory_store.py); engines never see the store."""

from __future__ import annotations

from dataclasses import dataclass

from vance.domain import ThinkProcess
from vance.internal.v1 import knowledge_internal_pb2 as kipb
from vance.internal.v1 import knowledge_internal_pb2_grpc, worker_pb2_grpc
from vance.internal.v1 import worker_pb2 as wkpb

PROCESS = wkpb.MEMORY_SCOPE_PROCESS
PROJECT = wkpb.MEMORY_SCOPE_PROJECT
# How many of the project's newest records an assignment carries (process_service/knowledge/memory_store.py).
CARRIED = 20


@dataclass(frozen=True)
class MemoryEntry:
    id: str
    kind: str
    title: str
    content: str
    process_id: str
    created_at_ms: int
    score: float = 0.0  # relevance to a recall's query


@dataclass(frozen=True)
class RagPassage:
    source: str
    title: str
    text: str
    score: float


# QueryRag embeds the query first (up to 30 s, process_service/knowledge/embeddings.py), then
# searches: a longer deadline than the channel's default (docs/operations.md "Call deadlines").
RAG_QUERY_TIMEOUT_S = 60.0


class MemoryApi:
    def __init__(
        self,
        process: ThinkProcess,
        stub: worker_pb2_grpc.WorkerServiceAsyncStub,
        turn_id: str,
        project: list[MemoryEntry] | None = None,
        knowledge: knowledge_internal_pb2_grpc.KnowledgeInternalServiceAsyncStub | None = None,
    ) -> None:
        self._process = process
        self._stub = stub
        self._knowledge = knowledge
        self._turn_id = turn_id
        self._writes = 0
        # The project's newest records as the assignment brought them (newest first); a
        # project write in this turn makes them stale, so reads go to process_service again.
        self._project = project

    async def record(
        self, scope: wkpb.MemoryScope, content: str, *, kind: str = "note", title: str = ""
    ) -> MemoryEntry:
        """Keeps a record. Its idempotency key comes from the turn and the write's place in it,
        so a redone turn records once."""
        self._writes += 1
        if scope == PROJECT:
            self._project = None
        r = await self._stub.RecordMemory(
            wkpb.RecordMemoryRequest(
                process_id=self._process.id,
                scope=scope,
                kind=kind,
                title=title,
                content=content,
                idempotency_key=f"{self._turn_id}:{self._writes}",
            )
        )
        return entry_from_proto(r)

    async def record_turn(self, content: str) -> MemoryEntry:
        """This turn's working-memory entry (process scope)."""
        return await self.record(PROCESS, content, kind="turn")

    async def remember_for_project(self, content: str, *, title: str = "") -> MemoryEntry:
        return await self.record(PROJECT, content, kind="fact", title=title)

    async def newest(self, scope: wkpb.MemoryScope, limit: int = 20) -> list[MemoryEntry]:
        if scope == PROJECT and self._project is not None and 0 < limit <= CARRIED:
            return self._project[:limit]
        resp = await self._stub.ListMemory(
            wkpb.ListMemoryRequest(process_id=self._process.id, scope=scope, limit=limit)
        )
        return [entry_from_proto(r) for r in resp.records]

    async def recall(
        self, scope: str, query: str, *, limit: int = 20, max_chars: int = 0
    ) -> list[MemoryEntry]:
        """Records of a scope (PROCESS, SESSION, PROJECT) ranked by `query`, best first, as
        many as fit into `max_chars` (process_service/knowledge/recall.py)."""
        if self._knowledge is None:
            return []
        resp = await self._knowledge.RecallMemory(
            kipb.RecallMemoryRequest(
                process_id=self._process.id,
                scope=scope,
                query=query,
                limit=limit,
                max_chars=max_chars,
            )
        )
        return [
            MemoryEntry(r.id, r.kind, r.title, r.content, r.process_id, r.created_at_ms, r.score)
            for r in resp.records
        ]

    async def rag_query(self, query: str, top_k: int, min_score: float) -> list[RagPassage]:
        """The best passages of the project's documents and the owner's, at least min_score."""
        if self._knowledge is None:
            return []
        resp = await self._knowledge.QueryRag(
            kipb.QueryRagRequest(
                process_id=self._process.id, query=query, top_k=top_k, min_score=min_score
            ),
            timeout=RAG_QUERY_TIMEOUT_S,
        )
        return [RagPassage(c.source, c.title, c.text, c.score) for c in resp.chunks]


def entry_from_proto(r: wkpb.MemoryRecord) -> MemoryEntry:
    return MemoryEntry(r.id, r.kind, r.title, r.content, r.process_id, r.created_at_ms)
