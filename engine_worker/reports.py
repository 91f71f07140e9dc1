"""A turn's reports on their way to process_service: held back briefly, sent in order.

The reports are engine_worker/protocol.py's typed messages; `send` puts them in the worker's
outbox (engine_worker/worker.py), and what is still held when the turn ends rides with its
commit. The engine reaches this as `ctx.events` (engine_worker/context.py); the tool
dispatcher (engine_worker/tools.py) adds its tool-call reports as riders.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable

from engine_worker.json_types import JsonObject
from engine_worker.protocol import ChatAppend, Chunk, Progress, Report, ToServer
from vance.domain import ChatRole

Send = Callable[[ToServer], None]

# What a turn reports is held back briefly and goes out in order: stream chunks for at most
# CHUNK_WINDOW_S (one message instead of one per token, unnoticeable to a reader: a model
# streams a token every 20-50 ms), chat appends and progress for at most HOLD_S, or until a
# chunk goes out before. What is still held when the turn ends rides with its commit, so
# process_service stores a short turn's messages, events and commit in one write each.
CHUNK_WINDOW_S = 0.05
HOLD_S = 0.25
# A turn's first chunk waits only this long: a reader sees the answer begin within tens of
# milliseconds of the model's first token, while a reply that arrives whole within it (a fast
# model, a short answer) still rides with the commit at no write of its own.
FIRST_CHUNK_WINDOW_S = 0.015
# The user's own message, appended as the turn starts, waits for the turn's first chunk (or its
# commit) up to this long: at a hosted model's pace (a second or more to the first token) it
# then costs no store write of its own. The client shows what its user sent at once anyway.
USER_HOLD_S = 3.0
# How much sooner than its window's end a turn's reports may go when another turn's window ends
# (Flusher): a later chunk goes out 45-50 ms after it arrived, so every turn whose window ends
# within the same 5 ms shares one stream message. A turn's first chunk goes 5-15 ms after the
# model's first token: a reply that arrives whole commits right after its first chunk, so it
# still rides with the commit.
EARLY_S = 0.005
FIRST_CHUNK_EARLY_S = 0.010


class Flusher:
    """The worker's one clock for its turns' held reports (one per worker, engine_worker/
    worker.py). When a turn's window ends, every turn whose window ends within EARLY_S of it
    sends too, in the same event-loop step, so the worker's stream writes them as one message
    (engine_worker/worker.py batches what its outbox holds). With a timer per turn, 200 turns
    streaming at once cost a stream message (a gRPC write, and on process_service a read) per
    chunk each (issue 28)."""

    def __init__(self, send: Send) -> None:
        self.send = send
        # (time, token, publisher): when each publisher's window ends, and from when it may
        # go; an entry whose token is no longer its publisher's is stale and skipped.
        self._ends: list[tuple[float, int, EventPublisher]] = []
        self._starts: list[tuple[float, int, EventPublisher]] = []
        self._tokens = itertools.count()
        # The armed timer and when it fires. Kept apart from the handle: uvloop's call_at
        # returns a plain Handle (no `when()`) for a time already past, which `_fire` asks for
        # when the next window ends while it still runs (a busy loop).
        self._timer: asyncio.Handle | None = None
        self._timer_at = 0.0
        # The worker's loop, taken at the first arm and kept: asyncio.get_running_loop costs a
        # getpid system call per call on CPython 3.11, and arm runs per streamed chunk.
        self._loop: asyncio.AbstractEventLoop | None = None

    def arm(self, publisher: EventPublisher, window_s: float, early_s: float = EARLY_S) -> None:
        """The publisher's held reports go out within window_s at the latest (sooner if it is
        armed to go sooner already), and not before early_s before that unless the flusher
        runs for another turn's window anyway."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        now = loop.time()
        end = now + window_s
        if publisher.due_at is not None and publisher.due_at <= end:
            return
        token = next(self._tokens)
        publisher.due_at, publisher.token = end, token
        heapq.heappush(self._ends, (end, token, publisher))
        heapq.heappush(self._starts, (end - early_s, token, publisher))
        if self._timer is not None:
            if self._timer_at <= end:
                return
            self._timer.cancel()
        self._timer, self._timer_at = loop.call_at(end, self._fire), end

    @staticmethod
    def disarm(publisher: EventPublisher) -> None:
        publisher.due_at = publisher.token = None  # its entries are stale from now on

    def _fire(self) -> None:
        self._timer = None
        loop = self._loop  # set by the arm that armed this timer
        assert loop is not None
        now = loop.time()
        starts = self._starts
        while starts and starts[0][0] <= now:
            _, token, publisher = heapq.heappop(starts)
            if publisher.token == token:
                self.disarm(publisher)
                publisher.flush()
        ends = self._ends
        while ends and (ends[0][0] <= now or ends[0][2].token != ends[0][1]):
            heapq.heappop(ends)
        if ends:
            self._timer_at = ends[0][0]
            self._timer = loop.call_at(self._timer_at, self._fire)


class EventPublisher:
    """The turn's reports on their way to process_service: the live overlay for the bound
    client (token chunks, progress) and the chat appends, in the order they were made."""

    def __init__(self, turn_id: str, flusher: Flusher) -> None:
        self._turn_id = turn_id
        self._flusher = flusher
        self._held: list[Report] = []
        self._chunks: list[str] = []
        self._role = ChatRole.ASSISTANT
        # When the held reports go at the latest (None: not armed), and the flusher's entry.
        self.due_at: float | None = None
        self.token: int | None = None
        # Whether something held must go out by itself (a chat append, a chunk, progress); what
        # only rides along (`ride`) waits for it or for the commit.
        self._due = False
        self._chunked = False  # whether this turn has streamed a chunk yet

    def chunk(self, text: str, role: ChatRole = ChatRole.ASSISTANT) -> None:
        """A piece of the streamed answer. Synchronous (a ChunkSink may be, vance/llm_core.py):
        it only appends and arms the flusher, so the model client hands every event of a socket
        read over in one pass, with no coroutine per event (issue 28)."""
        if role is not self._role:
            self._close_chunk()
            self._role = role
        self._chunks.append(text)
        if self._chunked:
            self._flusher.arm(self, CHUNK_WINDOW_S)
        else:
            self._chunked = True
            self._flusher.arm(self, FIRST_CHUNK_WINDOW_S, FIRST_CHUNK_EARLY_S)

    async def progress(self, kind: str, payload: JsonObject) -> None:
        self.hold(Progress(self._turn_id, kind, payload))

    def ride(self, kind: str, payload: JsonObject) -> None:
        """A report that never causes a send (nor so a store write) of its own: it goes out, in
        its place, with the next report that does, or with the commit (a turn's tool calls,
        engine_worker/tools.py)."""
        self._close_chunk()
        self._held.append(Progress(self._turn_id, kind, payload))

    def append(
        self, message_id: str, role: ChatRole, content: str, meta: JsonObject | None
    ) -> None:
        """A chat message of the turn (engine_worker/context.py's ChatApi). The user's own
        message waits longer (USER_HOLD_S)."""
        self.hold(
            ChatAppend(self._turn_id, message_id, role, content, meta),
            USER_HOLD_S if role is ChatRole.USER else HOLD_S,
        )

    def hold(self, report: Report, window_s: float = HOLD_S) -> None:
        """Queues a report after everything queued before it, sent within window_s."""
        self._close_chunk()
        self._held.append(report)
        self._due = True
        self._flusher.arm(self, window_s)

    def flush(self, *, riders: bool = False) -> None:
        """Sends what is held now (before something that must follow it); when only riders are
        held, they wait, unless `riders` (a failed turn sends all it has)."""
        if not (self._due or self._chunks or (riders and self._held)):
            return
        send = self._flusher.send
        for report in self.take():
            send(report)

    def take(self) -> list[Report]:
        """What is held, in order, no longer held (for the commit to carry)."""
        self._flusher.disarm(self)
        self._close_chunk()
        held, self._held = self._held, []
        self._due = False
        return held

    def _close_chunk(self) -> None:
        if not self._chunks:
            return
        text = "".join(self._chunks)
        self._chunks.clear()
        self._due = True
        self._held.append(Chunk(self._turn_id, self._role, text))
