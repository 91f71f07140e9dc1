"""The turn path's store commands sent directly (vance/store_wire.py) against the real store: each
gives what PyMongo gives for the same command, errors included; a connection the store drops
or a request that is cancelled is never reused, and the next command works."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pymongo.errors import AutoReconnect, BulkWriteError, DuplicateKeyError, OperationFailure

from tests.harness import System
from tests.lifecycle_support import marker, store
from vance.config import load_config
from vance.store_wire import HotCollection, HotCommands, WirePool, wire_address

PATHS = ["wire", "pymongo"]


@contextlib.asynccontextmanager
async def hot(system: System, path: str) -> AsyncIterator[tuple[HotCollection, Any]]:
    """A fresh collection through the given path, and the database to check it with."""
    async with store(system) as db:
        address = wire_address(system.config.mongodb_uri)
        assert address is not None, "the embedded store's URI is one the wire path serves"
        pool = WirePool(*address, system.config.store.db_name) if path == "wire" else None
        commands = HotCommands(db, pool)
        name = f"wire_test_{marker()}"
        try:
            yield commands.collection(name), db[name]
        finally:
            await commands.close()
            await db.drop_collection(name)


@pytest.mark.parametrize("path", PATHS)
async def test_find_and_modify_answers_the_document_or_none(system: System, path: str) -> None:
    async with hot(system, path) as (col, db_col):
        await col.insert_many([{"_id": "p", "n": 1, "keys": ["a"]}])
        after = await col.find_one_and_update(
            {"_id": "p", "keys": {"$ne": "b"}},
            {"$inc": {"n": 1}, "$push": {"keys": "b"}},
            return_document=True,
        )
        assert after == {"_id": "p", "n": 2, "keys": ["a", "b"]}
        before = await col.find_one_and_update({"_id": "p"}, {"$inc": {"n": 1}})
        assert before == after
        # The compare fails: nothing changes and nothing is answered.
        missed = await col.find_one_and_update(
            {"_id": "p", "keys": {"$ne": "b"}}, {"$inc": {"n": 100}}, return_document=True
        )
        assert missed is None
        assert await db_col.find_one({"_id": "p"}) == {"_id": "p", "n": 3, "keys": ["a", "b"]}
        made = await col.find_one_and_update(
            {"_id": "q"}, {"$set": {"v": 1}}, return_document=True, upsert=True
        )
        assert made == {"_id": "q", "v": 1}


@pytest.mark.parametrize("path", PATHS)
async def test_an_ordered_insert_stops_at_a_taken_id_and_says_how_many_went_in(
    system: System, path: str
) -> None:
    async with hot(system, path) as (col, db_col):
        await col.insert_many([{"_id": "2", "text": "first"}])
        with pytest.raises(BulkWriteError) as raised:
            await col.insert_many([{"_id": "1"}, {"_id": "2", "text": "again"}, {"_id": "3"}])
        assert raised.value.details["nInserted"] == 1
        assert [e["code"] for e in raised.value.details["writeErrors"]] == [11000]
        stored = await db_col.find({}).sort("_id", 1).to_list(None)
        assert stored == [{"_id": "1"}, {"_id": "2", "text": "first"}]
        # A document without an id gets one, as PyMongo gives it.
        doc: dict[str, Any] = {"text": "no id"}
        await col.insert_many([doc])
        assert await db_col.find_one({"_id": doc["_id"]}) == doc


@pytest.mark.parametrize("path", PATHS)
async def test_update_counts_matches_and_upserts(system: System, path: str) -> None:
    async with hot(system, path) as (col, db_col):
        assert await col.update_one({"_id": "s"}, {"$max": {"seq": 5}}, upsert=True) == 1
        assert await col.update_one({"_id": "s"}, {"$max": {"seq": 3}}) == 1
        assert await col.update_one({"_id": "none"}, {"$set": {"x": 1}}) == 0
        assert await db_col.find_one({"_id": "s"}) == {"_id": "s", "seq": 5}


@pytest.mark.parametrize("path", PATHS)
async def test_store_errors_come_back_as_pymongo_errors(system: System, path: str) -> None:
    async with hot(system, path) as (col, _):
        with pytest.raises(OperationFailure) as raised:
            await col.find_one_and_update({"_id": "p"}, {"$bogus": {"n": 1}}, upsert=True)
        assert raised.value.code  # the store's own code and message
        await col.insert_many([{"_id": "p", "k": 1}])
        with pytest.raises(DuplicateKeyError):
            await col.find_one_and_update({"_id": "p", "k": 2}, {"$set": {"k": 3}}, upsert=True)


async def test_a_burst_of_commands_shares_the_configured_connections(system: System) -> None:
    """A burst wider than `store.wire_connections` waits in the process for a free connection
    instead of opening one per command (which the store would keep open, issue 28): the store
    sees at most that many connections, and every command is answered."""
    address = wire_address(system.config.mongodb_uri)
    assert address is not None
    accepted = 0

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # A counting relay in front of the real store.
        nonlocal accepted
        accepted += 1
        up_reader, up_writer = await asyncio.open_connection(*address)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
            dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = await asyncio.start_server(relay, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    name = f"wire_test_{marker()}"
    async with server, store(system) as db:
        pool = WirePool("127.0.0.1", port, system.config.store.db_name, max_size=3)
        try:
            col = HotCommands(db, pool).collection(name)
            await asyncio.gather(*(col.insert_many([{"_id": str(i)}]) for i in range(30)))
            assert await db[name].count_documents({}) == 30
            assert 1 <= accepted <= 3
        finally:
            await pool.close()
            await db.drop_collection(name)


def test_the_wire_connections_come_from_the_configuration() -> None:
    assert load_config(env={}).store.wire_connections == 8
    config = load_config(env={"VANCE_STORE_WIRE_CONNECTIONS": "2"})
    assert config.store.wire_connections == 2


Held = list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]


async def _silent_server() -> tuple[asyncio.Server, int, Held]:
    """Accepts connections and never answers (a store that hangs)."""
    held: Held = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append((reader, writer))

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], held


async def _until(condition: Any, timeout_s: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_a_cancelled_or_dropped_request_never_reuses_its_connection() -> None:
    server, port, held = await _silent_server()
    async with server:
        pool = WirePool("127.0.0.1", port, "vance")
        request = asyncio.create_task(pool.command({"find": "x", "filter": {}}))
        await _until(lambda: len(held) == 1)
        request.cancel()
        with pytest.raises(asyncio.CancelledError):
            await request
        # Its reply could still come and would answer the next request: the socket is closed
        # (the server reads to its end).
        await asyncio.wait_for(held[0][0].read(), 5)
        # The store drops the next connection while a request waits on it.
        request = asyncio.create_task(pool.command({"find": "x", "filter": {}}))
        await _until(lambda: len(held) == 2)
        held[1][1].close()
        with pytest.raises(AutoReconnect):
            await request
        await pool.close()


async def test_a_store_that_refuses_is_tried_until_the_connect_timeout() -> None:
    """As PyMongo's server selection waits: a store that comes back within the timeout gets
    the command; one that stays away fails it with AutoReconnect."""
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    pool = WirePool("127.0.0.1", port, "vance", connect_timeout_s=0.3)
    with pytest.raises(AutoReconnect):
        await pool.command({"find": "x", "filter": {}})
    # The store comes back while the command is trying: it is sent to it.
    patient = WirePool("127.0.0.1", port, "vance", connect_timeout_s=10)
    request = asyncio.create_task(patient.command({"find": "x", "filter": {}}))
    held: Held = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append((reader, writer))

    # Refused meanwhile (a refusal answers at once on loopback), yet still trying.
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(request), 0.3)
    back = await asyncio.start_server(accept, "127.0.0.1", port)
    async with back:
        await _until(lambda: len(held) == 1)
        assert not request.done()  # connected and sent; this server never answers
        request.cancel()
        with pytest.raises(asyncio.CancelledError):
            await request


def test_only_plain_single_host_uris_take_the_wire_path() -> None:
    assert wire_address("mongodb://127.0.0.1:27017/") == ("127.0.0.1", 27017)
    assert wire_address("mongodb://mongo/") == ("mongo", 27017)
    for uri in (
        "mongodb://user:pw@mongo:27017/",
        "mongodb://a:1,b:2/",
        "mongodb://mongo:27017/?tls=true",
        "mongodb://mongo:27017/?replicaSet=rs0",
        "mongodb+srv://cluster.example.com/",
    ):
        assert wire_address(uri) is None, uri
