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
from tests.store_gate import StoreGate
from tests.store_reads import FindCounter
from vance.shared_counter import TRUSTED_S, SharedCounter
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


async def test_copies_stay_trusted_while_a_check_of_the_counter_is_late(system: System) -> None:
    """The store slow, not down (800 clients): a read of the counter that takes longer than
    TRUSTED_S keeps the copies trusted, so GetSettings does not add a settings read per call
    to the store that is slow already; once the read answers, a change is seen as before."""
    doc_id = f"tenant:late-{uuid.uuid4().hex[:8]}"
    gate = StoreGate(system.config.mongodb_uri)
    await gate.start()
    reads = FindCounter("settings")
    direct: AsyncMongoClient[Document] = AsyncMongoClient(
        system.config.mongodb_uri, tz_aware=False, event_listeners=[reads]
    )
    slow: AsyncMongoClient[Document] = AsyncMongoClient(gate.uri, tz_aware=False)
    name = system.config.store.db_name
    # The documents read directly, the counter through the gate: only the check is late.
    docs = SettingsDocs(
        direct[name]["settings"], ttl_s=0.2, generation=slow[name]["settings_generation"]
    )
    follower = asyncio.create_task(docs.follow_store())  # cancelled and awaited below
    try:
        async with replica(system) as (writer, _):
            await writer.update(doc_id, _setter("nl"))
            written_at = time.monotonic()
            await eventually(lambda: _followed(docs, since=written_at), what="the count read")
            assert _value((await docs.get_many([doc_id])).get(doc_id)) == "nl"
            before = reads.count
            gate.hold()
            # The last good read is now older than TRUSTED_S: the old rule re-read the store.
            await eventually(
                lambda: time.monotonic() - docs.followed_at > TRUSTED_S + 0.5,
                timeout=TRUSTED_S + 5,
                what="the counter's check running late",
            )
            assert _value((await docs.get_many([doc_id])).get(doc_id)) == "nl"
            assert reads.count == before, "a late check made the copies untrusted"
            # A write through another replica meanwhile is seen once the late read answers.
            await writer.update(doc_id, _setter("pt"))
            gate.release()

            async def sees_pt() -> bool:
                return _value((await docs.get_many([doc_id])).get(doc_id)) == "pt"

            await eventually(sees_pt, timeout=6.0, what="the change after the late read")
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
        await gate.close()
        await slow.close()
        await direct.close()


async def test_a_check_late_beyond_its_bound_ends_the_trust(system: System) -> None:
    """A read of the counter that never answers keeps the copies for at most `late_s` (the
    owner's short bound), so a store that stops answering costs no more staleness than
    following nothing; a failed read ends the trust at once (as before)."""
    gate = StoreGate(system.config.mongodb_uri)
    await gate.start()
    slow: AsyncMongoClient[Document] = AsyncMongoClient(
        gate.uri, tz_aware=False, serverSelectionTimeoutMS=2000
    )
    counter = SharedCounter(
        slow[system.config.store.db_name]["settings_generation"],
        f"late-{uuid.uuid4().hex[:8]}",
        late_s=TRUSTED_S + 3.0,
    )

    async def nothing() -> None:
        return None

    follower = asyncio.create_task(counter.follow(nothing))  # cancelled and awaited below
    try:
        await eventually(lambda: counter.followed_at > float("-inf"), what="a first read")
        read_at = time.monotonic()
        await eventually(lambda: counter.followed_at > read_at, what="a read after the copy")
        gate.hold()
        await eventually(
            lambda: time.monotonic() - counter.followed_at > TRUSTED_S + 0.2,
            timeout=TRUSTED_S + 5,
            what="the check running late",
        )
        # The read in flight began about FOLLOW_EVERY_S after the last good one: well inside
        # late_s of its start, so still trusted.
        assert counter.trusts(read_at, time.monotonic())
        await eventually(
            lambda: not counter.trusts(read_at, time.monotonic()),
            timeout=TRUSTED_S + 8,
            what="the trust ending past late_s",
        )
        gate.release()
        await eventually(
            lambda: counter.trusts(read_at, time.monotonic()),
            timeout=6.0,
            what="the trust back once the read answered",
        )
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
        await gate.close()
        await slow.close()
