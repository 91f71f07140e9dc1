"""The per-session event stream: a monotonic seq per session, group-committed writes, replay
from the store (persisted events) and from memory (stream chunks, within a window).

Seqs are taken optimistically: a replica remembers the last seq of each session it writes and
inserts the next events under `<session>:<seq>` ids. The store's unique `_id` is the arbiter: an
insert that meets an id another replica took fails as a duplicate, and the writer re-reads the
last seq and numbers the rest again. So a batch is one insert, with no separate counter update.
The stream document (`session_streams`) keeps a lower bound of the last seq, raised every
MARK_EVERY seqs, from which `ProcessStore.last_seq` probes forward.

Stream chunks are not stored (their text stays in memory, replayed within the window), but
their seqs must never be handed out again, after a restart either: a client that saw chunk N
resumes from N and must still get every persisted event after it. How they are claimed
depends on who writes the stream:

- several replicas (`sole_writer=False`): each batch of chunks inserts placeholders (with their
  text under `keep_chunk_text`, so another replica can replay them), so the `_id` arbiter sees
  them and seqs stay contiguous in the store, which the gateway's merge of the replicas'
  streams relies on (gateway/session_events.py);
- one replica (`sole_writer`): the writer claims a block of seqs ahead (RESERVE) when it raises
  the stream document's bound, to the last seq plus RESERVE, and numbers chunks from memory
  while the block lasts: no store command per chunk. A chunk with a claimed seq at hand and
  nothing queued or in flight for its session is handed to subscribers at once, without the
  group commit (`chunk`). A restarted replica reads the last seq as the bound at the least, so
  it numbers after every seq handed out; the unused rest of a block is a gap, which
  docs/protocol.md allows ("Resume and replay": increasing, not contiguous).

A sole writer also hands out a turn's RUNNING status event before it is stored (`announce`):
numbered from the claimed seqs like a chunk, it goes to subscribers at once and is stored with
the session's next write (the turn's first chat message, or its commit), which saves an insert
per turn. What it reports is durable already (the lane's compare-and-set set RUNNING); a crash
before its write loses the event, not the state, and never its seq (the claim): a client that
saw it resumes after it, one that did not sees the turn's redo start (RUNNING -> RUNNING) or its
end. Until it is stored, a replay of this replica takes it from memory."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from process_service.process_model import ChatRecord
from process_service.process_model import SessionEvent as Event
from process_service.store.process_store import ProcessStore
from vance.clock import Clock

logger = logging.getLogger(__name__)

CHAT_APPENDED = "chat_message_appended"
STREAM_CHUNK = "stream_chunk"
STATUS_CHANGED = "process_status_changed"
PROGRESS = "process_progress"
NOTICE = "notice"  # a hub push such as inbox-item-added or switch-to


def chat_event_data(record: ChatRecord) -> dict[str, Any]:  # JSON: an event's data
    """A stored chat message's event data (JSON: it is stored and replayed as it is)."""
    return {
        "chat_message_id": record.id,
        "think_process_id": record.think_process_id,
        "process_name": record.process_name,
        "role": record.role.value,
        "content": record.content,
        "created_at_ms": record.created_at_ms,
        "meta": record.meta,
    }


_QUEUE_LIMIT = 10_000
# Events per batch of `subscribe_batches`: a replay of a long stream goes out in pieces well
# under gRPC's message size limit.
_BATCH = 200
_RING_LIMIT = 4_096
MARK_EVERY = 128
# Seqs a sole writer claims past the last one each time it raises the stream document's bound.
RESERVE = MARK_EVERY
# Each lost attempt means another writer's insert went in, so the stream makes progress; a
# writer can lose many in a row on a busy machine (8 was seen to run out at load 12 on 2 cores).
_RENUMBER_ATTEMPTS = 64


class SubscriberOverflow(Exception):
    """A subscriber fell too far behind; it should resubscribe from its last seq."""


# A queued event and who waits for its seq (none for a chunk: `chunk` returns nothing).
_Queued = tuple[Event, asyncio.Future[int] | None]


@dataclass
class _Writer:
    pending: list[_Queued] = field(default_factory=list)
    busy: bool = False
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    chunks: deque[Event] = field(default_factory=lambda: deque(maxlen=_RING_LIMIT))
    last_used_ms: int = 0
    last_seq: int | None = None  # None: read it from the store before the next write
    # A sole writer's seqs up to here are claimed in the stream document: chunks are numbered
    # from memory up to it. 0: none claimed since the last seq was read.
    reserved: int = 0
    # Durable events of failed writes: the store may have taken them though its reply was lost
    # (it died after the commit). The next read of the last seq looks for them (`_settle`).
    unsure: list[Event] = field(default_factory=list)
    # Persisted events handed out before their write (`announce`), in seq order: the next
    # insert of the session stores them first.
    unstored: list[Event] = field(default_factory=list)
    # An event could not be announced for want of a claimed seq: the next write claims a block.
    claim_ahead: bool = False

    def __post_init__(self) -> None:
        self.idle.set()


class Sink(Protocol):
    """Who takes a session's live events (`EventLog.attach`): called in seq order, at once,
    from the writer; it must not block, and bounds what it keeps itself."""

    def push(self, event: Event) -> None: ...


@dataclass(eq=False)
class _Subscriber:
    queue: asyncio.Queue[Event] = field(default_factory=lambda: asyncio.Queue(_QUEUE_LIMIT))
    overflowed: bool = False

    def push(self, event: Event) -> None:
        if self.overflowed:
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.overflowed = True
            logger.warning("event subscriber of %s fell behind; dropping it", event.session_id)


class EventLog:
    def __init__(
        self,
        store: ProcessStore,
        clock: Clock,
        *,
        chunk_window_s: int,
        poll_ms: int = 0,
        on_durable: Callable[[str, Event], None] | None = None,
        keep_chunk_text: bool = False,
        sole_writer: bool = False,
    ) -> None:
        """`on_durable` sees every stored (not ephemeral) event once written: the chat feed
        (event_feed.py) takes the chat messages from it. `keep_chunk_text` (several replicas)
        stores the text of stream chunks in their placeholders, so any replica can replay
        them within the window (a gateway filling a gap, gateway/session_events.py).
        `sole_writer` (one replica): no other EventLog writes these sessions' streams, so
        chunk seqs are claimed a block at a time and chunks leave nothing in the store (the
        module's doc); it excludes `keep_chunk_text`."""
        if sole_writer and keep_chunk_text:
            raise ValueError("a sole writer stores no chunks: keep_chunk_text needs replicas")
        self._sole_writer = sole_writer
        self._keep_chunk_text = keep_chunk_text
        self._store = store
        self._on_durable = on_durable
        self._clock = clock
        self._window_ms = chunk_window_s * 1000
        self._poll_s = poll_ms / 1000 if poll_ms > 0 else None
        self._writers: dict[str, _Writer] = {}
        self._subscribers: dict[str, set[Sink]] = {}

    def _writer(self, session_id: str) -> _Writer:
        w = self._writers.get(session_id)
        if w is None:
            w = self._writers[session_id] = _Writer()
        w.last_used_ms = self._clock.now_ms()
        return w

    async def publish(
        self,
        session_id: str,
        kind: str,
        data: dict[str, Any],  # JSON: the event's payload (SessionEvent.data)
        *,
        ephemeral: bool = False,
    ) -> int:
        """Appends one event and returns its seq once it is durable (or, for ephemeral stream
        chunks, once it has a seq)."""
        fut = self.submit(session_id, kind, data, ephemeral=ephemeral)
        await self.flush(session_id)
        return await fut

    def submit(  # `data`: as `publish`
        self, session_id: str, kind: str, data: dict[str, Any], *, ephemeral: bool = False
    ) -> asyncio.Future[int]:
        """Queues an event in seq order without writing it; `flush` writes it. A caller with
        more events at hand submits them all and flushes once: one write for all."""
        event = Event(session_id, kind, data, self._clock.now_ms(), ephemeral)
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._writer(session_id).pending.append((event, fut))
        return fut

    def chunk(
        self, session_id: str, data: dict[str, Any], *, only_now: bool = False
    ) -> bool:  # `data`: as `publish`
        """Appends a stream chunk. A sole writer with a claimed seq at hand and nothing queued
        or in flight for the session numbers it and hands it to subscribers at once: no store
        command, no wait, and its seq is after every event handed out before it and before
        any queued after it (True). Otherwise it is queued in order like any event (`flush`),
        or, `only_now`, left to the caller (False either way)."""
        w = self._writer(session_id)
        last = w.last_seq
        if not w.busy and not w.pending and last is not None and last < w.reserved:
            event = Event(session_id, STREAM_CHUNK, data, w.last_used_ms, True)
            event.seq = w.last_seq = last + 1
            w.chunks.append(event)
            self._notify(session_id, event)
            return True
        if not only_now:
            w.pending.append((Event(session_id, STREAM_CHUNK, data, w.last_used_ms, True), None))
        return False

    def announce(
        self,
        session_id: str,
        kind: str,
        data: dict[str, Any],  # `data`: as `publish`
    ) -> int | None:
        """A sole writer with a claimed seq at hand and nothing queued or in flight for the
        session numbers a persisted event as `chunk` does, hands it to subscribers at once and
        stores it with the session's next write (the module's doc: only for an event whose
        state is durable already, which a crash may drop but never contradict). Returns its
        seq, or None when it cannot: the caller submits and flushes it as usual."""
        if not self._sole_writer:
            return None
        w = self._writer(session_id)
        last = w.last_seq
        if w.busy or w.pending or last is None or last >= w.reserved:
            # The write the caller makes instead claims seqs ahead, for the next one.
            w.claim_ahead = True
            return None
        event = Event(session_id, kind, data, w.last_used_ms, False)
        event.seq = w.last_seq = last + 1
        w.unstored.append(event)
        self._notify(session_id, event)
        return event.seq

    async def flush(self, session_id: str) -> None:
        """Writes what is queued for the session. Concurrent flushers share a write: the first
        one writes every event queued meanwhile (group commit), the others wait for it."""
        w = self._writer(session_id)
        if not w.busy and not w.pending:
            return  # nothing queued (a chunk handed out at once by `chunk`)
        if w.busy:
            await w.idle.wait()
            if not w.pending:
                return
        if w.busy:
            # Someone else took the writer first after the wait: their loop writes ours too.
            await w.idle.wait()
            return
        w.busy = True
        w.idle.clear()
        try:
            while w.pending:
                batch, w.pending = w.pending, []
                await self._write(session_id, w, batch)
        finally:
            w.busy = False
            w.idle.set()

    async def _write(self, session_id: str, w: _Writer, batch: list[_Queued]) -> None:
        try:
            await self._insert_numbered(session_id, w, [event for event, _ in batch])
        except BaseException as exc:
            w.last_seq = None
            w.reserved = 0
            w.unsure.extend(e for e, _ in batch if not e.ephemeral and e.seq > 0)
            for _, fut in batch:
                if fut is not None and not fut.done():
                    fut.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
            if not isinstance(exc, Exception):
                raise
            return
        for event, fut in batch:
            if fut is not None and not fut.done():
                fut.set_result(event.seq)
            if self._on_durable is not None and not event.ephemeral:
                self._on_durable(session_id, event)
            self._notify(session_id, event)

    async def _insert_numbered(self, session_id: str, w: _Writer, events: list[Event]) -> None:
        """Numbers the events after the last seq and inserts them in order; on a duplicate id
        (another replica wrote meanwhile) keeps what went in and numbers the rest again. A
        sole writer claims seqs ahead for its chunks first and inserts only the rest."""
        todo = events
        for _ in range(_RENUMBER_ATTEMPTS):
            if w.last_seq is None:
                last_seq = await self._store.last_seq(session_id)
                if w.unsure:
                    await self._settle(session_id, w, last_seq)
                w.last_seq, w.reserved = last_seq, 0
            first = w.last_seq + 1
            for offset, event in enumerate(todo):
                event.seq = first + offset
            last = todo[-1].seq
            stored = todo
            early: list[Event] = []
            if self._sole_writer:
                stored = [e for e in todo if not e.ephemeral]
                # A chunk before a stored event of the batch has its seq claimed by that
                # event's insert (a restart numbers after it); chunks at the batch's end need
                # seqs claimed ahead (a turn's answer sent whole rides with its commit: none),
                # and so do events handed out before their write (`announce`).
                ahead = todo[-1].ephemeral or w.claim_ahead
                if last > w.reserved and (_crossed_mark(first, last) or ahead):
                    # The bound goes a block ahead: chunks and announced events are numbered
                    # from memory until the seqs reach it. Durable before any is handed out.
                    await self._store.mark_seq(session_id, last + RESERVE)
                    w.reserved = last + RESERVE
                    w.claim_ahead = False
                # Events announced before this write go first: their seqs are lower.
                early = list(w.unstored)
                stored = early + stored
            inserted = (
                await self._store.insert_events(stored, chunk_text=self._keep_chunk_text)
                if stored
                else 0
            )
            if early:
                self._stored_early(session_id, w, early, inserted)
                if inserted < len(early):
                    # One of them was in the store already (an earlier write whose reply was
                    # lost stored it): nothing of this batch was tried yet.
                    continue
                stored, inserted = stored[len(early) :], inserted - len(early)
            cut = len(todo) if inserted == len(stored) else _position(todo, stored[inserted])
            done, todo = todo[:cut], todo[cut:]
            for event in done:
                if event.ephemeral:
                    w.chunks.append(event)
            if done:
                w.last_seq = done[-1].seq
                if w.last_seq > w.reserved and _crossed_mark(first, w.last_seq):
                    await self._store.mark_seq(session_id, w.last_seq)
            if not todo:
                return
            if self._sole_writer:
                # Claims ahead are safe only when no one else writes (EventLog's docstring).
                logger.error(
                    "another writer took seq %d of session %s's events, but this process_service"
                    " is configured as the only replica: set replicas.process_service",
                    todo[0].seq,
                    session_id,
                )
            w.last_seq = None  # another replica took the next id: re-read the last seq
        raise RuntimeError(f"event seqs of {session_id} kept being taken by other writers")

    async def _settle(self, session_id: str, w: _Writer, last_seq: int) -> None:
        """Announces the events of failed writes that the store took after all, before any
        later event: their writers were told the write failed, so no one else will. A turn
        whose end failed so is redone and finds its chat message stored and its event in the
        stream (runtime/turns.py `_announced`): without this, a live follower never saw the
        answer (it showed only on a reload), and the chat feed never indexed it. An event
        matches by kind, time and payload (another replica may have taken the seq instead).
        A failed read keeps them for the next try."""
        first = min(e.seq for e in w.unsure)
        stored = await self._store.events_range(session_id, first, last_seq)
        lost, w.unsure = w.unsure, []
        for event in stored:
            mine = next((e for e in lost if _same(e, event)), None)
            if event.ephemeral or mine is None:
                continue
            lost.remove(mine)
            if self._on_durable is not None:
                self._on_durable(session_id, event)
            self._notify(session_id, event)

    def _stored_early(self, session_id: str, w: _Writer, early: list[Event], inserted: int) -> None:
        """The announced events an insert stored: all when it got past them, else those before
        the one whose id existed and that one (a sole writer's seqs are its own: its id can
        only be there from an earlier insert of ours)."""
        done = early[: min(inserted + 1, len(early))]
        del w.unstored[: len(done)]
        if self._on_durable is not None:
            for event in done:
                self._on_durable(session_id, event)

    def _notify(self, session_id: str, event: Event) -> None:
        for sub in self._subscribers.get(session_id, ()):
            sub.push(event)

    def attach(self, session_id: str, sink: Sink) -> None:
        """`sink` gets the session's live events from now on (`catch_up` gives the earlier)."""
        self._subscribers.setdefault(session_id, set()).add(sink)

    def detach(self, session_id: str, sink: Sink) -> None:
        subs = self._subscribers.get(session_id)
        if subs is not None:
            subs.discard(sink)
            if not subs:
                del self._subscribers[session_id]

    async def catch_up(self, session_id: str, since: int) -> tuple[list[Event], int]:
        """What a sink attached just before needs besides its live events: the events after
        `since` up to the last seq written (replayed), and that seq. A live event at or below
        it is in the replay (or was a chunk handed out before the replay window)."""
        w = self._writer(session_id)
        # A write in flight has a seq but may not be readable yet; wait for it to land.
        await w.idle.wait()
        current = w.last_seq
        if current is None:
            current = await self._store.last_seq(session_id)
            if w.last_seq is None and not w.busy and not w.unsure:
                # Only while no write began meanwhile: one that did reads it itself, and
                # a value older than its own would hand its seqs out again. Events of a
                # failed write are settled by the next write (`_settle`).
                w.last_seq, w.reserved = current, 0
        return await self.replay(session_id, since, current), current

    async def replay(self, session_id: str, since: int, until: int) -> list[Event]:
        """Persisted events in (since, until] from the store, plus chunks still in the window."""
        if until <= since:
            return []
        horizon = self._clock.now_ms() - self._window_ms
        w = self._writers.get(session_id)
        chunks = [
            c for c in (w.chunks if w else ()) if since < c.seq <= until and c.at_ms >= horizon
        ]
        # Announced events not yet stored (`announce`) come from memory; one stored while the
        # store was read comes once.
        unstored = [e for e in (w.unstored if w else ()) if since < e.seq <= until]
        early = {e.seq for e in unstored}
        chunks += unstored
        held = {c.seq for c in chunks}
        # A chunk placeholder is replayed only when it kept its text (`keep_chunk_text`, of
        # any replica), is within the window and not held here already.
        persisted = [
            e
            for e in await self._store.events_range(session_id, since + 1, until)
            if e.seq not in early
            and (not e.ephemeral or (e.data and e.at_ms >= horizon and e.seq not in held))
        ]
        events = persisted + chunks
        events.sort(key=lambda e: e.seq)
        return events

    async def subscribe(self, session_id: str, since: int) -> AsyncIterator[Event]:
        """Every event after `since` (replayed), then live events, in seq order."""
        async for batch in self.subscribe_batches(session_id, since):
            for event in batch:
                yield event

    async def subscribe_batches(
        self, session_id: str, since: int
    ) -> AsyncGenerator[list[Event], None]:
        """As `subscribe`, a list at a time: the replay, then what each wake-up finds queued."""
        sub = _Subscriber()
        self.attach(session_id, sub)
        try:
            last = since
            replayed, current = await self.catch_up(session_id, since)
            for i in range(0, len(replayed), _BATCH):
                yield replayed[i : i + _BATCH]
                last = replayed[i : i + _BATCH][-1].seq
            last = max(last, current) if current > since else last
            while True:
                if sub.overflowed:
                    raise SubscriberOverflow(f"subscriber of {session_id} fell behind at {last}")
                try:
                    first = await asyncio.wait_for(sub.queue.get(), self._poll_s)
                except TimeoutError:
                    # Another replica may have written: read what the store has.
                    current = await self._store.last_seq(session_id)
                    replayed = [
                        e for e in await self.replay(session_id, last, current) if e.seq > last
                    ]
                    for i in range(0, len(replayed), _BATCH):
                        yield replayed[i : i + _BATCH]
                        last = replayed[i : i + _BATCH][-1].seq
                    continue
                ready = [first]
                while not sub.queue.empty() and len(ready) < _BATCH:
                    ready.append(sub.queue.get_nowait())
                batch = []
                for event in ready:
                    if event.seq > last:
                        batch.append(event)
                        last = event.seq
                if batch:
                    yield batch
        finally:
            self.detach(session_id, sub)

    async def read_stored(self, session_id: str, since: int, until: int) -> list[Event]:
        """The events in (since, until] as the store has them now (until 0: its last seq):
        a gateway's gap fill or catch-up after a replica's stream broke."""
        if until <= 0:
            until = await self._store.last_seq(session_id)
        return await self.replay(session_id, since, until)

    def end_chunks(self, session_id: str, process_id: str) -> None:
        """A turn of `process_id` ended: its stream chunks leave the session's replay ring.
        What they showed is replaced by persisted events (the turn's chat-message-appended,
        its status change, after which clients drop the process's live overlay), so a replay
        of them would show nothing a client keeps (docs/protocol.md "What is replayed").
        Held for the whole window instead, a session's ring kept every chunk of its last ten
        minutes: most of what process_service grew by under load (issue 28). Called after the
        turn's commit wrote its events, so every chunk of the turn is in the ring by then."""
        w = self._writers.get(session_id)
        if w is None or not w.chunks:
            return
        kept = [c for c in w.chunks if c.data.get("think_process_id") != process_id]
        if len(kept) != len(w.chunks):
            w.chunks = deque(kept, maxlen=_RING_LIMIT)

    def forget(self, session_id: str) -> None:
        """A suspended, closed or deleted session: its writer (last seq, chunk ring) goes,
        unless a write is in flight or someone still follows the stream. The last seq is read
        from the store again on the next write."""
        w = self._writers.get(session_id)
        if (
            w is not None
            and not w.busy
            and not w.pending
            and not w.unsure
            and not w.unstored
            and session_id not in self._subscribers
        ):
            del self._writers[session_id]

    def evict_idle(self) -> int:
        """Forgets chunk rings of sessions quiet for longer than the window."""
        horizon = self._clock.now_ms() - self._window_ms
        quiet = [
            sid
            for sid, w in self._writers.items()
            if not w.busy
            and not w.unsure
            and not w.unstored
            and w.last_used_ms < horizon
            and sid not in self._subscribers
        ]
        for sid in quiet:
            del self._writers[sid]
        return len(quiet)


def _crossed_mark(first: int, last: int) -> bool:
    """Whether seqs first..last pass a multiple of MARK_EVERY (the stream document's bound is
    raised then, so `ProcessStore.last_seq` probes a short way past it)."""
    return last // MARK_EVERY != (first - 1) // MARK_EVERY


def _same(mine: Event, stored: Event) -> bool:
    """Whether a stored event is this writer's (its seq may differ: it was numbered again)."""
    return mine.kind == stored.kind and mine.at_ms == stored.at_ms and mine.data == stored.data


def _position(events: list[Event], event: Event) -> int:
    """The index of this very event (events compare by value, two may be equal)."""
    return next(i for i, e in enumerate(events) if e is event)
