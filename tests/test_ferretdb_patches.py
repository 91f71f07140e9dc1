"""Our FerretDB patches (tools/ferretdb/), each shown by what it changes for us, and the guard
that refuses a ferretdb without them (vance/embedded_store.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pymongo import AsyncMongoClient, ReturnDocument, UpdateOne
from pymongo.asynchronous.collection import AsyncCollection

from tests.harness import System
from vance.embedded_store import (
    FERRETDB_BIN,
    REQUIRED_PATCHES,
    UnpatchedFerretDBError,
    check_patched,
    ferretdb_patches,
)
from vance.ids import new_id

ROOT = Path(__file__).resolve().parent.parent
Doc = dict[str, object]


@pytest.fixture
async def collection(system: System) -> AsyncIterator[AsyncCollection[Doc]]:
    # Two connections at least, so two commands really run at once in the store.
    client: AsyncMongoClient[Doc] = AsyncMongoClient(system.config.mongodb_uri, minPoolSize=4)
    coll = client["patch_tests"][new_id("c")]
    try:
        yield coll
    finally:
        await coll.drop()
        await client.close()


def test_the_guard_names_every_patch_the_build_applies() -> None:
    shipped = {p.name.removesuffix(".patch") for p in (ROOT / "tools/ferretdb").rglob("*.patch")}
    assert shipped == REQUIRED_PATCHES
    assert ferretdb_patches(FERRETDB_BIN) >= REQUIRED_PATCHES  # the one `make setup` built
    check_patched(FERRETDB_BIN)


def test_an_upstream_ferretdb_is_refused_with_the_way_out(tmp_path: Path) -> None:
    # What `ferretdb --version` of an upstream v1.24.2 build prints.
    upstream = tmp_path / "ferretdb"
    upstream.write_text(
        "#!/bin/sh\nprintf 'version: v1.24.2\\ncommit: unknown\\npackage: unknown\\n'\n"
    )
    upstream.chmod(0o755)
    assert ferretdb_patches(upstream) == frozenset()
    with pytest.raises(UnpatchedFerretDBError) as refused:
        check_patched(upstream)
    assert "atomic-writes" in str(refused.value) and "make setup" in str(refused.value)


async def test_atomic_writes_two_concurrent_compare_and_sets_one_wins(
    collection: AsyncCollection[Doc],
) -> None:
    """atomic-writes.patch: findAndModify and update read, then write in another statement;
    unpatched, two compare-and-sets on one version can both succeed."""
    await collection.insert_one({"_id": "p", "version": 0})
    for version in range(40):

        async def claim_fm(who: str, v: int = version) -> bool:
            found = await collection.find_one_and_update(
                {"_id": "p", "version": v},
                {"$set": {"version": v + 1, "by": who}},
                return_document=ReturnDocument.AFTER,
            )
            return found is not None

        async def claim_update(who: str, v: int = version) -> bool:
            done = await collection.update_one(
                {"_id": "p", "version": v}, {"$set": {"version": v + 1, "by": who}}
            )
            return done.modified_count == 1

        claim = claim_fm if version % 2 else claim_update
        wins = await asyncio.gather(claim("a"), claim("b"))
        assert sorted(wins) == [False, True], f"round {version}: {wins}"
    assert (await collection.find_one({"_id": "p"}) or {}).get("version") == 40


async def test_update_connections_a_command_of_many_single_updates_completes(
    collection: AsyncCollection[Doc],
) -> None:
    """update-connections.patch: unpatched, each single-document statement of one update
    command holds a pooled SQLite connection until the command ends; 150 of them exhaust the
    pool of 100 and the store hangs for good."""
    await collection.insert_many([{"_id": f"d{i}", "n": 0} for i in range(150)])
    ops = [UpdateOne({"_id": f"d{i}"}, {"$inc": {"n": 1}}) for i in range(150)]
    done = await asyncio.wait_for(collection.bulk_write(ops, ordered=True), timeout=120)
    assert done.modified_count == 150
    # And the store still takes writes afterwards.
    after = await asyncio.wait_for(collection.update_one({"_id": "d0"}, {"$inc": {"n": 1}}), 60)
    assert after.modified_count == 1


async def test_id_pushdown_a_lookup_by_id_with_more_conditions_uses_the_id_index(
    collection: AsyncCollection[Doc],
) -> None:
    """sqlite-id-pushdown.patch: unpatched, only a filter that is exactly {_id: x} reaches
    SQLite, and with a path the _id index does not match; our compare-and-sets name the _id
    and a version, so every one scanned the whole collection."""
    await collection.insert_many([{"_id": f"d{i}", "version": 0} for i in range(20)])
    db = collection.database
    for filter_ in ({"_id": "d7"}, {"_id": "d7", "version": 0}):
        plan = await db.command({"explain": {"find": collection.name, "filter": filter_}})
        steps = " ".join(str(s) for s in plan["queryPlanner"]["Plan"])
        assert "USING INDEX" in steps, (filter_, steps)
    found = await collection.find_one({"_id": {"$in": ["d3", "d9"]}, "version": 0})
    assert found is not None and found["_id"] == "d3"
