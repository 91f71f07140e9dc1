"""Engine memory: short records an engine keeps for itself (process scope: working notes, one
record per turn with `recordTurn`) or for every process of its project (project scope: facts the
next session should know). Engines reach it through `ThinkEngineContext.memory()`.

Only `_id` is indexed in the embedded store, so records are numbered per scope: a head document
(`memory_heads`, `_id` = scope key) counts them, and record `n` of a scope is
`<scope key>:<n>`. The newest records are one `_id $in` read of the last numbers. An idempotency
key claims `memory_keys/<scope key>:<key>` first, so a redone turn records once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from pymongo import ReturnDocument
from pymongo.asynchronous.database import AsyncDatabase

from process_service.process_model import Process
from vance.clock import Clock
from vance.errors import InvalidArgumentError, NotFoundError
from vance.store import Document, is_duplicate_key

PROCESS = "PROCESS"
SESSION = "SESSION"
PROJECT = "PROJECT"
DEFAULT_LIMIT = 20
MAX_LIMIT = 200
MAX_CONTENT = 8_000
# Every turn hands its engine the project's newest records (Dispatcher._hand_over): they are
# read once per project for this long, and dropped at once when this replica records one. A
# record written through another replica shows within this bound.
PROJECT_CACHE_S = 2.0
_PROJECT_CACHE_MAX = 1_024


@dataclass(frozen=True)
class MemoryRecord:
    id: str
    scope: str
    kind: str
    title: str
    content: str
    process_id: str
    created_at_ms: int
    tags: tuple[str, ...] = ()


def scope_key(scope: str, process: Process) -> str:
    if scope == PROCESS:
        return f"p:{process.id}"
    if scope == SESSION:
        return f"s:{process.session_id}"
    if scope == PROJECT:
        return f"j:{process.tenant_id}:{process.project_id}"
    raise InvalidArgumentError(f"unknown memory scope {scope!r}")


class MemoryStore:
    def __init__(self, db: AsyncDatabase[Document], clock: Clock) -> None:
        self._records = db["memory_records"]
        self._heads = db["memory_heads"]
        self._keys = db["memory_keys"]
        self._clock = clock
        self._project: dict[str, tuple[float, list[MemoryRecord]]] = {}
        # One read per project at a time: with hundreds of turns in flight, an expired entry
        # would otherwise be read again by every hand-over until the first read came back.
        self._reading: dict[str, asyncio.Future[list[MemoryRecord]]] = {}
        self._writes = 0  # project records written here: a read that saw some begin is not kept
        # Told the scope key of every record written here (process_service/knowledge/recall.py
        # drops its ranked window of that scope).
        self.on_write: list[Callable[[str], None]] = []

    async def record(
        self,
        process: Process,
        scope: str,
        *,
        kind: str,
        title: str,
        content: str,
        idempotency_key: str = "",
        tags: Sequence[str] = (),
    ) -> MemoryRecord:
        if not content.strip():
            raise InvalidArgumentError("a memory record needs content")
        key = scope_key(scope, process)
        for listener in self.on_write:
            listener(key)
        if scope == PROJECT:
            self._writes += 1
            self._project.pop(key, None)
        if idempotency_key:
            claim = f"{key}:{idempotency_key}"
            try:
                await self._keys.insert_one({"_id": claim, "record_id": ""})
            except Exception as exc:
                if not is_duplicate_key(exc):
                    raise
                existing = await self._keys.find_one({"_id": claim})
                found = await self._records.find_one({"_id": (existing or {}).get("record_id")})
                if found is not None:
                    return record_from_doc(found)
        head = await self._heads.find_one_and_update(
            {"_id": key}, {"$inc": {"n": 1}}, upsert=True, return_document=ReturnDocument.AFTER
        )
        doc: Document = {
            "_id": f"{key}:{int((head or {}).get('n', 1)):08d}",
            "scope": scope,
            "kind": kind or "note",
            "title": title[:200],
            "content": content[:MAX_CONTENT],
            "process_id": process.id,
            "created_at_ms": self._clock.now_ms(),
        }
        if tags:
            doc["tags"] = list(tags)
        await self._records.insert_one(doc)
        if idempotency_key:
            await self._keys.update_one(
                {"_id": f"{key}:{idempotency_key}"}, {"$set": {"record_id": doc["_id"]}}
            )
        return record_from_doc(doc)

    def forgotten(self, key: str) -> None:
        """A record of scope `key` was deleted: the hand-over reads the project again."""
        self._writes += 1
        self._project.pop(key, None)
        for listener in self.on_write:
            listener(key)

    async def newest(self, process: Process, scope: str, limit: int) -> list[MemoryRecord]:
        key = scope_key(scope, process)
        limit = min(MAX_LIMIT, limit if limit > 0 else DEFAULT_LIMIT)
        head = await self._heads.find_one({"_id": key})
        n = int((head or {}).get("n", 0))
        ids = [f"{key}:{i:08d}" for i in range(n, max(0, n - limit), -1)]
        if not ids:
            return []
        docs = await self._records.find({"_id": {"$in": ids}}).to_list(None)
        docs.sort(key=lambda d: str(d["_id"]), reverse=True)
        return [record_from_doc(d) for d in docs]

    async def project_newest(self, process: Process) -> list[MemoryRecord]:
        """The project's newest DEFAULT_LIMIT records, from the cache when fresh."""
        key = scope_key(PROJECT, process)
        now = time.monotonic()
        hit = self._project.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        pending = self._reading.get(key)
        if pending is not None:
            try:
                return await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this hand-over was cancelled, not the read it waited for
            except Exception:
                pass  # the shared read failed: this one reads for itself
            return await self.newest(process, PROJECT, DEFAULT_LIMIT)
        shared: asyncio.Future[list[MemoryRecord]] = asyncio.get_running_loop().create_future()
        self._reading[key] = shared
        writes = self._writes
        try:
            records = await self.newest(process, PROJECT, DEFAULT_LIMIT)
        except asyncio.CancelledError:
            shared.cancel()
            raise
        except Exception as exc:
            shared.set_exception(exc)
            shared.exception()  # retrieved here, whether or not anyone waits on it
            raise
        finally:
            del self._reading[key]
        shared.set_result(records)
        # A record written here while this read ran may be missing from it: don't keep it.
        if writes == self._writes:
            if len(self._project) >= _PROJECT_CACHE_MAX:
                self._project.clear()
            self._project[key] = (now + PROJECT_CACHE_S, records)
        return records


def record_from_doc(doc: Document) -> MemoryRecord:
    """A stored memory document as a record (MemoryStore, and knowledge/recall.py's reads)."""
    return MemoryRecord(
        id=str(doc["_id"]),
        scope=str(doc.get("scope", "")),
        kind=str(doc.get("kind", "")),
        title=str(doc.get("title", "")),
        content=str(doc.get("content", "")),
        process_id=str(doc.get("process_id", "")),
        created_at_ms=int(doc.get("created_at_ms", 0)),
        tags=tuple(str(t) for t in doc.get("tags") or ()),
    )


async def process_or_404(
    get: Callable[[str], Awaitable[Process | None]], process_id: str
) -> Process:
    process: Process | None = await get(process_id)
    if process is None:
        raise NotFoundError(f"no process {process_id!r}")
    return process
