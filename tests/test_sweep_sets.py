"""The sweep sets (session_service/lifecycle/sweep_sets.py) against the store: a tick reads only
the time
buckets that are due, a sweep drops only what it read and handled, an emptied bucket leaves
nothing behind, and neither a put nor a second sweep that races with a sweep loses an entry."""

from __future__ import annotations

from typing import Any

from session_service.lifecycle.sweep_sets import IDLE, SweepSets, bucket
from tests.harness import System
from tests.lifecycle_support import MIN, marker, store


async def _docs(db: Any, name: str) -> list[dict[str, Any]]:
    """The set's documents (a scan: fine in a test)."""
    return [d async for d in db["session_sweep_sets"].find({}) if d["_id"].startswith(f"{name}:")]


async def test_sweep_sets_read_only_buckets_whose_minimum_has_passed(system: System) -> None:
    """The directory keeps a lower bound per time bucket: a quiet tick reads no bucket at all."""
    name = f"test-{marker()}"
    async with store(system) as db:
        sets = SweepSets(db)
        await sets.put_many(name, {"a": 100 * MIN, "b": 300 * MIN})
        await sets.put(name, "c", 200 * MIN)
        read = await sets.due(name, 150 * MIN)
        assert read.due == {"a": 100 * MIN} and read.buckets
        await sets.finish(read, (), {})  # every bucket's true minimum
        assert list((await sets.due(name, 150 * MIN)).buckets) == [bucket(name, 100 * MIN)]
        await sets.finish(await sets.due(name, 150 * MIN), ["a"], {})  # a is handled
        read = await sets.due(name, 150 * MIN)
        assert (read.due, read.buckets) == ({}, {})  # nothing to read
        await sets.put(name, "d", 120 * MIN)  # a put lowers the bound at once
        assert (await sets.due(name, 150 * MIN)).due == {"d": 120 * MIN}
        assert (await sets.due(name, 250 * MIN)).due == {"c": 200 * MIN, "d": 120 * MIN}
        await sets.drop_many(name, ["b", "c", "d"])
        assert await sets.entries(name) == {}


async def test_a_handled_bucket_leaves_nothing_and_a_re_dated_entry_moves(system: System) -> None:
    name = f"test-{marker()}"
    async with store(system) as db:
        sets = SweepSets(db)
        await sets.put_many(name, {f"s{i}": 10 * MIN + i for i in range(20)})
        read = await sets.due(name, 11 * MIN)
        assert len(read.due) == 20
        # One is looked at again later, the others are done.
        await sets.finish(read, [f"s{i}" for i in range(1, 20)], {"s0": 40 * MIN})
        assert await sets.entries(name) == {"s0": 40 * MIN}
        assert (await sets.due(name, 39 * MIN)).buckets == {}
        # The documents of the handled bucket are gone; only the re-dated entry's remain.
        docs = await _docs(db, name)
        keys = [d["_id"] for d in docs if d["_id"] != f"{name}:dir"]
        assert keys and all(k.startswith(f"{name}:{bucket(name, 40 * MIN)}:") for k in keys)
        directory = next(d for d in docs if d["_id"] == f"{name}:dir")
        assert list(directory["min"]) == [bucket(name, 40 * MIN)]


async def test_a_put_racing_with_a_sweep_is_kept(system: System) -> None:
    """Between a sweep's read and its finish, a transition re-dates one handled session in the
    same bucket and adds another: both entries stay, and the bound stays below them."""
    name = f"test-{marker()}"
    async with store(system) as db:
        sets = SweepSets(db)
        await sets.put_many(name, {"a": 10 * MIN, "b": 10 * MIN + 1})
        read = await sets.due(name, 11 * MIN)
        await sets.put(name, "a", 10 * MIN + 30_000)  # rewritten meanwhile
        await sets.put(name, "c", 10 * MIN + 40_000)  # new meanwhile
        await sets.finish(read, ["a", "b"], {})
        assert await sets.entries(name) == {"a": 10 * MIN + 30_000, "c": 10 * MIN + 40_000}
        assert (await sets.due(name, 11 * MIN)).due == {
            "a": 10 * MIN + 30_000,
            "c": 10 * MIN + 40_000,
        }


async def test_an_overlapping_sweep_of_an_earlier_bucket_changes_nothing(system: System) -> None:
    """Two rounds that overlap (one outlived its lease): the second empties the bucket, which
    then fills again with counters from one; the first one's late finish must neither drop nor
    hide the new entry. (An entry is its session and due time: the very same pair put again
    is the entry the first round handled.)"""
    name = f"test-{marker()}"
    async with store(system) as db:
        sets = SweepSets(db)
        await sets.put(name, "a", 10 * MIN)
        first = await sets.due(name, 11 * MIN)
        second = await sets.due(name, 11 * MIN)
        await sets.finish(second, ["a"], {})
        assert await _docs(db, name) == [
            d for d in await _docs(db, name) if d["_id"].endswith(":dir")
        ]
        # A new transition of the same session, due in the same bucket: a new document.
        await sets.put(name, "a", 10 * MIN + 5_000)
        await sets.finish(first, ["a"], {})
        assert (await sets.due(name, 11 * MIN)).due == {"a": 10 * MIN + 5_000}


async def test_purge_and_known_drops(system: System) -> None:
    name = f"test-{marker()}"
    async with store(system) as db:
        sets = SweepSets(db)
        await sets.put_many(name, {"a": 10 * MIN, "b": 20 * MIN})
        await sets.put(name, "a", 500 * MIN)  # a second entry of a, elsewhere
        await sets.drop(name, "b", 21 * MIN)  # not b's due time: kept
        assert await sets.entries(name) == {"a": 10 * MIN, "b": 20 * MIN}
        await sets.drop(name, "b", 20 * MIN)
        await sets.purge(["a"], [name])
        assert await sets.entries(name) == {}
        assert not any("a" in (d.get("m") or {}) for d in await _docs(db, name))


async def test_entries_of_the_earlier_layout_are_converted(system: System) -> None:
    """A store written by the hash-sharded layout (`<set>:<nn>` plus `<set>:min`) keeps every
    entry when the new layout takes over."""
    m = marker()
    async with store(system) as db:
        c = db["session_sweep_sets"]
        await c.insert_many(
            [
                {"_id": "idle:07", "m": {f"old{m}a": 10 * MIN, f"old{m}b": 20 * MIN}},
                {"_id": "idle:min", "mins": {"07": 10 * MIN}, "ver": {"07": 3}},
            ]
        )
        sets = SweepSets(db)
        assert await sets.convert_v1() == 2
        entries = await sets.entries(IDLE)
        assert entries[f"old{m}a"] == 10 * MIN and entries[f"old{m}b"] == 20 * MIN
        assert await c.find_one({"_id": {"$in": ["idle:07", "idle:min"]}}) is None
        await sets.drop_many(IDLE, [f"old{m}a", f"old{m}b"])
