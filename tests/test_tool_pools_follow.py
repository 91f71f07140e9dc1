"""Tool pools kept until they change (issue 28, "no cost per second in flight"): a tool_service
replica keeps the registry it read for as long as nothing is registered, and a registration
through another replica reaches it, and its watchers (the workers holding pools), within about
a second (the shared counter `ToolRegistry.follow_store` reads), not after a time-to-live. Two
`ToolRegistry` on the real store stand for two replicas."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from pymongo import AsyncMongoClient

from tests.harness import System, eventually
from tests.store_reads import FindCounter
from tool_service import registry as registry_module
from tool_service.registry import ToolRegistry
from vance.auth import ServiceCredential
from vance.store import Document


@asynccontextmanager
async def replica(system: System) -> AsyncIterator[tuple[ToolRegistry, FindCounter]]:
    reads = FindCounter("tools")
    mongo: AsyncMongoClient[Document] = AsyncMongoClient(
        system.config.mongodb_uri, tz_aware=False, event_listeners=[reads]
    )
    registry = ToolRegistry(
        mongo[system.config.store.db_name],
        ServiceCredential.from_config(system.config, "tool_service"),
    )
    follower = asyncio.create_task(registry.follow_store())  # cancelled and awaited below
    try:
        yield registry, reads
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
        await registry.close()
        await mongo.close()


def _spec(name: str) -> dict[str, object]:
    return {"name": name, "description": "", "parameters": {}, "labels": [], "timeout_ms": 0}


async def _names(registry: ToolRegistry) -> set[str]:
    return {str(d["_id"]) for d in await registry.list()}


async def test_a_registration_through_another_replica_reaches_it_and_its_watchers(
    system: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Far longer than the wait below: only the shared counter can make b read again.
    monkeypatch.setattr(registry_module, "CACHE_S", 60.0)
    tool = f"zz_follow_{uuid.uuid4().hex[:8]}"
    async with replica(system) as (a, _), replica(system) as (b, _):
        await eventually(lambda: _following(b), what="b reading the shared counter")
        assert tool not in await _names(b)  # b keeps this copy
        watched = b.changes()
        first = await anext(watched)
        await a.register("test", "127.0.0.1:9", [_spec(tool)])
        # b's watchers (the workers' WatchRegistry streams) hear of it...
        assert await asyncio.wait_for(anext(watched), timeout=6.0) > first
        # ...and b reads the registry again.
        assert tool in await _names(b)


async def test_the_registry_is_kept_past_its_short_bound_while_nothing_is_registered(
    system: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry_module, "CACHE_S", 0.2)
    async with replica(system) as (b, reads):
        await eventually(lambda: _following(b), what="b reading the shared counter")
        await _names(b)
        read_at, before = time.monotonic(), reads.count
        # Several counter reads later and well past the 0.2 s bound, b answers from its copy,
        # however many pools ask at once: no registry read per second a chat runs.
        await eventually(lambda: _following(b, since=read_at + 1.0), what="b following on")
        await asyncio.gather(*(_names(b) for _ in range(20)))
        assert reads.count == before


async def _following(registry: ToolRegistry, since: float = 0.0) -> bool:
    return registry.followed_at > since
