"""The events of every socket's session on one stream to process_service (`FollowSessions`,
process_service/events/follow.py), instead of one `SubscribeSessionBatches` per socket.

With 200 sockets streaming answers, a stream per socket meant one gRPC message written by
process_service and read here per event per session, each with grpc's per-message cost on both
ends and a task woken per read (issue 28). On one stream, what process_service's event loop
wrote in one turn for all of this gateway's sockets is one message.

The reader hands each follow's events to its socket at once (`Deliver`, gateway/connection.py:
rendered and queued on the socket's protocol in the reader's own step, without waking a task
per socket). What a socket cannot take at once (a reply of its own is being sent, its client
reads slowly) waits in the follow's queue, and everything after it too, until the socket's
pump has sent it. Each socket's follow has a key (new on every add) and a bounded queue:

- **Slow client.** A follow whose queue would pass `QUEUE_LIMIT` stops taking events: the feed
  drops it on the server and keeps what it queued; once the socket has sent those to its client,
  the follow is added again from the last seq it received, a replay from the store (persisted
  events; stream chunks within the replay window). So a client that stops reading costs at most
  `QUEUE_LIMIT` events of memory and never holds up other sockets: the stream is read by one
  task that never waits on a socket.
- **Broken stream** (process_service restarted): the feed opens a new stream and adds every
  follow again from the last seq it received; the pump skips a seq it already sent, so nothing
  is lost or sent twice. A follow the server ended (its own bound, or it could not read the
  store) is added again the same way.
- **Authorization.** The call is service-only (vance/policy.py has no rule for it, so a user
  token is refused): the gateway calls it with its service credentials, and process_service
  trusts it for every session it names, because the gateway checked the user for the socket's
  session before following it (gateway/binding.py), as it does for its other internal calls.

With several process_service replicas the sockets keep their per-session merge
(gateway/session_events.py): its gap fill and catch-up are per session and per replica."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Iterable

import grpc

from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import process_internal_pb2_grpc
from vance.v1 import common_pb2 as pb

logger = logging.getLogger(__name__)

QUEUE_LIMIT = 2_048  # events a socket's follow keeps for its client
_BACKOFF_S = 0.2
# Sends one event to the socket now, if it can take it at once without waiting: True when it
# was sent (or skipped for good), False to leave it to the pump (gateway/connection.py). It is
# called by the feed's reader: it must not raise or block.
Deliver = Callable[[pb.SessionEvent], bool]
# A process_service that is down refuses the call in milliseconds, and every socket's events
# wait for the stream: ask again at least twice a second, so a restarted process_service is
# followed within half a second of being back (the channel's own reconnect backoff is at most
# 1 s, vance/channels.py); 2 s cost a restart's probe its answer (tests/test_self_healing.py).
_BACKOFF_MAX_S = 0.5
_UP_S = 1.0  # a stream that lasted this long was up: the next attempt starts without a wait


class Follow:
    """One socket's follow of one session: its events in seq order go to `deliver` as they
    arrive, or, when it cannot take one now, to a queue its pump reads with `next()`."""

    def __init__(
        self,
        feed: EventFeed,
        session_id: str,
        since: int,
        limit: int,
        deliver: Deliver | None = None,
    ) -> None:
        self._feed = feed
        self.session_id = session_id
        self.key = 0
        self.received = since  # the last seq queued or delivered (or the resume seq)
        self._limit = limit
        self._deliver = deliver
        # A list and the pump's one future, not a deque and an Event: most events never queue
        # (`deliver` takes them), and a deque reserves ~760 bytes up front (an Event another,
        # for its waiters), per socket.
        self._queue: list[pb.SessionEvent] = []
        self._waiter: asyncio.Future[None] | None = None
        # The pump holds events taken by `next()` and not yet sent: nothing may pass them.
        self._draining = False
        self.paused = False  # the queue filled: dropped on the server until it drains
        self.closed = False

    @property
    def queued(self) -> int:
        return len(self._queue)

    def take(self, events: Iterable[pb.SessionEvent]) -> None:
        """Events from the stream for this follow (called by the feed's reader)."""
        if self.paused:
            return
        deliver = self._deliver
        for event in events:
            if event.seq <= self.received:
                continue
            if deliver is not None and not self._queue and not self._draining:
                # Sent from here, in the reader's own step: no wake-up of the socket's pump
                # per message (a task step each, for every socket of every reply).
                if deliver(event):
                    self.received = event.seq
                    continue
                deliver = None  # the socket cannot take it now: this and the rest queue
            if len(self._queue) >= self._limit:
                # The client reads slower than its session writes: stop following until what
                # is queued went out, then replay the rest from the store (module doc).
                logger.info("socket of %s fell behind at seq %d", self.session_id, self.received)
                self.paused = True
                self._feed.unfollow(self)
                break
            self._queue.append(event)
            self.received = event.seq
        waiter = self._waiter
        if self._queue and waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def next(self) -> list[pb.SessionEvent]:
        """The events queued now (at least one), waiting for some; a paused follow whose queue
        went out is added again from its last seq here."""
        self._draining = False  # what the last call gave is sent
        while not self._queue:
            if self.paused:
                self.paused = False
                self._feed.refollow(self)
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        out, self._queue = self._queue, []
        self._draining = True
        return out

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._feed.unfollow(self)


class EventFeed:
    """One FollowSessions stream to process_service for all of this gateway's sockets; `run`
    keeps it open (a background task of the gateway, gateway/app.py)."""

    def __init__(
        self,
        stub: process_internal_pb2_grpc.ProcessInternalServiceAsyncStub,
        *,
        queue_limit: int = QUEUE_LIMIT,
        handed_out: Callable[[], None] | None = None,
    ) -> None:
        self._stub = stub
        self._queue_limit = queue_limit
        # Called each time a follow's events of a message are handed out: the socket's write
        # (gateway/ws_transport.py `write_queued`), before the message's next group is rendered.
        self._handed_out = handed_out
        self._keys = itertools.count(1)
        self._follows: dict[int, Follow] = {}
        self._requests: asyncio.Queue[pipb.FollowSessionsRequest] | None = None
        self.streams_opened = 0  # for tests and logs

    def follow(self, session_id: str, since: int, deliver: Deliver | None = None) -> Follow:
        """A socket's follow of its session from `since`; `deliver` (see `Deliver`) sends an
        event at once when it can, else it waits in the follow's queue for `next()`."""
        f = Follow(self, session_id, since, self._queue_limit, deliver)
        self.refollow(f)
        return f

    def refollow(self, f: Follow) -> None:
        """Adds the follow (again) from the last seq it received, under a new key: a group
        still on its way for the old key is not taken for the new one."""
        if f.closed:
            return
        self._follows.pop(f.key, None)
        f.key = next(self._keys)
        self._follows[f.key] = f
        self._send(pipb.FollowSessionsRequest(add=[_add(f)]))

    def unfollow(self, f: Follow) -> None:
        if self._follows.pop(f.key, None) is not None:
            self._send(pipb.FollowSessionsRequest(drop=[f.key]))

    def _send(self, request: pipb.FollowSessionsRequest) -> None:
        # Without a stream, the next stream starts with every follow (`_open`).
        if self._requests is not None:
            self._requests.put_nowait(request)

    async def run(self) -> None:
        """Until cancelled: opens the stream, re-opens it when it breaks."""
        backoff = _BACKOFF_S
        while True:
            started = asyncio.get_running_loop().time()
            try:
                await self._stream()
            except grpc.aio.AioRpcError as exc:
                logger.info("event feed broke (%s); reopening", exc.code().name)
            except Exception:
                # A bug here must not end every socket's events for good: log, reopen.
                logger.exception("event feed failed; reopening")
            finally:
                self._requests = None
            if asyncio.get_running_loop().time() - started >= _UP_S:
                backoff = _BACKOFF_S
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX_S)

    async def _stream(self) -> None:
        requests: asyncio.Queue[pipb.FollowSessionsRequest] = asyncio.Queue()
        # Every follow again, from what it received: a stream that broke took its follows.
        renewed: dict[int, Follow] = {}
        for f in self._follows.values():
            f.key = next(self._keys)
            renewed[f.key] = f
        self._follows = renewed
        requests.put_nowait(pipb.FollowSessionsRequest(add=[_add(f) for f in renewed.values()]))
        self._requests = requests
        self.streams_opened += 1
        call = self._stub.FollowSessions(_drain(requests))
        async for reply in call:
            for group in reply.groups:
                follow = self._follows.get(group.key)
                if follow is None:
                    continue  # dropped meanwhile
                if group.events:
                    follow.take(group.events)
                    if self._handed_out is not None:
                        self._handed_out()
                if group.ended:
                    # Its queue there overflowed or the store could not be read: again from
                    # what it received, after a pause (a store that is down is not asked hot).
                    logger.info(
                        "follow of %s ended by the server: %s", follow.session_id, group.reason
                    )
                    del self._follows[group.key]
                    asyncio.get_running_loop().call_later(_BACKOFF_S, self.refollow, follow)


def _add(f: Follow) -> pipb.SessionFollow:
    return pipb.SessionFollow(key=f.key, session_id=f.session_id, since_seq=f.received)


async def _drain(
    requests: asyncio.Queue[pipb.FollowSessionsRequest],
) -> AsyncIterator[pipb.FollowSessionsRequest]:
    while True:
        yield await requests.get()
