"""Reads of the `settings` documents, kept for a moment. Engine settings are resolved through
process -> session -> project -> tenant documents, and those change only when someone sets a
value, so each is kept CACHE_S and dropped when this replica writes it (EngineSettings.set,
Settings.update): a change made here is seen by the very next read; one made through another
session_service replica within CACHE_S. Each write also counts a generation that
`WatchSettings` streams, so engine workers that keep resolved settings drop theirs
(engine_worker/settings.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

from pymongo.asynchronous.collection import AsyncCollection

from vance.errors import AbortedError
from vance.store import Document, is_duplicate_key

# As long as engine workers keep resolved settings (engine_worker/watched.py, SETTINGS_TTL_S).
CACHE_S = 10.0
# Past this many entries the expired ones are dropped, so a suspended session's documents do
# not stay in memory.
_PRUNE_AT = 2_048


class SettingsDocs:
    def __init__(self, collection: AsyncCollection[Document], ttl_s: float = CACHE_S) -> None:
        self._c = collection
        self._ttl_s = ttl_s
        self._docs: dict[str, tuple[float, Document | None]] = {}
        self._writes = 0
        self._changed = asyncio.Event()  # replaced at every write: watchers wait on it

    async def get_many(self, ids: list[str]) -> dict[str, Document]:
        now = time.monotonic()
        out: dict[str, Document] = {}
        missing: list[str] = []
        for doc_id in ids:
            hit = self._docs.get(doc_id)
            if hit is None or hit[0] <= now:
                missing.append(doc_id)
            elif hit[1] is not None:
                out[doc_id] = hit[1]
        if not missing:
            return out
        writes = self._writes
        found = {
            str(d["_id"]): d for d in await self._c.find({"_id": {"$in": missing}}).to_list(None)
        }
        out |= found
        # A write here while the read ran may be missing from it: keep nothing then.
        if writes == self._writes:
            if len(self._docs) >= _PRUNE_AT:
                self._docs = {k: v for k, v in self._docs.items() if v[0] > now}
            for doc_id in missing:
                self._docs[doc_id] = (now + self._ttl_s, found.get(doc_id))
        return out

    async def update(self, doc_id: str, change: Callable[[dict[str, str]], dict[str, str]]) -> None:
        """Rewrites one document's values as `change` makes them from the stored ones: a
        version compare-and-set, so concurrent writes of different keys both stay. The one
        write path of the `settings` documents (Settings.update, EngineSettings.set), so every
        write drops the cached copy and tells the watchers."""
        self.written(doc_id)
        for _ in range(8):
            doc = await self._c.find_one({"_id": doc_id})
            stored = {str(i["key"]): str(i["value"]) for i in (doc or {}).get("values") or []}
            values = change(stored)
            body = {"values": [{"key": k, "value": v} for k, v in sorted(values.items())]}
            if doc is None:
                try:
                    await self._c.insert_one({"_id": doc_id, **body, "v": 1})
                    break
                except Exception as exc:
                    if not is_duplicate_key(exc):
                        raise
                    continue  # written concurrently: merge into that
            result = await self._c.update_one(
                {"_id": doc_id, "v": doc.get("v")},
                {"$set": {**body, "v": int(doc.get("v") or 0) + 1}},
            )
            if result.matched_count:
                break
        else:
            raise AbortedError("the settings kept changing; try again", reason="settings_busy")
        self.written(doc_id)

    def written(self, doc_id: str) -> None:
        self._writes += 1
        self._docs.pop(doc_id, None)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def changes(self) -> AsyncIterator[int]:
        """The write count now, then after each write (several may fold into one)."""
        seen = -1
        while True:
            if self._writes != seen:
                seen = self._writes
                yield seen
            else:
                await self._changed.wait()
