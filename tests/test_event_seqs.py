"""The session event stream's seqs when two process_service replicas write one session at the
same time (process_service/events/log.py): two EventLogs on the real store, as two replicas would
be. Every event gets its own seq, none is lost, each writer's events keep their order, stream
chunks claim seqs without their text reaching the store, and a fresh reader (a restarted
replica) finds the last seq past the stream document's lower bound."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import pytest
from pymongo.errors import AutoReconnect

from process_service.events.log import CHAT_APPENDED, MARK_EVERY, STREAM_CHUNK, EventLog
from process_service.process_model import SessionEvent as Event
from process_service.store.process_store import ProcessStore
from tests.harness import System
from tests.lifecycle_support import store
from vance.clock import SystemClock
from vance.store_wire import HotCommands, WirePool, wire_address


async def test_two_replicas_writing_one_session_never_share_or_lose_a_seq(system: System) -> None:
    sid = f"sess_seq{uuid.uuid4().hex[:10]}"
    async with store(system) as db:
        replicas = [EventLog(ProcessStore(db), SystemClock(), chunk_window_s=600) for _ in range(2)]

        async def write(name: str, log: EventLog, n: int) -> list[int]:
            seqs = []
            for i in range(n):
                if i % 5 == 4:
                    seqs.append(
                        await log.publish(
                            sid, STREAM_CHUNK, {"text": f"{name}-secret"}, ephemeral=True
                        )
                    )
                else:
                    seqs.append(await log.publish(sid, "progress", {"who": name, "i": i}))
            return seqs

        # Enough events that the stream document's lower bound is raised at least once.
        n = MARK_EVERY
        a, b = await asyncio.gather(write("a", replicas[0], n), write("b", replicas[1], n))
        assert a == sorted(a) and b == sorted(b)  # each writer's events in its order
        assert len(set(a) | set(b)) == 2 * n  # no seq handed out twice
        stored = await db["session_events"].find({"session_id": sid}).to_list(None)
        assert sorted(d["seq"] for d in stored) == sorted(a + b)
        # Chunks claim their seq in the store, but their text stays in memory.
        assert all(d["data"] == {} for d in stored if d["ephemeral"])
        assert "secret" not in repr(stored)
        # Every persisted event of either writer is there once, with its payload.
        persisted = sorted((d["data"]["who"], d["data"]["i"]) for d in stored if not d["ephemeral"])
        assert persisted == sorted((w, i) for w in "ab" for i in range(n) if i % 5 != 4)
        # A replay from the store holds the persisted events only, in seq order.
        replayed = await replicas[0].replay(sid, 0, max(a + b))
        kinds = [e.kind for e in replayed if e.kind != STREAM_CHUNK]
        assert len(kinds) == len(persisted)
        assert [e.seq for e in replayed] == sorted(e.seq for e in replayed)
        # A restarted replica finds the last seq even past the stream document's lower bound.
        bound = await db["session_streams"].find_one({"_id": sid})
        assert bound is not None and max(a + b) - MARK_EVERY < bound["seq"] <= max(a + b)
        fresh = EventLog(ProcessStore(db), SystemClock(), chunk_window_s=600)
        assert await fresh.publish(sid, "progress", {"who": "fresh"}) == max(a + b) + 1


async def test_many_sessions_written_at_once_by_two_replicas_share_inserts_and_lose_nothing(
    system: System,
) -> None:
    """Each replica sends the inserts of its sessions together while one is in flight
    (process_service/store/insert_combiner.py). With two replicas writing the same 20 sessions at
    once, a duplicate seq met in one combined insert stops only its own session's events:
    every event is stored once, each session's seqs are 1..N, each writer's in its order."""
    tag = uuid.uuid4().hex[:8]
    sessions = [f"sess_many{tag}{i:02d}" for i in range(20)]
    async with store(system) as db:
        replicas = [EventLog(ProcessStore(db), SystemClock(), chunk_window_s=600) for _ in range(2)]

        async def write(name: str, log: EventLog, sid: str, n: int) -> list[int]:
            return [await log.publish(sid, "progress", {"who": name, "i": i}) for i in range(n)]

        n = 12
        results = await asyncio.gather(
            *(
                write(name, log, sid, n)
                for sid in sessions
                for name, log in zip("ab", replicas, strict=True)
            )
        )
        for k, sid in enumerate(sessions):
            a, b = results[2 * k], results[2 * k + 1]
            assert a == sorted(a) and b == sorted(b)
            assert sorted(a + b) == list(range(1, 2 * n + 1))
            stored = await db["session_events"].find({"session_id": sid}).to_list(None)
            assert sorted((d["data"]["who"], d["data"]["i"]) for d in stored) == sorted(
                (w, i) for w in "ab" for i in range(n)
            )


class _Inserts:
    """Counts the insert commands sent to the store (a WirePool observer)."""

    def __init__(self) -> None:
        self.by_collection: dict[str, int] = {}

    def observed(self, name: str, collection: str, seconds: float, failed: bool) -> None:
        if name == "insert":
            self.by_collection[collection] = self.by_collection.get(collection, 0) + 1


async def test_events_of_many_sessions_written_in_one_loop_pass_take_one_insert(
    system: System,
) -> None:
    """Sessions whose events are written in the same pass of the event loop (the turns of one
    worker message, process_service/store/insert_combiner.py) share one insert command, the
    first session's included; each still gets its seq and its own events back."""
    tag = uuid.uuid4().hex[:8]
    sessions = [f"sess_pass{tag}{i:02d}" for i in range(20)]
    inserts = _Inserts()
    async with store(system) as db:
        address = wire_address(system.config.mongodb_uri)
        assert address is not None
        pool = WirePool(*address, system.config.store.db_name, observers=[inserts])
        log = EventLog(ProcessStore(db, HotCommands(db, pool)), SystemClock(), chunk_window_s=600)
        try:
            # The stream's last seq is read once per session first (a replica's first write).
            await asyncio.gather(*(log.publish(sid, "progress", {"i": 0}) for sid in sessions))
            before = inserts.by_collection.get("session_events", 0)
            seqs = await asyncio.gather(
                *(log.publish(sid, "progress", {"i": 1}) for sid in sessions)
            )
            assert inserts.by_collection.get("session_events", 0) - before == 1
        finally:
            await pool.close()
        assert seqs == [2] * len(sessions)
        for sid in sessions:
            stored = await db["session_events"].find({"session_id": sid}).to_list(None)
            assert sorted((d["seq"], d["data"]["i"]) for d in stored) == [(1, 0), (2, 1)]


async def test_sessions_writing_in_later_loop_passes_share_an_insert_within_the_window(
    system: System,
) -> None:
    """A busy replica's insert waits out the group commit window after the previous one
    (process_service/store/insert_combiner.py GATHER_S): sessions whose events come in later
    loop passes (turns whose commits came in different worker messages) share its command. Each
    session's follower still sees only stored events, each once, in seq order."""
    tag = uuid.uuid4().hex[:8]
    sessions = [f"sess_win{tag}{i}" for i in range(6)]
    inserts = _Inserts()
    async with store(system) as db:
        address = wire_address(system.config.mongodb_uri)
        assert address is not None
        pool = WirePool(*address, system.config.store.db_name, observers=[inserts])
        events = ProcessStore(db, HotCommands(db, pool), insert_gather_s=0.5)
        log = EventLog(events, SystemClock(), chunk_window_s=600)
        seen: dict[str, list[tuple[int, int]]] = {sid: [] for sid in sessions}
        stored_when_seen: list[bool] = []
        all_seen = asyncio.Event()

        async def follow(sid: str) -> None:
            async for event in log.subscribe(sid, 0):
                doc = await db["session_events"].find_one({"session_id": sid, "seq": event.seq})
                stored_when_seen.append(doc is not None)
                seen[sid].append((event.seq, event.data["i"]))
                if all(len(s) == 3 for s in seen.values()):
                    all_seen.set()

        async def turn(passes: int, sid: str) -> list[int]:
            for _ in range(passes):
                await asyncio.sleep(0)
            return [await log.publish(sid, "progress", {"i": i}) for i in (1, 2)]

        try:
            async with asyncio.TaskGroup() as tasks:
                followers = [tasks.create_task(follow(sid)) for sid in sessions]
                await asyncio.gather(*(log.publish(sid, "progress", {"i": 0}) for sid in sessions))
                before = inserts.by_collection.get("session_events", 0)
                seqs = await asyncio.gather(*(turn(2 * k, sid) for k, sid in enumerate(sessions)))
                written = inserts.by_collection.get("session_events", 0) - before
                await asyncio.wait_for(all_seen.wait(), 10)
                for follower in followers:
                    follower.cancel()
        finally:
            await pool.close()
        # Every session's first event of the round in one command, its second in the next.
        assert written == 2
        assert seqs == [[2, 3]] * len(sessions)
        assert all(seen[sid] == [(1, 0), (2, 1), (3, 2)] for sid in sessions)
        assert all(stored_when_seen)


class _ReplyLost(ProcessStore):
    """The store takes the events of the next insert and dies before it answers: the insert
    is committed, the writer hears AutoReconnect (seen when the store was SIGKILLed mid-turn,
    tests/test_self_healing.py)."""

    lose_next = False

    async def insert_events(self, events: list[Event], *, chunk_text: bool) -> int:
        inserted = await super().insert_events(events, chunk_text=chunk_text)
        if self.lose_next:
            self.lose_next = False
            raise AutoReconnect("connection closed")
        return inserted


@pytest.mark.parametrize("sole_writer", [True, False])
async def test_an_event_the_store_took_though_its_reply_was_lost_still_reaches_followers(
    system: System, sole_writer: bool
) -> None:
    """The writer of an event whose insert failed is told so (the turn is redone and finds its
    chat message and event stored, runtime/turns.py `_announced`, so it announces nothing), but
    the store had taken it: a live follower still gets it, in seq order before what is written
    next, and the chat feed (`on_durable`) sees it once."""
    sid = f"sess_lost{uuid.uuid4().hex[:10]}"
    durable: list[str] = []
    async with store(system) as db:
        events = _ReplyLost(db)
        log = EventLog(
            events,
            SystemClock(),
            chunk_window_s=600,
            sole_writer=sole_writer,
            keep_chunk_text=not sole_writer,
            on_durable=lambda _sid, e: durable.append(e.data["text"]),
        )
        seen: list[tuple[int, str]] = []
        three = asyncio.Event()

        async def follow() -> None:
            async for event in log.subscribe(sid, 0):
                seen.append((event.seq, event.data.get("text", "")))
                if len(seen) >= 3:
                    three.set()

        async with asyncio.TaskGroup() as tasks:
            follower = tasks.create_task(follow())
            await log.publish(sid, CHAT_APPENDED, {"text": "question"})
            events.lose_next = True
            with pytest.raises(AutoReconnect):
                await log.publish(sid, CHAT_APPENDED, {"text": "answer"})
            await log.publish(sid, "progress", {"text": "idle"})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(three.wait(), 10)
            follower.cancel()
        assert [text for _, text in seen] == ["question", "answer", "idle"]
        assert [seq for seq, _ in seen] == sorted(seq for seq, _ in seen)
        assert durable == ["question", "answer", "idle"]
        # A restarted reader replays the same: the answer is in the store once.
        stored = await log.replay(sid, 0, seen[-1][0])
        assert [e.data["text"] for e in stored] == ["question", "answer", "idle"]
