"""The embedded store's file descriptors stay bounded (docs/operations.md "The embedded
store", descriptors): a burst of concurrent commands opens SQLite connections, the idle ones
beyond the limit are closed (tools/ferretdb/sqlite-idle-connections.patch), and SQLite keeps
the database-file descriptor of each closed one while the remaining connections hold the
file's shared lock: closing it would drop that POSIX lock for all of them. The next burst's
connections reuse those descriptors, so they never grow past the most connections that were
open at once; dropping the database lets go of every one."""

from __future__ import annotations

import collections
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pymongo import AsyncMongoClient

from tests.harness import eventually
from vance.embedded_store import MAX_IDLE_CONNS, start_ferretdb
from vance.testing.ports import free_port_block

BURST = 40  # cursors at once, each holding a connection (well below the pool's 100)


def sqlite_fds(pid: int, db: str) -> dict[str, int]:
    """Open descriptors of the store process by file of database `db` (.sqlite, -wal, -shm)."""
    out: collections.Counter[str] = collections.Counter()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        name = Path(target.removesuffix(" (deleted)")).name
        if name.startswith(f"{db}.sqlite"):
            out[name.removeprefix(db)] += 1
    return dict(out)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[tuple[int, AsyncMongoClient[dict[str, Any]]]]:
    port = free_port_block(1)
    proc = start_ferretdb(tmp_path, port)
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
        f"mongodb://127.0.0.1:{port}/", maxPoolSize=BURST + 10
    )
    try:
        yield proc.pid, client
    finally:
        await client.close()
        proc.terminate()
        proc.wait(timeout=30)


async def burst(client: AsyncMongoClient[dict[str, Any]], db: str, pid: int) -> dict[str, int]:
    """Holds BURST connections at once (open cursors), notes the descriptors, lets them go."""
    things = client[db]["things"]
    cursors = []
    for _ in range(BURST):
        cursor = things.find({}, batch_size=2)
        await cursor.next()
        cursors.append(cursor)
    during = sqlite_fds(pid, db)
    for cursor in cursors:
        await cursor.close()
    return during


async def test_descriptors_of_closed_connections_are_reused_not_piled_up(
    store: tuple[int, AsyncMongoClient[dict[str, Any]]],
) -> None:
    pid, client = store
    db = "fds"
    await client[db]["things"].insert_many([{"_id": i, "x": "y" * 100} for i in range(500)])

    during = await burst(client, db, pid)
    assert during[".sqlite-wal"] >= BURST, during  # one connection per open cursor

    def idle_closed() -> dict[str, int] | None:
        now = sqlite_fds(pid, db)
        return now if now.get(".sqlite-wal", 0) <= MAX_IDLE_CONNS else None

    # The connections beyond the idle limit close (their page caches go with them); the
    # database file's descriptors stay, held by SQLite for the open connections' lock.
    after = await eventually(idle_closed, what="the idle connections to be closed")
    kept = after[".sqlite"]
    assert kept <= during[".sqlite"], (during, after)

    for _ in range(2):
        await burst(client, db, pid)
        again = await eventually(idle_closed, what="the idle connections to be closed")
        assert again[".sqlite"] <= kept, (kept, again)  # reused, not one more per connection

    await client.drop_database(db)
    await client["other"]["x"].insert_one({"a": 1})  # the store goes on
    assert sqlite_fds(pid, db) == {}
