"""Settings kept until they change (issue 28, "no cost per second in flight"): a session_service
replica keeps the `settings` documents it read for as long as nothing is written, and a write
through another replica reaches it within about a second (the shared write counter that
`SettingsDocs.follow_store` reads), not after a time-to-live. Two `SettingsDocs` on the real
store stand for two replicas."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from pymongo import AsyncMongoClient

from session_service.settings.settings_docs import SettingsDocs
from tests.harness import System, eventually
from tests.store_reads import FindCounter
from vance.store import Document


@asynccontextmanager
async def replica(
    system: System, **kwargs: float
) -> AsyncIterator[tuple[SettingsDocs, FindCounter]]:
    """One replica's settings documents, following the shared write counter."""
    reads = FindCounter("settings")
    mongo: AsyncMongoClient[Document] = AsyncMongoClient(
        system.config.mongodb_uri, tz_aware=False, event_listeners=[reads]
    )
    db = mongo[system.config.store.db_name]
    docs = SettingsDocs(db["settings"], generation=db["settings_generation"], **kwargs)
    follower = asyncio.create_task(docs.follow_store())  # cancelled and awaited below
    try:
        yield docs, reads
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
        await mongo.close()


def _value(values: dict[str, str] | None) -> str:
    return next(iter((values or {}).values()), "")


def _setter(value: str) -> Callable[[dict[str, str]], dict[str, str]]:
    return lambda stored: {**stored, "chat.language": value}


async def test_a_write_through_another_replica_is_seen_within_seconds(system: System) -> None:
    doc_id = f"tenant:follow-{uuid.uuid4().hex[:8]}"
    async with replica(system) as (a, _), replica(system) as (b, _):
        await a.update(doc_id, _setter("de"))
        assert _value((await b.get_many([doc_id])).get(doc_id)) == "de"  # b keeps this copy
        await a.update(doc_id, _setter("fr"))

        async def b_sees_fr() -> bool:
            return _value((await b.get_many([doc_id])).get(doc_id)) == "fr"

        # Well inside the 10 s that b would otherwise keep its copy (CACHE_S).
        await eventually(b_sees_fr, timeout=6.0, what="replica b reading the new value")


async def test_copies_are_kept_past_their_short_bound_while_nothing_is_written(
    system: System,
) -> None:
    doc_id = f"tenant:follow-{uuid.uuid4().hex[:8]}"
    async with replica(system) as (a, _), replica(system, ttl_s=0.2) as (b, reads):
        await a.update(doc_id, _setter("it"))
        written_at = time.monotonic()
        # Once b has counted that write, what it reads is kept.
        await eventually(lambda: _followed(b, since=written_at), what="b counting the write")
        assert _value((await b.get_many([doc_id])).get(doc_id)) == "it"
        read_at, before = time.monotonic(), reads.count
        # Several counter reads later and well past its 0.2 s bound, b still answers from its
        # copy: no settings read per second per session.
        await eventually(
            lambda: _followed(b, since=read_at + 1.0), what="b following for a second more"
        )
        assert _value((await b.get_many([doc_id])).get(doc_id)) == "it"
        assert reads.count == before
        # And a change still reaches it.
        await a.update(doc_id, _setter("es"))

        async def b_sees_es() -> bool:
            return _value((await b.get_many([doc_id])).get(doc_id)) == "es"

        await eventually(b_sees_es, timeout=6.0, what="replica b reading the change")


async def _followed(docs: SettingsDocs, since: float = 0.0) -> bool:
    return docs.followed_at > since
