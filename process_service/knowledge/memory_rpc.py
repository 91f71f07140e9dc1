"""The memory RPCs of ProcessService (process_service/knowledge/memory_store.py), kept apart from service.py."""

from __future__ import annotations

import grpc

from process_service.knowledge.memory_store import (
    PROCESS,
    PROJECT,
    MemoryRecord,
    MemoryStore,
    process_or_404,
)
from process_service.store.process_store import ProcessStore
from vance.errors import InvalidArgumentError, grpc_errors
from vance.internal.v1 import worker_pb2 as wkpb

_SCOPES: dict[int, str] = {wkpb.MEMORY_SCOPE_PROCESS: PROCESS, wkpb.MEMORY_SCOPE_PROJECT: PROJECT}
_SCOPES_BACK = {v: k for k, v in _SCOPES.items()}


def _scope(value: int) -> str:
    scope = _SCOPES.get(value)
    if scope is None:
        raise InvalidArgumentError("scope must be PROCESS or PROJECT")
    return scope


def record_to_proto(r: MemoryRecord) -> wkpb.MemoryRecord:
    return wkpb.MemoryRecord(
        id=r.id,
        scope=_SCOPES_BACK[r.scope],  # type: ignore[arg-type]
        kind=r.kind,
        title=r.title,
        content=r.content,
        process_id=r.process_id,
        created_at_ms=r.created_at_ms,
    )


class MemoryRpcs:
    store: ProcessStore
    memory: MemoryStore

    @grpc_errors
    async def RecordMemory(
        self,
        request: wkpb.RecordMemoryRequest,
        context: grpc.aio.ServicerContext[wkpb.RecordMemoryRequest, wkpb.MemoryRecord],
    ) -> wkpb.MemoryRecord:
        process = await process_or_404(self.store.get, request.process_id)
        record = await self.memory.record(
            process,
            _scope(request.scope),
            kind=request.kind,
            title=request.title,
            content=request.content,
            idempotency_key=request.idempotency_key,
        )
        return record_to_proto(record)

    @grpc_errors
    async def ListMemory(
        self,
        request: wkpb.ListMemoryRequest,
        context: grpc.aio.ServicerContext[wkpb.ListMemoryRequest, wkpb.ListMemoryResponse],
    ) -> wkpb.ListMemoryResponse:
        process = await process_or_404(self.store.get, request.process_id)
        records = await self.memory.newest(process, _scope(request.scope), request.limit)
        return wkpb.ListMemoryResponse(records=[record_to_proto(r) for r in records])
