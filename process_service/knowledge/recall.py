"""Memory recalled by a query: the newest WINDOW records of a scope (process_service/knowledge/memory_store.py
numbers them, so they are one head read and one `_id $in` read), ranked by the words they share
with the query, weighed by how rare each word is among them (the idf part of BM25).

A scope's window is kept for CACHE_S, and dropped at once when this replica writes or deletes a
record of it, as MemoryStore keeps the project's newest for the hand-over: a turn's
`<project-memory>` block then costs no store read while a project's memory does not change.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from pymongo.asynchronous.database import AsyncDatabase

from process_service.knowledge.memory_store import (
    PROCESS,
    PROJECT,
    SESSION,
    MemoryRecord,
    MemoryStore,
    record_from_doc,
    scope_key,
)
from process_service.process_model import Process
from session_service.search.tokens import tokens
from vance.errors import InvalidArgumentError, NotFoundError
from vance.store import Document

SCOPES = (PROCESS, SESSION, PROJECT)
WINDOW = 200
CACHE_S = 2.0
_CACHE_MAX = 1_024


@dataclass(frozen=True)
class Scored:
    record: MemoryRecord
    score: float  # 0..1: the share of the query's weight the record holds


def check_scope(raw: object) -> str:
    scope = str(raw or "").strip().upper()
    if scope not in SCOPES:
        raise InvalidArgumentError("scope must be process, session or project")
    return scope


def record_words(r: MemoryRecord) -> set[str]:
    return set(tokens(f"{r.title} {r.content} {' '.join(r.tags)}"))


def rank(records: Sequence[MemoryRecord], query: str) -> list[Scored]:
    """Every record, best first: by score, then newest. Without query words all score 0, so
    the order is newest first."""
    terms = tokens(query)
    words = [record_words(r) for r in records]
    n = len(records)
    weights = {t: math.log(1 + (n + 0.5) / (sum(t in w for w in words) + 0.5)) for t in terms}
    total = sum(weights.values())
    scored = [
        Scored(r, sum(weights[t] for t in terms if t in w) / total if total else 0.0)
        for r, w in zip(records, words, strict=True)
    ]
    scored.sort(key=lambda s: (-s.score, -s.record.created_at_ms, s.record.id))
    return scored


def within(scored: Sequence[Scored], limit: int, max_chars: int) -> list[Scored]:
    """The first `limit` that fit into `max_chars` together (0: no bound); one that does not fit
    is skipped, so a long record does not keep shorter relevant ones out."""
    out: list[Scored] = []
    used = 0
    for s in scored:
        if len(out) >= limit:
            break
        size = len(s.record.title) + len(s.record.content) + 4
        if max_chars and used + size > max_chars:
            continue
        out.append(s)
        used += size
    return out


class MemoryRecall:
    def __init__(self, memory: MemoryStore, db: AsyncDatabase[Document]) -> None:
        self._memory = memory
        self._records = db["memory_records"]
        self._windows: dict[str, tuple[float, list[MemoryRecord]]] = {}
        memory.on_write.append(self._drop)

    def _drop(self, key: str) -> None:
        self._windows.pop(key, None)

    async def window(self, process: Process, scope: str) -> list[MemoryRecord]:
        """The scope's newest WINDOW records, newest first."""
        key = scope_key(scope, process)
        now = time.monotonic()
        hit = self._windows.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        records = await self._memory.newest(process, scope, WINDOW)
        if len(self._windows) >= _CACHE_MAX:
            self._windows.clear()
        self._windows[key] = (now + CACHE_S, records)
        return records

    async def recall(
        self,
        process: Process,
        scope: str,
        query: str,
        *,
        limit: int,
        max_chars: int = 0,
        matching_only: bool = False,
    ) -> list[Scored]:
        ranked = rank(await self.window(process, scope), query)
        if matching_only and tokens(query):
            ranked = [s for s in ranked if s.score > 0]
        return within(ranked, limit, max_chars)

    async def forget(self, process: Process, record_id: str) -> MemoryRecord:
        """Deletes a record of one of the process's own scopes; another's is not found."""
        key = record_id.rpartition(":")[0]
        if key not in {scope_key(s, process) for s in SCOPES}:
            raise NotFoundError(f"no memory record {record_id!r} in your scopes")
        return await self.delete(key, record_id)

    async def delete(self, key: str, record_id: str) -> MemoryRecord:
        """Deletes record `record_id` of scope `key` (the caller checked the id is of it)."""
        found = await self._records.find_one_and_delete({"_id": record_id})
        if found is None:
            raise NotFoundError(f"no memory record {record_id!r}")
        self._memory.forgotten(key)
        return record_from_doc(found)

    async def project_records(self, tenant: str, project: str) -> list[MemoryRecord]:
        return await self._memory.newest(_project(tenant, project), PROJECT, WINDOW)

    async def delete_project_record(self, tenant: str, project: str, record_id: str) -> None:
        key = scope_key(PROJECT, _project(tenant, project))
        if record_id.rpartition(":")[0] != key:
            raise NotFoundError(f"no memory record {record_id!r} in project {project!r}")
        await self.delete(key, record_id)


def _project(tenant: str, project: str) -> Process:
    """A stand-in for a process of the project: memory scopes are keyed by these fields."""
    return Process(id="", session_id="", name="", engine="", tenant_id=tenant, project_id=project)
