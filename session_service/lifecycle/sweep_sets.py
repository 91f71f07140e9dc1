"""The sweep sets: which sessions each lifecycle sweep (lifecycle/sweepers.py) needs to look at,
and when.

They stand in for partial indexes: the embedded store only indexes `_id` (docs/architecture.md,
"Store access"), so a filter over `sessions` would scan every session on every tick. Instead
each set (`idle`, `suspended`, `bound`, `forced`) is a few small documents in
`session_sweep_sets` mapping session id -> the earliest time the sweep needs to look at it,
grouped by that time: bucket `t<n>` holds the entries due in [n * width, (n + 1) * width),
split over PARTS documents `<set>:t<n>:<p>` by a hash of the session id (so one bucket stays
several small documents even when many sessions fall into it). A directory `<set>:dir` keeps
per bucket a lower bound of its due times (`min.t<n>`) and a put counter (`ver.t<n>`). A sweep
reads the directory, then the documents of the buckets whose bound has passed (one `_id $in`
query): what is due is colocated, so a round reads and rewrites only what it handles.

The sets may hold too much (a sweep re-checks the session document, which is the truth, and
drops stale entries), never too little: entries are written before the state change that needs
them. Hence a transition drops an entry only where it knows its due time (a suspended
session's transitionAt); the others (an idle entry of a session suspended by hand, the bind
entry of a released bind) stay until they are due and the sweep drops them then, which costs
less than finding them now. Deleting a session removes its entries everywhere (`purge`).
"""

from __future__ import annotations

import secrets
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pymongo import DeleteOne, UpdateOne

from session_service.store.raw import Bson, Db
from vance.store import is_duplicate_key

IDLE, SUSPENDED, BOUND, FORCED = "idle", "suspended", "bound", "forced"
ALL_SETS = (IDLE, SUSPENDED, BOUND, FORCED)
PARTS = 8
# Bucket widths: about the precision a sweep needs (one round a minute by default) and few
# enough buckets per directory over the spread of each set's due times (binds go stale within
# minutes, idle timeouts are minutes to hours, transitionAt is a day or a week away). FORCED
# is read whole by the auto-restart pass: one bucket.
WIDTH_MS = {BOUND: 30_000, IDLE: 60_000, SUSPENDED: 900_000, FORCED: 2**62}
_DEFAULT_WIDTH_MS = 60_000
_IN_BATCH = 500
_BULK = 50


def bucket(name: str, due_ms: int) -> str:
    return f"t{due_ms // WIDTH_MS.get(name, _DEFAULT_WIDTH_MS)}"


def _part(session_id: str) -> int:
    return zlib.crc32(session_id.encode()) % PARTS


def _key(name: str, bucket_id: str, part: int) -> str:
    return f"{name}:{bucket_id}:{part}"


def locate(name: str, session_id: str, due_ms: int) -> str:
    """The document that holds the entry (session_id, due_ms) of set `name`."""
    return _key(name, bucket(name, due_ms), _part(session_id))


def _dir(name: str) -> str:
    return f"{name}:dir"


def _is(value: int | str | None) -> int | str | Bson:
    """A filter value: equal to `value`, or absent for None."""
    return value if value is not None else {"$exists": False}


@dataclass
class Read:
    """What a sweep read of one set: the due entries, and what `finish` needs to drop them and
    to settle the directory without reading again."""

    name: str
    now_ms: int
    due: dict[str, int] = field(default_factory=dict)  # session -> its earliest due entry
    born: str | None = None  # the directory's incarnation
    buckets: dict[str, int | None] = field(default_factory=dict)  # read -> directory counter
    docs: dict[str, dict[str, int]] = field(default_factory=dict)  # key -> entries as read
    versions: dict[str, tuple[int, str | None]] = field(default_factory=dict)  # key -> (v, b)


class SweepSets:
    """The sweep sets in `session_sweep_sets`. Invariant: `min.t<n>` <= every due time in
    bucket t<n>. A put writes the entry, then lowers the bound (`$min`) and counts (`$inc`); a
    drop leaves the bound (still a lower bound); `finish` raises it to the bucket's true
    minimum, or removes an emptied bucket, by compare-and-set on the counter, so a put that
    raced with the sweep keeps the lower value.

    Emptied bucket documents are deleted and emptied buckets leave the directory, so counters
    start again from one. Each document therefore carries a random token of its incarnation
    (`b` in a bucket document, `born` in the directory, written when it is created; removing
    a bucket from the directory draws a new `born`), and every compare-and-set checks it too:
    a sweep that read an earlier incarnation changes nothing (two rounds can overlap when one
    outlives its lease)."""

    def __init__(self, db: Db) -> None:
        self._c = db["session_sweep_sets"]

    # ---- writing entries ----

    async def put(self, name: str, session_id: str, due: int) -> None:
        await self.put_many(name, {session_id: due})

    async def put_many(self, name: str, entries: dict[str, int]) -> set[str]:
        """Writes entries; returns the buckets whose counter it moved (by one each)."""
        if not entries:
            return set()
        by_key: dict[str, dict[str, int]] = {}
        mins: dict[str, int] = {}
        for sid, due in entries.items():
            by_key.setdefault(locate(name, sid, due), {})[f"m.{sid}"] = due
            b = bucket(name, due)
            mins[b] = min(due, mins.get(b, due))
        # Entries first, then the directory: a sweep that reads the directory in between
        # misses the new entry for one tick at most; it can never settle it away (the counter
        # moved).
        born = {"$setOnInsert": {"b": secrets.token_hex(8)}}
        await self._bulk(
            [
                UpdateOne({"_id": k}, {"$set": v, "$inc": {"v": 1}, **born}, upsert=True)
                for k, v in by_key.items()
            ]
        )
        update = {
            "$min": {f"min.{b}": low for b, low in mins.items()},
            "$inc": {f"ver.{b}": 1 for b in mins},
            "$setOnInsert": {"born": secrets.token_hex(8)},
        }
        try:
            await self._c.update_one({"_id": _dir(name)}, update, upsert=True)
        except Exception as exc:
            # Two first writers of one directory both tried to insert it: the loser updates.
            if not is_duplicate_key(exc):
                raise
            await self._c.update_one({"_id": _dir(name)}, update, upsert=True)
        return set(mins)

    async def drop(self, name: str, session_id: str, due: int) -> None:
        """Drops the entry (session_id, due) if it is still there with that due time."""
        await self.drop_entries(name, {session_id: due})

    async def drop_entries(self, name: str, entries: dict[str, int]) -> None:
        await self._bulk(
            [
                UpdateOne(
                    {"_id": locate(name, sid, due), f"m.{sid}": due}, {"$unset": {f"m.{sid}": ""}}
                )
                for sid, due in entries.items()
            ]
        )

    async def purge(self, session_ids: Iterable[str], names: Iterable[str] = ALL_SETS) -> None:
        """Removes every entry of the sessions, wherever it is: reads, in every bucket of the
        sets, the one document per session that can hold it (for a deleted session)."""
        ids = list(session_ids)
        names = list(names)
        parts = sorted({_part(sid) for sid in ids})
        dirs = await self._c.find({"_id": {"$in": [_dir(n) for n in names]}}).to_list(None)
        keys = [
            _key(str(d["_id"]).removesuffix(":dir"), str(b), p)
            for d in dirs
            for b in (d.get("min") or {})
            for p in parts
        ]
        ops = []
        for doc in await self._find(keys):
            there = [sid for sid in ids if sid in (doc.get("m") or {})]
            if there:
                ops.append(
                    UpdateOne({"_id": doc["_id"]}, {"$unset": {f"m.{s}": "" for s in there}})
                )
        await self._bulk(ops)

    async def drop_many(self, name: str, session_ids: Iterable[str]) -> None:
        await self.purge(session_ids, (name,))

    # ---- reading ----

    async def entries(self, name: str) -> dict[str, int]:
        """Every entry of the set (the earliest per session)."""
        return (await self.due(name, 2**62)).due

    async def due(self, name: str, now_ms: int, only: frozenset[str] | None = None) -> Read:
        """The due entries: only buckets whose lower bound has passed are read."""
        read = Read(name, now_ms)
        directory = await self._c.find_one({"_id": _dir(name)}) or {}
        read.born = directory.get("born")
        versions = directory.get("ver") or {}
        for b, low in (directory.get("min") or {}).items():
            if int(low) <= now_ms:
                version = versions.get(b)
                read.buckets[str(b)] = int(version) if version is not None else None
        keys = [_key(name, b, p) for b in read.buckets for p in range(PARTS)]
        for doc in await self._find(keys):
            entries = {str(s): int(d) for s, d in (doc.get("m") or {}).items()}
            read.docs[str(doc["_id"])] = entries
            read.versions[str(doc["_id"])] = (int(doc.get("v") or 0), doc.get("b"))
            for sid, when in entries.items():
                if when <= now_ms and (only is None or sid in only):
                    read.due[sid] = min(when, read.due.get(sid, when))
        return read

    # ---- after a sweep ----

    async def finish(self, read: Read, handled: Iterable[str], later: dict[str, int]) -> None:
        """After a sweep: re-dates `later` (new entries), drops every due entry read of the
        `handled` sessions (and of those re-dated) where it is unchanged since it was read,
        and settles the directory of the buckets read. An entry that a concurrent transition
        rewrote meanwhile stays."""
        name = read.name
        moved = await self.put_many(name, later)  # before the drops: never too little
        # A re-dated entry that stays in its document was overwritten by that put.
        ours = {locate(name, s, d) for s, d in later.items()}
        gone = set(handled) | set(later)
        drop: dict[str, dict[str, int]] = {}
        for key, entries in read.docs.items():
            hits = {
                s: d
                for s, d in entries.items()
                if s in gone
                and d <= read.now_ms
                and (s not in later or locate(name, s, later[s]) != key)
            }
            if hits or not entries:
                drop[key] = hits
        await self._drop(read, drop, ours)
        await self._settle(read, drop, later, moved)

    async def _drop(self, read: Read, drop: dict[str, dict[str, int]], ours: set[str]) -> None:
        """A document whose every entry goes is deleted, on the condition that no put came in
        since it was read; in the others the entries are unset on the condition that they all
        still hold the values read. Whatever did not hold is retried entry by entry."""
        ops: list[UpdateOne | DeleteOne] = []
        for key, hits in drop.items():
            if key not in ours and len(hits) == len(read.docs[key]):
                v, b = read.versions[key]
                ops.append(DeleteOne({"_id": key, "v": v, "b": _is(b)}))
            elif hits:
                cond = {f"m.{s}": d for s, d in hits.items()}
                ops.append(UpdateOne({"_id": key, **cond}, {"$unset": dict.fromkeys(cond, "")}))
        if await self._bulk(ops) == len(ops):
            return
        await self._bulk(
            [
                UpdateOne({"_id": key, f"m.{s}": d}, {"$unset": {f"m.{s}": ""}})
                for key, hits in drop.items()
                for s, d in hits.items()
            ]
        )

    async def _settle(
        self, read: Read, drop: dict[str, dict[str, int]], later: dict[str, int], moved: set[str]
    ) -> None:
        """Each bucket read gets its true minimum, or leaves the directory when nothing is left
        in it, unless a put other than this sweep's own came in since the read."""
        if not read.buckets:
            return
        left: dict[str, list[int]] = {b: [] for b in read.buckets}
        for key, entries in read.docs.items():
            gone = drop.get(key, {})
            left[key.split(":")[-2]] += [d for s, d in entries.items() if gone.get(s) != d]
        for due in later.values():
            left.get(bucket(read.name, due), []).append(due)
        lowest = {b: min(dues, default=None) for b, dues in left.items()}
        conds: Bson = {}
        for b, version in read.buckets.items():
            conds[f"ver.{b}"] = _is((version or 0) + (1 if b in moved else 0) or None)
        raise_to = {f"min.{b}": low for b, low in lowest.items() if low is not None}
        emptied = [b for b, low in lowest.items() if low is None]
        update: Bson = {"$set": raise_to}
        if emptied:
            update["$set"] = {**raise_to, "born": secrets.token_hex(8)}
            update["$unset"] = {f"{f}.{b}": "" for b in emptied for f in ("min", "ver")}
        # All buckets in one write when no put came in meanwhile (the usual case); else bucket
        # by bucket, so the buckets without a racing put still settle (their bounds rise; an
        # emptied one leaves the directory at a later round).
        this = {"_id": _dir(read.name), "born": _is(read.born)}
        whole = await self._c.update_one({**this, **conds}, update)
        if whole.matched_count or len(read.buckets) == 1:
            return
        await self._bulk(
            [
                UpdateOne({**this, f"ver.{b}": conds[f"ver.{b}"]}, {"$set": {f"min.{b}": low}})
                for b, low in lowest.items()
                if low is not None
            ]
        )

    async def convert_v1(self) -> int:
        """Moves the entries of the earlier layout (64 hash shards `<set>:<nn>` per set and a
        summary `<set>:min`, without time buckets) into this one, once per store; how many."""
        keys = [f"{n}:{i:02d}" for n in ALL_SETS for i in range(64)]
        old = await self._find(keys + [f"{n}:min" for n in ALL_SETS])
        moved = 0
        for name in ALL_SETS:
            entries: dict[str, int] = {}
            for doc in old:
                if str(doc["_id"]).startswith(f"{name}:") and "m" in doc:
                    entries.update({str(k): int(v) for k, v in doc["m"].items()})
            await self.put_many(name, entries)
            moved += len(entries)
        if old:
            await self._c.delete_many({"_id": {"$in": [d["_id"] for d in old]}})
        return moved

    # ---- plumbing ----

    async def _find(self, keys: list[str]) -> list[Bson]:
        out: list[Bson] = []
        for i in range(0, len(keys), _IN_BATCH):
            out.extend(await self._c.find({"_id": {"$in": keys[i : i + _IN_BATCH]}}).to_list(None))
        return out

    async def _bulk(self, ops: Sequence[UpdateOne | DeleteOne]) -> int:
        """Writes `ops`; how many documents they matched or deleted."""
        # Bounded batches keep one sweep's write from holding the store's write lock long
        # (tools/ferretdb/atomic-writes.patch serializes update commands).
        done = 0
        for i in range(0, len(ops), _BULK):
            result = await self._c.bulk_write(ops[i : i + _BULK], ordered=False)
            done += result.matched_count + result.deleted_count
        return done
