"""The sweep sets: which sessions each lifecycle sweep (sweepers.py) needs to look at, and when.

They stand in for partial indexes: the embedded store only indexes `_id` (docs/architecture.md,
"Store access"), so a filter over `sessions` would scan every session on every tick. Instead
each set (`idle`, `suspended`, `bound`, `forced`) is a few small documents keyed by
`<set>:<shard>`, mapping session id -> the earliest time the sweep needs to look at it. A sweep
reads the shards of one set with one `_id $in` query and loads only the sessions that are due.
The sets may hold too much (a sweep re-checks the session document, which is the truth, and
drops stale entries), never too little: entries are written before the state change that
needs them.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import Any

from pymongo import UpdateOne
from pymongo.asynchronous.database import AsyncDatabase

from vance.store import Document, is_duplicate_key

SHARDS = 64
IDLE, SUSPENDED, BOUND, FORCED = "idle", "suspended", "bound", "forced"
NEVER = 2**62  # the minimum of an empty shard
_IN_BATCH = 500
_BULK = 50


def shard_number(session_id: str) -> str:
    return f"{zlib.crc32(session_id.encode()) % SHARDS:02d}"


def _shard(name: str, session_id: str) -> str:
    return f"{name}:{shard_number(session_id)}"


def _summary(name: str) -> str:
    return f"{name}:min"


class SweepSets:
    """Sets of session ids with a due time, as sharded documents in `session_sweep_sets`.

    Per set, a summary document `<set>:min` keeps for each shard a lower bound of its due times
    (`mins.<nn>`) and a write counter (`ver.<nn>`), so a tick with nothing due reads one small
    document instead of every entry. Invariant: `mins.<nn>` <= every due time in shard nn.
    A put lowers it (`$min`) and counts; a drop leaves it (still a lower bound); `settle` raises
    it to the shard's true minimum by compare-and-set on the counter, so a put that raced with
    the settle keeps the lower value.
    """

    def __init__(self, db: AsyncDatabase[Document]) -> None:
        self._c = db["session_sweep_sets"]
        self.sessions = db["sessions"]

    async def put(self, name: str, session_id: str, due_ms: int) -> None:
        await self.put_many(name, {session_id: due_ms})

    async def put_many(self, name: str, entries: dict[str, int]) -> None:
        if not entries:
            return
        by_shard: dict[str, dict[str, Any]] = {}
        mins: dict[str, int] = {}
        for sid, due in entries.items():
            nn = shard_number(sid)
            by_shard.setdefault(f"{name}:{nn}", {})[f"m.{sid}"] = due
            mins[f"mins.{nn}"] = min(due, mins.get(f"mins.{nn}", due))
        # Entries first, then the summary: a sweep that reads the summary in between misses
        # the new entry for one tick at most; it can never settle it away (the counter moved).
        await self._bulk(
            [UpdateOne({"_id": k}, {"$set": v}, upsert=True) for k, v in by_shard.items()]
        )
        counts = {k.replace("mins.", "ver."): 1 for k in mins}
        await self._write(_summary(name), {"$min": mins, "$inc": counts})

    async def drop(self, name: str, session_id: str) -> None:
        await self._c.update_one(
            {"_id": _shard(name, session_id)}, {"$unset": {f"m.{session_id}": ""}}
        )

    async def drop_everywhere(self, session_id: str) -> None:
        for name in (IDLE, SUSPENDED, BOUND, FORCED):
            await self.drop(name, session_id)

    async def drop_many(self, name: str, session_ids: Iterable[str]) -> None:
        by_shard: dict[str, dict[str, str]] = {}
        for sid in session_ids:
            by_shard.setdefault(_shard(name, sid), {})[f"m.{sid}"] = ""
        await self._bulk([UpdateOne({"_id": k}, {"$unset": v}) for k, v in by_shard.items()])

    async def drop_unchanged(self, name: str, entries: dict[str, int]) -> None:
        """Drops entries only where they still hold the value a sweep read: an entry that a
        concurrent transition rewrote meanwhile (a resume, a new bind) stays. One write per
        shard, on the condition that all of its entries are unchanged; a shard where one moved
        is done entry by entry (a shard document is rewritten whole by every write, so fewer,
        larger writes are what makes a sweep of many sessions cheap)."""
        by_shard: dict[str, dict[str, int]] = {}
        for sid, due in entries.items():
            by_shard.setdefault(_shard(name, sid), {})[sid] = due
        keys = list(by_shard)
        ops = [
            UpdateOne(
                {"_id": key, **{f"m.{sid}": due for sid, due in by_shard[key].items()}},
                {"$unset": {f"m.{sid}": "" for sid in by_shard[key]}},
            )
            for key in keys
        ]
        if await self._bulk(ops) == len(ops):
            return
        await self._bulk(
            [
                UpdateOne({"_id": _shard(name, sid), f"m.{sid}": due}, {"$unset": {f"m.{sid}": ""}})
                for sid, due in entries.items()
            ]
        )

    async def _bulk(self, ops: list[UpdateOne]) -> int:
        """Writes `ops`; how many documents they matched."""
        # Bounded batches keep one sweep's write from holding the store's write lock long
        # (tools/ferretdb/atomic-writes.patch serializes update commands).
        matched = 0
        for i in range(0, len(ops), _BULK):
            result = await self._c.bulk_write(ops[i : i + _BULK], ordered=False)
            matched += result.matched_count
        return matched

    async def entries(self, name: str, shards: Iterable[str] | None = None) -> dict[str, int]:
        keys = [f"{name}:{nn}" for nn in (shards if shards is not None else _all_shards())]
        out: dict[str, int] = {}
        for doc in await self._c.find({"_id": {"$in": keys}}).to_list(None):
            out.update({str(k): int(v) for k, v in (doc.get("m") or {}).items()})
        return out

    async def due(
        self, name: str, now_ms: int, only: frozenset[str] | None = None
    ) -> tuple[dict[str, int], list[str]]:
        """The due entries, and the shards read to find them (to `settle` afterwards). Only
        shards whose lower bound has passed are read; a shard without one is read too."""
        summary = await self._c.find_one({"_id": _summary(name)}) or {}
        mins = summary.get("mins") or {}
        shards = [nn for nn in _all_shards() if int(mins.get(nn, 0)) <= now_ms]
        found = await self.entries(name, shards) if shards else {}
        due = {
            sid: when
            for sid, when in found.items()
            if when <= now_ms and (only is None or sid in only)
        }
        return due, shards

    async def settle(self, name: str, shards: list[str]) -> None:
        """After a sweep changed the entries of `shards`: their summary minimum becomes the
        true one, unless a put came in meanwhile (then the lower value it wrote stays)."""
        if not shards:
            return
        summary = await self._c.find_one({"_id": _summary(name)}) or {}
        versions = summary.get("ver") or {}
        keys = [f"{name}:{nn}" for nn in shards]
        docs = {str(d["_id"]): d for d in await self._c.find({"_id": {"$in": keys}}).to_list(None)}
        lowest: dict[str, int] = {}
        conds: dict[str, Any] = {}
        for nn in shards:
            entries = (docs.get(f"{name}:{nn}") or {}).get("m") or {}
            lowest[nn] = min((int(v) for v in entries.values()), default=NEVER)
            version = versions.get(nn)
            conds[f"ver.{nn}"] = version if version is not None else {"$exists": False}
        # All shards in one write when no put came in meanwhile (the usual case); else shard
        # by shard, so the shards without a racing put still settle.
        whole = await self._c.update_one(
            {"_id": _summary(name), **conds},
            {"$set": {f"mins.{nn}": low for nn, low in lowest.items()}},
        )
        if whole.matched_count:
            return
        await self._bulk(
            [
                UpdateOne(
                    {"_id": _summary(name), f"ver.{nn}": conds[f"ver.{nn}"]},
                    {"$set": {f"mins.{nn}": lowest[nn]}},
                )
                for nn in shards
            ]
        )

    async def load(self, session_ids: Iterable[str]) -> list[Document]:
        ids = list(session_ids)
        out: list[Document] = []
        for i in range(0, len(ids), _IN_BATCH):
            out.extend(
                await self.sessions.find({"_id": {"$in": ids[i : i + _IN_BATCH]}}).to_list(None)
            )
        return out

    async def _write(self, key: str, update: Document) -> None:
        try:
            await self._c.update_one({"_id": key}, update, upsert=True)
        except Exception as exc:
            # Two first writers to one document both tried to insert it: the loser updates.
            if not is_duplicate_key(exc):
                raise
            await self._c.update_one({"_id": key}, update, upsert=True)


def _all_shards() -> list[str]:
    return [f"{i:02d}" for i in range(SHARDS)]
