"""Reads of the `settings` documents, kept until they change. Engine settings are resolved
through process -> session -> project -> tenant documents, and those change only when someone
sets a value. Every write goes through `update` here, which drops this replica's copy and bumps
one shared counter in the store (`settings_generation`); each replica reads that counter once
a second (`follow_store`) and, when another replica has written, drops everything it keeps. So
a change made here is seen by the very next read, one made through another replica within about
a second, and a busy chat costs no settings read per turn however long it runs (issue 28: no
cost per second in flight; a time-to-live of 10 s before made every session read its chain
again every 10 s). While the counter cannot be read, the copies are kept at most CACHE_S, as
before. Each change also counts a generation that `WatchSettings` streams, so engine workers
that keep resolved settings drop theirs (engine_worker/settings.py)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable

from session_service.store.raw import Bson, Collection
from vance.errors import AbortedError
from vance.shared_counter import SharedCounter
from vance.store import is_duplicate_key

logger = logging.getLogger(__name__)

# How long a copy is trusted when the shared counter is not being read (no follower, or the
# store out of reach): the bound a write through another replica may go unseen.
CACHE_S = 10.0
# Past this many entries the oldest half is dropped (dicts keep insertion order), so the copies
# of sessions long gone do not stay in memory.
_MAX_ENTRIES = 4_096
_GENERATION_ID = "settings"


# One settings document's values: key -> raw value (checked by whoever reads them).
Values = dict[str, str]


def values_of(doc: Bson | None) -> Values:
    """A `settings` document's values (stored as a list of {key, value}: keys with dots are
    not field names)."""
    return {str(i["key"]): str(i["value"]) for i in (doc or {}).get("values") or []}


class SettingsDocs:
    """The `settings` documents (one per tenant, project, group, session or process level,
    by `_id`): the only module that knows their layout."""

    def __init__(
        self,
        collection: Collection,
        ttl_s: float = CACHE_S,
        generation: Collection | None = None,
    ) -> None:
        self._c = collection
        self._ttl_s = ttl_s
        # The shared write counter (vance/shared_counter.py); None: this replica follows
        # nothing and trusts its copies ttl_s only.
        self._counter = None if generation is None else SharedCounter(generation, _GENERATION_ID)
        self._docs: dict[str, tuple[float, Values | None]] = {}  # id -> (read at, values)
        self._writes = 0
        self._changed = asyncio.Event()  # replaced at every write: watchers wait on it

    @property
    def followed_at(self) -> float:
        """When (time.monotonic()) the shared write counter was last read."""
        return float("-inf") if self._counter is None else self._counter.followed_at

    def _trusted(self, read_at: float, now: float) -> bool:
        if now - read_at < self._ttl_s:
            return True
        return self._counter is not None and self._counter.trusts(read_at, now)

    async def fresh(self, ids: list[str]) -> dict[str, Values]:
        """The values of the documents that exist among `ids`, read now (no copy used)."""
        docs = await self._c.find({"_id": {"$in": ids}}).to_list(None)
        return {str(d["_id"]): values_of(d) for d in docs}

    async def get_many(self, ids: list[str]) -> dict[str, Values]:
        """The values of the documents that exist among `ids`, from copies still trusted."""
        now = time.monotonic()
        out: dict[str, Values] = {}
        missing: list[str] = []
        for doc_id in ids:
            hit = self._docs.get(doc_id)
            if hit is None or not self._trusted(hit[0], now):
                missing.append(doc_id)
            elif hit[1] is not None:
                out[doc_id] = hit[1]
        if not missing:
            return out
        writes = self._writes
        found = await self.fresh(missing)
        out |= found
        # A write here while the read ran may be missing from it: keep nothing then.
        if writes == self._writes:
            if len(self._docs) >= _MAX_ENTRIES:
                keep = list(self._docs.items())[_MAX_ENTRIES // 2 :]
                self._docs = dict(keep)
            for doc_id in missing:
                self._docs.pop(doc_id, None)  # re-inserted last: the newest
                self._docs[doc_id] = (now, found.get(doc_id))
        return out

    async def follow_store(self) -> None:
        """Follows the shared write counter for the replica's life: every copy is dropped
        (and the watching workers told) when another replica has written, or when a read of
        the counter fails (ours then fall back to CACHE_S; the workers' have no short bound)."""
        if self._counter is not None:
            await self._counter.follow(self._dropped)

    async def _dropped(self) -> None:
        self._drop_all()

    def _drop_all(self) -> None:
        self._docs.clear()
        self._bump()

    async def _count_write(self) -> None:
        if self._counter is not None:
            await self._counter.bump()

    async def update(self, doc_id: str, change: Callable[[dict[str, str]], dict[str, str]]) -> None:
        """Rewrites one document's values as `change` makes them from the stored ones: a
        version compare-and-set, so concurrent writes of different keys both stay. The one
        write path of the `settings` documents (Settings.update, EngineSettings.set), so every
        write drops the cached copy and tells the watchers."""
        self.written(doc_id)
        for _ in range(8):
            doc = await self._c.find_one({"_id": doc_id})
            values = change(values_of(doc))
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
        # After the write: a replica that sees the new count reads the new document.
        await self._count_write()

    def written(self, doc_id: str) -> None:
        self._docs.pop(doc_id, None)
        self._bump()

    def _bump(self) -> None:
        self._writes += 1
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
