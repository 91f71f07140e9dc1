"""The memory API of the engine context (`ctx.memory()`): records of this process (working
notes, `record_turn`) and of its project (what every later session of the project should know).
Stored by process_service (process_service/memory.py); engines never see the store."""

from __future__ import annotations

from dataclasses import dataclass

from vance.domain import ThinkProcess
from vance.internal.v1 import worker_pb2 as wkpb
from vance.internal.v1 import worker_pb2_grpc

PROCESS = wkpb.MEMORY_SCOPE_PROCESS
PROJECT = wkpb.MEMORY_SCOPE_PROJECT
# How many of the project's newest records an assignment carries (process_service/memory.py).
CARRIED = 20


@dataclass(frozen=True)
class MemoryEntry:
    id: str
    kind: str
    title: str
    content: str
    process_id: str
    created_at_ms: int


class MemoryApi:
    def __init__(
        self,
        process: ThinkProcess,
        stub: worker_pb2_grpc.WorkerServiceAsyncStub,
        turn_id: str,
        project: list[MemoryEntry] | None = None,
    ) -> None:
        self._process = process
        self._stub = stub
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

    async def project_summary(self, max_chars: int = 2_000, limit: int = 20) -> str:
        """The newest project records, newest first, one line each, within `max_chars`."""
        lines: list[str] = []
        used = 0
        for entry in await self.newest(PROJECT, limit):
            text = " ".join(entry.content.split())
            line = f"- {entry.title}: {text}" if entry.title else f"- {text}"
            if used + len(line) > max_chars:
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines)


def entry_from_proto(r: wkpb.MemoryRecord) -> MemoryEntry:
    return MemoryEntry(r.id, r.kind, r.title, r.content, r.process_id, r.created_at_ms)
