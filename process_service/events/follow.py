"""Many sessions' events on one stream: the server side of `FollowSessions`, what a gateway
follows for all its sockets at once (gateway/event_feed.py).

A follow (key, session, since) is attached to the EventLog like any subscriber, but its live
events are not queued to a task of their own: they are put in the stream's outbox, by key, and
the stream's one writer sends everything the outbox holds as one message once the event loop
has run what was ready. So a turn of the loop that wrote chunks of fifty sessions costs one
gRPC message, not fifty (issue 28). A new follow first takes the replay (`EventLog.catch_up`);
the live events that arrive meanwhile are held and sent after it, past its last seq.

Bounds: a follow's events waiting in the outbox are at most `queue_limit`; a follow that would
exceed it (its gateway reads slower than its sessions write) ends with reason "overflow", and
the gateway adds it again from its last seq (a replay), so nothing persisted is lost and memory
stays bounded per follow."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from process_service.events.log import EventLog
from process_service.process_model import SessionEvent as Event

logger = logging.getLogger(__name__)

QUEUE_LIMIT = 4_096  # events of one follow not yet sent
# After a message, the next one waits until this long after it: what the loop writes meanwhile
# (other turns' chunks, commits, status changes) rides along. Under load a gateway's stream
# otherwise carried a message per event-loop pass, most with one or two events: a gRPC write
# here and a read on the gateway each (issue 28). A quiet stream sends at once; an event waits
# at most this long, against a model's 20-50 ms between tokens.
GATHER_S = 0.004
# Events per message: a long replay goes out in pieces well under gRPC's message size limit.
MESSAGE_EVENTS = 200

OVERFLOW = "overflow"
UNAVAILABLE = "unavailable"


@dataclass(eq=False)
class _Follow:
    key: int
    session_id: str
    stream: FollowStream
    last: int  # the last seq put in the outbox (or, before that, the resume seq)
    live: bool = False  # the replay is in the outbox: live events go there directly
    held: list[Event] = field(default_factory=list)  # live events that came during the replay
    ended: bool = False
    replay: asyncio.Task[None] | None = None
    # Events the outbox may hold for it: the bound, plus a replay not yet sent in full (a
    # long session's history is not an overflow).
    allow: int = QUEUE_LIMIT

    def push(self, event: Event) -> None:
        if self.ended:
            return
        if not self.live:
            self.held.append(event)
            if len(self.held) > self.stream.queue_limit:
                self.stream.end(self, OVERFLOW)
            return
        self.stream.put(self, event)


@dataclass
class Reply:
    """One message: events by follow key (each list in seq order), and the follows that ended."""

    events: dict[int, list[Event]]
    ended: dict[int, str]


class FollowStream:
    """The follows of one FollowSessions call. Its replays run in `tasks` (the call's)."""

    def __init__(
        self, log: EventLog, tasks: asyncio.TaskGroup, *, queue_limit: int = QUEUE_LIMIT
    ) -> None:
        self._log = log
        self._tasks = tasks
        self.queue_limit = queue_limit
        self._follows: dict[int, _Follow] = {}
        self._outbox: dict[int, list[Event]] = {}
        self._ended: dict[int, str] = {}
        self._ready = asyncio.Event()
        self._closed = False

    def add(self, key: int, session_id: str, since: int) -> None:
        if key in self._follows:
            self.drop(key)  # the caller's key names the newest follow
        f = _Follow(key, session_id, self, since, allow=self.queue_limit)
        self._follows[key] = f
        self._log.attach(session_id, f)
        f.replay = self._tasks.create_task(self._catch_up(f))

    def drop(self, key: int) -> None:
        f = self._follows.pop(key, None)
        if f is None:
            return
        self._detach(f)
        self._outbox.pop(key, None)
        self._ended.pop(key, None)

    def close(self) -> None:
        """The caller stopped asking (its side of the call ended): `replies` ends."""
        self._closed = True
        self._ready.set()

    def detach_all(self) -> None:
        for f in self._follows.values():
            self._detach(f)
        self._follows.clear()

    def put(self, f: _Follow, event: Event) -> None:
        if event.seq <= f.last:
            return
        box = self._outbox.get(f.key)
        if box is None:
            box = self._outbox[f.key] = []
            self._ready.set()
        elif len(box) >= f.allow:
            self.end(f, OVERFLOW)
            return
        box.append(event)
        f.last = event.seq

    def end(self, f: _Follow, reason: str) -> None:
        """No more events for this follow; the caller hears why (and adds it again)."""
        if f.ended:
            return
        logger.info("follow of %s ended: %s", f.session_id, reason)
        f.ended = True  # takes no more events from now on
        f.held = []
        # Called from the EventLog's hand-out (`push`/`put`), which walks the session's
        # subscribers: leave them once it is done.
        asyncio.get_running_loop().call_soon(self._detach, f)
        if self._follows.get(f.key) is f:
            del self._follows[f.key]
            self._outbox.pop(f.key, None)
            self._ended[f.key] = reason
            self._ready.set()

    def _detach(self, f: _Follow) -> None:
        f.ended = True
        self._log.detach(f.session_id, f)
        if f.replay is not None and f.replay is not asyncio.current_task():
            f.replay.cancel()

    async def _catch_up(self, f: _Follow) -> None:
        try:
            replayed, current = await self._log.catch_up(f.session_id, f.last)
        except Exception as exc:  # the store is down: the caller retries from its seq
            logger.warning("replay of %s failed: %s", f.session_id, exc)
            self.end(f, UNAVAILABLE)
            return
        if f.ended:
            return
        held, f.held = f.held, []
        f.live = True
        box = self._outbox.setdefault(f.key, [])
        for event in replayed:
            if event.seq > f.last:
                box.append(event)
                f.last = event.seq
        f.last = max(f.last, current)
        for event in held:
            if event.seq > f.last:
                box.append(event)
                f.last = event.seq
        f.allow = self.queue_limit + len(box)
        if box:
            self._ready.set()
        else:
            del self._outbox[f.key]

    async def replies(self) -> AsyncIterator[Reply]:
        """What the outbox holds each time it is woken, until `close`. The wake-up runs
        after the rest of the loop's ready work, so what that work wrote rides along; within
        GATHER_S of the last message, what the next passes write too."""
        loop = asyncio.get_running_loop()
        last = -GATHER_S
        while True:
            await self._ready.wait()
            if self._closed:
                return
            wait = last + GATHER_S - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
                if self._closed:
                    return
            self._ready.clear()
            last = loop.time()
            yield self._take()
            if self._outbox or self._ended:
                self._ready.set()  # more than one message's worth was waiting

    def _take(self) -> Reply:
        ended, self._ended = self._ended, {}
        taken: dict[int, list[Event]] = {}
        room = MESSAGE_EVENTS
        for key in list(self._outbox):
            box = self._outbox[key]
            f = self._follows.get(key)
            if len(box) <= room:
                taken[key] = box
                del self._outbox[key]
                room -= len(box)
                if f is not None:
                    f.allow = self.queue_limit
            else:
                taken[key], self._outbox[key] = box[:room], box[room:]
                if f is not None:
                    f.allow = max(self.queue_limit, f.allow - room)
                room = 0
            if room == 0:
                break
        return Reply(taken, ended)
