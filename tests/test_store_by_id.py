"""Lookups by `_id` only on the paths that grow with the sessions (issue 28, 800 clients): the
embedded store (FerretDB's SQLite backend) indexes nothing but `_id`, so a filter on any other
field reads the whole collection, and its cost grows with every session ever opened. At 800
sessions process_service's owner lookup (`tenant_of_session`, once per session) read every
process document; it now goes through the session's process index."""

from __future__ import annotations

import uuid
from typing import Any

from pymongo import AsyncMongoClient, monitoring

from process_service.process_model import Process
from process_service.store.process_store import ProcessStore
from tests.harness import System


class FindFilters(monitoring.CommandListener):
    """The filters of the `find` commands a client sends to one collection."""

    def __init__(self, collection: str) -> None:
        self.collection = collection
        self.filters: list[dict[str, Any]] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if event.command_name == "find" and event.command.get("find") == self.collection:
            self.filters.append(dict(event.command.get("filter") or {}))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


async def test_the_tenant_of_a_session_is_read_by_id_among_many_sessions(system: System) -> None:
    finds = FindFilters("processes")
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
        system.config.mongodb_uri, event_listeners=[finds]
    )
    try:
        store = ProcessStore(client[system.config.store.db_name])
        run = uuid.uuid4().hex[:8]
        sessions = {f"sess_{run}_{i}": f"tenant-{run}-{i % 3}" for i in range(30)}
        for sid, tenant in sessions.items():
            for n in range(2):
                pid = f"proc_{sid}_{n}"
                await store.insert_process(
                    Process(id=pid, session_id=sid, name=f"p{n}", engine="arthur", tenant_id=tenant)
                )
                await store.index_in_session(sid, pid)
        finds.filters.clear()
        for sid, tenant in sessions.items():
            assert await store.tenant_of_session(sid) == tenant
        assert await store.tenant_of_session(f"sess_{run}_none") is None
        assert finds.filters, "the tenant was read from the processes"
        assert all("_id" in f for f in finds.filters), finds.filters
    finally:
        await client.close()
