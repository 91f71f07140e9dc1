"""Stream chunk seqs with one process_service replica (process_service/events/log.py,
`sole_writer`): the writer claims a block of seqs ahead in the stream document and numbers
chunks from memory, so a streamed answer costs no store command per chunk; a restarted replica
numbers after every seq handed out, so a client that saw chunk N and resumes from N misses no
persisted event. An EventLog on the real store, as process_service builds it; the store is
wrapped only to count the commands the log sends through it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

from process_service.events.log import CHAT_APPENDED, RESERVE, EventLog
from process_service.process_model import SessionEvent
from process_service.store.process_store import ProcessStore
from tests.harness import System
from tests.lifecycle_support import store
from vance.clock import SystemClock


class _CountingStore(ProcessStore):
    """The real ProcessStore, counting the writes an EventLog sends through it."""

    def __init__(self, db: Any) -> None:  # the test's database handle
        super().__init__(db)
        self.inserts = 0
        self.marks = 0

    async def insert_events(self, events: list[SessionEvent], *, chunk_text: bool) -> int:
        self.inserts += 1
        return await super().insert_events(events, chunk_text=chunk_text)

    async def mark_seq(self, session_id: str, seq: int) -> None:
        self.marks += 1
        await super().mark_seq(session_id, seq)


def _log(db: Any) -> tuple[EventLog, _CountingStore]:
    counting = _CountingStore(db)
    return EventLog(counting, SystemClock(), chunk_window_s=600, sole_writer=True), counting


def _chunk(text: str) -> dict[str, Any]:  # JSON: a stream chunk's data (runtime/turns.py)
    return {"think_process_id": "p", "process_name": "chat", "role": "ASSISTANT", "chunk": text}


async def _received(sub: AsyncIterator[list[SessionEvent]], n: int) -> list[SessionEvent]:
    got: list[SessionEvent] = []
    while len(got) < n:
        got.extend(await asyncio.wait_for(anext(sub), 10))
    return got


async def test_a_sole_writers_chunks_cost_no_store_command_each_and_keep_their_order(
    system: System,
) -> None:
    sid = f"sess_chk{uuid.uuid4().hex[:10]}"
    async with store(system) as db:
        log, counting = _log(db)
        sub = log.subscribe_batches(sid, 0)
        first = asyncio.ensure_future(anext(sub))
        await asyncio.sleep(0)
        # Turns as a worker reports them: a status event, chunks flushed one at a time, the
        # answer's chat event. Enough of them to run through more than one claimed block.
        turns, chunks = 12, 30
        for t in range(turns):
            await log.publish(sid, "progress", {"turn": t})
            for i in range(chunks):
                log.chunk(sid, _chunk(f"t{t}c{i} "))
                await log.flush(sid)
            await log.publish(sid, CHAT_APPENDED, {"turn": t})
        total = turns * (chunks + 2)
        got = list(await first) + await _received(sub, total - len(await first))
        await sub.aclose()
        seqs = [e.seq for e in got]
        # Every event once, in the order it was pushed, with seqs rising.
        assert seqs == sorted(set(seqs)) and len(seqs) == total
        assert [e.data.get("chunk") for e in got if e.ephemeral] == [
            f"t{t}c{i} " for t in range(turns) for i in range(chunks)
        ]
        # The chunks reached no store document; their seqs were claimed a block at a time.
        stored = await db["session_events"].find({"session_id": sid}).to_list(None)
        assert not [d for d in stored if d["ephemeral"]]
        assert len(stored) == 2 * turns
        assert counting.inserts == 2 * turns  # one per persisted event here, none per chunk
        assert counting.marks <= total // RESERVE + 1
        bound = await db["session_streams"].find_one({"_id": sid})
        assert bound is not None and bound["seq"] >= max(seqs)


async def test_a_chunk_goes_out_at_once_unless_an_event_is_queued_before_it(
    system: System,
) -> None:
    sid = f"sess_cho{uuid.uuid4().hex[:10]}"
    async with store(system) as db:
        log, counting = _log(db)
        log.chunk(sid, _chunk("a "))  # the session's first chunk claims a block
        await log.flush(sid)
        sub = log.subscribe_batches(sid, 0)
        assert [e.data["chunk"] for e in await _received(sub, 1)] == ["a "]
        writes = (counting.inserts, counting.marks)
        # With nothing queued, a chunk reaches the subscriber with no flush and no write.
        assert log.chunk(sid, _chunk("b "), only_now=True)
        assert [e.data["chunk"] for e in await _received(sub, 1)] == ["b "]
        assert (counting.inserts, counting.marks) == writes
        # Behind a queued event it waits for the event's write, and its seq follows it; one
        # that may only go at once (a worker stream's fast path) is left to its caller.
        queued = log.submit(sid, "progress", {"step": 1})
        assert not log.chunk(sid, _chunk("never "), only_now=True)
        assert not log.chunk(sid, _chunk("c "))
        await log.flush(sid)
        got = await _received(sub, 2)
        await sub.aclose()
        assert [(e.kind, e.seq) for e in got] == [
            ("progress", await queued),
            ("stream_chunk", got[0].seq + 1),
        ]


async def test_a_client_resuming_from_a_chunk_after_a_restart_misses_nothing(
    system: System,
) -> None:
    sid = f"sess_chr{uuid.uuid4().hex[:10]}"
    async with store(system) as db:
        before, _ = _log(db)
        asked = await before.publish(sid, CHAT_APPENDED, {"chat_message_id": "m1"})
        for i in range(5):
            before.chunk(sid, _chunk(f"c{i} "))
        await before.flush(sid)
        seen = [e.seq for e in await before.replay(sid, asked, asked + 5)]
        assert seen == list(range(asked + 1, asked + 6))  # held in memory, within the window
        last_chunk = seen[-1]

        # process_service restarts: the chunks are gone with its memory, the claim is not.
        # A redone turn first asks whether its message's event went out (runtime/turns.py):
        # the search goes on below a window that holds only chunks and unused claimed seqs.
        assert await ProcessStore(db).has_event_since(
            sid, 0, lambda e: e.data.get("chat_message_id") == "m1"
        )
        after, _ = _log(db)
        sub = after.subscribe_batches(sid, last_chunk)
        pending = asyncio.ensure_future(anext(sub))
        await asyncio.sleep(0)
        answer = await after.publish(sid, CHAT_APPENDED, {"chat_message_id": "m2"})
        assert answer > last_chunk
        got = await asyncio.wait_for(pending, 10)
        await sub.aclose()
        assert [(e.seq, e.data["chat_message_id"]) for e in got] == [(answer, "m2")]
        # From the start, a client gets both messages; the unused claimed seqs are a gap.
        replayed = await after.read_stored(sid, 0, 0)
        assert [e.data["chat_message_id"] for e in replayed] == ["m1", "m2"]


async def test_a_chunk_riding_with_a_stored_event_claims_nothing_ahead(system: System) -> None:
    """An answer that arrives whole rides with its commit: its one chunk is followed in the
    same write by the answer's chat event, whose insert claims the seqs below it, so no block
    is claimed ahead; a restarted replica still numbers after the chunk."""
    sid = f"sess_chw{uuid.uuid4().hex[:10]}"
    async with store(system) as db:
        log, counting = _log(db)
        await log.publish(sid, "progress", {"status": "RUNNING"})
        log.chunk(sid, _chunk("the whole answer"))
        answer = log.submit(sid, CHAT_APPENDED, {"chat_message_id": "m1"})
        await log.flush(sid)
        assert counting.marks == 0
        chunk_seq = (await log.replay(sid, 0, await answer))[-2].seq
        assert chunk_seq == await answer - 1
        restarted, _ = _log(db)
        assert await restarted.publish(sid, "progress", {"status": "IDLE"}) == await answer + 1


async def test_a_replay_after_a_turn_ended_has_its_answer_and_no_chunks_of_it(
    system: System,
) -> None:
    """A client that resumes after a turn ended gets the turn's persisted answer, not its
    chunks (the commit drops them from memory, `EventLog.end_chunks`); the chunks of another
    process whose turn still runs are still replayed."""
    sid = f"sess_che{uuid.uuid4().hex[:10]}"
    async with store(system) as db:
        log, _ = _log(db)
        start = await log.publish(sid, "progress", {"status": "RUNNING"})
        log.chunk(sid, _chunk("Hello "))
        other = {**_chunk("still typing"), "think_process_id": "q"}
        log.chunk(sid, other)
        log.chunk(sid, _chunk("world"))
        answer = log.submit(sid, CHAT_APPENDED, {"chat_message_id": "m1", "think_process_id": "p"})
        await log.flush(sid)
        before = await log.replay(sid, start, await answer)
        assert [e.data.get("chunk") for e in before] == ["Hello ", "still typing", "world", None]
        log.end_chunks(sid, "p")
        after = await log.replay(sid, start, await answer)
        assert [e.data.get("chunk") for e in after] == ["still typing", None]
        assert after[-1].data["chat_message_id"] == "m1"


async def test_an_announced_event_goes_out_at_once_and_is_stored_with_the_next_write(
    system: System,
) -> None:
    """A turn's RUNNING event (`EventLog.announce`, runtime/lanes.py `running_event`): with a
    claimed seq at hand it reaches subscribers with no store command, a replay meanwhile has
    it from memory, and the session's next write stores it first, in seq order, once."""
    sid = f"sess_cha{uuid.uuid4().hex[:10]}"
    async with store(system) as db:
        log, counting = _log(db)
        running = {"to_status": "RUNNING"}
        # No seq claimed yet: the caller writes it, and that write claims a block ahead.
        assert log.announce(sid, "progress", running) is None
        await log.publish(sid, "progress", running)
        assert counting.marks == 1
        sub = log.subscribe_batches(sid, 0)
        assert len(await _received(sub, 1)) == 1
        writes = (counting.inserts, counting.marks)
        seq = log.announce(sid, "progress", running)
        assert seq is not None
        assert [(e.seq, e.ephemeral) for e in await _received(sub, 1)] == [(seq, False)]
        assert (counting.inserts, counting.marks) == writes
        assert [e.seq for e in await log.replay(sid, seq - 1, seq)] == [seq]
        assert await db["session_events"].find_one({"seq": seq, "session_id": sid}) is None
        # The turn's next event: one insert stores both, and the replay reads them once each.
        answer = await log.publish(sid, CHAT_APPENDED, {"chat_message_id": "m1"})
        assert answer == seq + 1 and counting.inserts == writes[0] + 1
        await sub.aclose()
        stored = await db["session_events"].find({"session_id": sid}).to_list(None)
        assert sorted(d["seq"] for d in stored) == [seq - 1, seq, answer]
        assert [e.seq for e in await log.replay(sid, 0, answer)] == [seq - 1, seq, answer]


async def test_an_announced_event_lost_in_a_restart_leaves_its_seq_unused(
    system: System,
) -> None:
    """process_service dies after handing out an announced event and before the write that
    would store it: the event is gone (what it reported is in the process document), its seq
    is not. A restarted writer numbers after it, so a client that saw it and resumes from its
    seq gets every later event, and one that resumes from before never sees that seq reused."""
    sid = f"sess_chl{uuid.uuid4().hex[:10]}"
    async with store(system) as db:
        before, _ = _log(db)
        assert before.announce(sid, "progress", {"to_status": "RUNNING"}) is None
        await before.publish(sid, "progress", {"to_status": "RUNNING"})  # claims seqs ahead
        await before.publish(sid, "progress", {"to_status": "IDLE"})
        seen = before.announce(sid, "progress", {"to_status": "RUNNING"})
        assert seen is not None
        # Restarted: the announced event was never written.
        after, _ = _log(db)
        redo = await after.publish(sid, "progress", {"to_status": "RUNNING", "redo": True})
        assert redo > seen
        replayed = await after.read_stored(sid, 0, 0)
        assert seen not in [e.seq for e in replayed]
        assert [e.data.get("redo") for e in replayed] == [None, None, True]
        assert [e.seq for e in await after.read_stored(sid, seen, 0)] == [redo]


async def test_an_announced_event_whose_write_went_in_unanswered_is_stored_once(
    system: System,
) -> None:
    """The insert that carried an announced event reached the store, but its reply was lost
    (the write failed as far as the writer knows): the next write meets the event's id, takes
    it as stored and stores the rest; the stream has every event once, in order."""
    sid = f"sess_chd{uuid.uuid4().hex[:10]}"
    async with store(system) as db:
        log, counting = _log(db)
        assert log.announce(sid, "progress", {"to_status": "RUNNING"}) is None
        await log.publish(sid, "progress", {"to_status": "RUNNING"})
        seq = log.announce(sid, "progress", {"to_status": "RUNNING", "n": 2})
        assert seq is not None
        # What the lost insert wrote: the announced event under its id.
        announced = (await log.replay(sid, seq - 1, seq))[0]
        assert await ProcessStore(db).insert_events([announced], chunk_text=False) == 1
        answer = await log.publish(sid, CHAT_APPENDED, {"chat_message_id": "m1"})
        assert answer == seq + 1
        replayed = await log.read_stored(sid, 0, 0)
        assert [e.seq for e in replayed] == [seq - 1, seq, answer]
        assert [e.data.get("n") for e in replayed][1] == 2
        assert counting.inserts == 3  # the first, the one that met the id, the retry
