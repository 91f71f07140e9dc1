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


# Values of every type the services store, and strings that JSON must escape.
AWKWARD = [
    "",
    'quo"te and back\\slash',
    "tab\tnew\nline\x00nul\x1f\x7f",
    "<b>&amp;</b>",
    "héllo wörld \U0001f600 \u2028\u2029",
]


async def test_sjson_write_one_pass_every_value_reads_back_as_written(
    collection: AsyncCollection[Doc],
) -> None:
    """sjson-write-one-pass.patch writes stored documents in one pass (upstream's bytes, which
    its Go test compares on every type); here a document with every kind of value, inserted
    and then rewritten by an update, reads back as written."""
    from datetime import datetime

    from bson import Int64, ObjectId

    doc: Doc = {
        "_id": "awkward",
        "strings": AWKWARD,
        "by_key": {s.replace("\x00", "") + "k": s for s in AWKWARD},  # BSON keys hold no NUL
        "numbers": [0, -7, 2**31 - 1, Int64(2**62), 1.5, -0.25, 1e300],
        "flags": [True, False, None],
        "nested": {
            "a": [{"b": {"c": [1, "x"], "e": []}}, {}],
            "oid": ObjectId(),
            "bin": b"\x00\xff",  # PyMongo reads binary subtype 0 as bytes
        },
        "when": datetime(2026, 12, 1, 12, 30, 15, 123000),  # PyMongo reads naive UTC, in ms
    }
    await collection.insert_one(doc)
    assert await collection.find_one({"_id": "awkward"}) == doc
    await collection.update_one({"_id": "awkward"}, {"$set": {"more": AWKWARD[::-1]}})
    assert await collection.find_one({"_id": "awkward"}) == {**doc, "more": AWKWARD[::-1]}


async def test_wire_decode_once_a_nan_is_refused_with_a_clear_error(
    collection: AsyncCollection[Doc],
) -> None:
    """wire-decode-once.patch: upstream decoded every message a second time to refuse NaN
    (SQLite's JSON cannot hold it) and closed the connection on one; now the command answers
    BadValue, nothing is stored, and the connection serves the next command."""
    from pymongo.errors import OperationFailure

    with pytest.raises(OperationFailure) as refused:
        await collection.insert_one({"_id": "n", "x": [{"y": float("nan")}]})
    assert refused.value.code == 2 and "NaN" in str(refused.value)
    with pytest.raises(OperationFailure):
        await collection.find_one({"x": float("nan")})
    await collection.insert_one({"_id": "ok", "x": 1.0})
    found = await collection.find({}, comment="a comment is still read").to_list(None)
    assert found == [{"_id": "ok", "x": 1.0}]


async def test_write_autocommit_single_writes_keep_their_errors_and_counts(
    collection: AsyncCollection[Doc],
) -> None:
    """write-autocommit.patch: an insert or update of one document runs without BEGIN and
    COMMIT around it. A duplicate _id still fails and changes nothing; an ordered insert of
    several stops at the duplicate with the ones before it stored; counts are right."""
    from pymongo.errors import BulkWriteError, DuplicateKeyError

    await collection.insert_one({"_id": "a", "n": 1})
    with pytest.raises(DuplicateKeyError):
        await collection.insert_one({"_id": "a", "n": 2})
    assert await collection.find_one({"_id": "a"}) == {"_id": "a", "n": 1}
    with pytest.raises(BulkWriteError) as stopped:
        await collection.insert_many([{"_id": "b"}, {"_id": "a"}, {"_id": "c"}], ordered=True)
    assert stopped.value.details["nInserted"] == 1
    assert sorted(str(d["_id"]) for d in await collection.find({}).to_list(None)) == ["a", "b"]
    done = await collection.update_one({"_id": "a", "n": 1}, {"$inc": {"n": 1}})
    assert (done.matched_count, done.modified_count) == (1, 1)
    missed = await collection.update_one({"_id": "a", "n": 1}, {"$inc": {"n": 1}})
    assert (missed.matched_count, missed.modified_count) == (0, 0)
    assert await collection.find_one({"_id": "a"}) == {"_id": "a", "n": 2}


async def test_params_tag_cache_unknown_and_missing_parameters_are_still_refused(
    collection: AsyncCollection[Doc],
) -> None:
    """params-tag-cache.patch parses each command's parameter tags once instead of per key;
    what they say is unchanged: an unknown field, a missing required one and an unimplemented
    one are refused with upstream's errors, and a well-formed command with optional fields
    runs."""
    from pymongo.errors import OperationFailure

    db = collection.database
    with pytest.raises(OperationFailure) as unknown:
        await db.command({"findAndModify": collection.name, "query": {}, "bogus": 1})
    assert unknown.value.code == 9 and "unknown field" in str(unknown.value)
    with pytest.raises(OperationFailure) as missing:
        await db.command({"update": collection.name})
    assert missing.value.code == 40414 and "updates" in str(missing.value)
    with pytest.raises(OperationFailure) as unimplemented:
        await db.command({"findAndModify": collection.name, "query": {}, "fields": {"v": 1}})
    assert unimplemented.value.code == 238 and '"fields"' in str(unimplemented.value)
    await collection.insert_one({"_id": "p", "v": 1})
    done = await db.command(
        {
            "findAndModify": collection.name,
            "query": {"_id": "p"},
            "update": {"$inc": {"v": 1}},
            "new": True,
            "upsert": False,
        }
    )
    assert done["value"] == {"_id": "p", "v": 2}


async def test_read_then_write_updates_keep_their_counts_upserts_and_multi(
    collection: AsyncCollection[Doc],
) -> None:
    """read-then-write.patch: update and findAndModify now read every matching document and
    close the query before writing (one SQLite connection does both, its cache kept). What
    they answer is unchanged: a multi update changes each match once, a no-op counts as
    matched and not modified, an upsert inserts once, a miss changes nothing."""
    await collection.insert_many([{"_id": f"d{i}", "k": i % 3, "n": 0} for i in range(30)])
    multi = await collection.update_many({"k": 1}, {"$inc": {"n": 1}})
    assert (multi.matched_count, multi.modified_count) == (10, 10)
    same = await collection.update_many({"k": 1}, {"$set": {"n": 1}})
    assert (same.matched_count, same.modified_count) == (10, 0)
    one = await collection.update_one({"k": 2}, {"$inc": {"n": 5}})
    assert (one.matched_count, one.modified_count) == (1, 1)
    counts = {
        k: sorted(int(str(d["n"])) for d in await collection.find({"k": k}).to_list(None))
        for k in (0, 1, 2)
    }
    assert counts == {0: [0] * 10, 1: [1] * 10, 2: [0] * 9 + [5]}
    upserted = await collection.update_one({"_id": "new", "k": 7}, {"$set": {"n": 9}}, upsert=True)
    assert upserted.upserted_id == "new" and upserted.matched_count == 0
    made = await collection.find_one_and_update(
        {"_id": "made"}, {"$set": {"n": 3}}, upsert=True, return_document=ReturnDocument.AFTER
    )
    assert made == {"_id": "made", "n": 3}
    before = await collection.find_one_and_update({"_id": "made"}, {"$inc": {"n": 1}})
    assert before == {"_id": "made", "n": 3}
    missed = await collection.find_one_and_update({"_id": "nothing"}, {"$set": {"n": 1}})
    assert missed is None and await collection.count_documents({}) == 32


async def test_json_extract_fast_every_kind_of_id_keeps_its_index(
    collection: AsyncCollection[Doc],
) -> None:
    """sqlite/json-extract-fast.patch computes the `_id` index key of plain string and integer
    ids itself and leaves the rest to SQLite. Whichever way a key was made, a lookup by `_id`
    (through the index), an update and a delete find the document, and the unique index still
    refuses a second document with the same `_id`."""
    from bson import ObjectId
    from pymongo.errors import DuplicateKeyError

    ids: list[object] = [
        "sess_plain",
        'quo"te',
        "back\\slash",
        "héllo \U0001f600",
        "",
        0,
        -42,
        2**40,
        1.5,
        ObjectId(),
        {"a": 1, "b": "x"},
        True,
    ]
    await collection.insert_many([{"_id": i, "v": 0} for i in ids])
    for i in ids:
        done = await collection.update_one({"_id": i, "v": 0}, {"$set": {"v": 1, "pad": "x" * 300}})
        assert (done.matched_count, done.modified_count) == (1, 1), i
        assert await collection.find_one({"_id": i}) == {"_id": i, "v": 1, "pad": "x" * 300}
        with pytest.raises(DuplicateKeyError):
            await collection.insert_one({"_id": i, "v": 2})
    gone = await collection.delete_one({"_id": "héllo \U0001f600"})
    assert gone.deleted_count == 1
    assert await collection.count_documents({}) == len(ids) - 1
