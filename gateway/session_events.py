"""One session's events when process_service has several replicas (docs/operations.md
"Replicas").

Each replica delivers live only what it writes itself: the events and stream chunks of the
turns its workers run, and the steers, cascades and notices called on it. So a socket follows
its session on every replica (one `SubscribeSessionBatches` each) and merges the streams by
seq. Seqs are contiguous per session and a replica takes a seq only after every earlier one is
in the store (process_service/events/log.py), so a seq that is missing while a later one arrived is
either on its way from another replica or readable from the store:

- a gap is given `events.gap_fill_ms` to fill from the streams (usually it does within
  milliseconds), then the missing range is read from the store through any replica
  (`replay_only`): what the store has is delivered, what it has not (a chunk past the replay
  window) is skipped, so the stream never stalls and never skips an event it could have sent;
- a replica's stream that breaks (it died, or restarts) may have taken events with it that it
  wrote but had not sent: the merge reads the store to its end through the other replicas at
  once (a catch-up), and the broken stream resubscribes from the last delivered seq.

With one replica none of this runs: the socket keeps its single subscription
(gateway/connection.py), so the single-replica turn path has no extra call or store read."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

import grpc

from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc

logger = logging.getLogger(__name__)

_RESUBSCRIBE_BACKOFF_S = 0.2
_RESUBSCRIBE_BACKOFF_MAX_S = 2.0  # a replica that is down is asked again at least this often
_UP_S = 1.0  # a stream that lasted this long was up (a refused call fails in milliseconds)
_QUEUED_BATCHES = 64  # per socket: a slow client slows its replicas' streams, not our memory


class _CatchUp:
    """A replica's stream broke: read the store to its end."""


_CATCH_UP = _CatchUp()
Item = list[pb.SessionEvent] | _CatchUp


class MergedEvents:
    """Delivers a session's events from every process_service replica exactly once, in seq
    order, to `relay`; `delivered()` is the last seq relayed (the socket's own count)."""

    def __init__(
        self,
        replicas: Sequence[process_pb2_grpc.ProcessServiceAsyncStub],
        session_id: str,
        *,
        delivered: Callable[[], int],
        relay: Callable[[pb.SessionEvent], Awaitable[None]],
        gap_fill_s: float,
    ) -> None:
        self._replicas = list(replicas)
        self._session_id = session_id
        self._delivered = delivered
        self._relay = relay
        self._gap_fill_s = gap_fill_s
        self._queue: asyncio.Queue[Item] = asyncio.Queue(_QUEUED_BATCHES)
        self._pending: dict[int, pb.SessionEvent] = {}
        self._next_reader = 0
        self.filled = 0  # gaps filled from the store (for tests and logs)

    async def run(self) -> None:
        """Until cancelled or the client is gone (the relay's exception ends it)."""
        followers = [asyncio.create_task(self._follow(stub)) for stub in self._replicas]
        try:
            await self._merge()
        finally:
            for task in followers:
                task.cancel()
            await asyncio.gather(*followers, return_exceptions=True)

    async def _follow(self, stub: process_pb2_grpc.ProcessServiceAsyncStub) -> None:
        backoff = _RESUBSCRIBE_BACKOFF_S
        while True:
            request = ppb.SubscribeSessionRequest(
                session_id=self._session_id, since_seq=self._delivered()
            )
            streamed = False
            started = time.monotonic()
            try:
                async for batch in stub.SubscribeSessionBatches(request):
                    streamed = True
                    backoff = _RESUBSCRIBE_BACKOFF_S
                    await self._queue.put(list(batch.events))
            except grpc.aio.AioRpcError as exc:
                if streamed or time.monotonic() - started >= _UP_S:
                    # Only a stream that was up can have taken unsent events with it: a call
                    # to a replica that is down fails at once, and reads nothing.
                    logger.info(
                        "event stream of %s from a replica broke (%s); catching up",
                        self._session_id,
                        exc.code().name,
                    )
                    await self._queue.put(_CATCH_UP)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, _RESUBSCRIBE_BACKOFF_MAX_S)

    async def _merge(self) -> None:
        gap_deadline: float | None = None
        while True:
            timeout = None if gap_deadline is None else max(0.0, gap_deadline - time.monotonic())
            try:
                item = await asyncio.wait_for(self._queue.get(), timeout)
            except TimeoutError:
                # The gap did not fill from the streams: the store has it (or never will).
                if await self._fill(until=min(self._pending) - 1):
                    self.filled += 1
                    gap_deadline = None
                else:
                    gap_deadline = time.monotonic() + self._gap_fill_s  # no replica answered
                continue
            if isinstance(item, _CatchUp):
                await self._fill(until=0)
            else:
                last = self._delivered()
                for event in item:
                    if event.seq > last:
                        self._pending.setdefault(event.seq, event)
                await self._deliver_contiguous()
            if not self._pending:
                gap_deadline = None
            elif gap_deadline is None:
                gap_deadline = time.monotonic() + self._gap_fill_s

    async def _deliver_contiguous(self) -> None:
        while (event := self._pending.pop(self._delivered() + 1, None)) is not None:
            await self._relay(event)

    async def _fill(self, *, until: int) -> bool:
        """Reads (delivered, until] from the store (until 0: to its end) through the first
        replica that answers; delivers what is pending up to there, in seq order, past any
        seq the store cannot give (a chunk older than the replay window), then what follows
        contiguously. False when no replica answered."""
        since = self._delivered()
        if 0 < until <= since:
            await self._deliver_contiguous()
            return True
        request = ppb.SubscribeSessionRequest(
            session_id=self._session_id, since_seq=since, replay_only=True, until_seq=until
        )
        for attempt in range(len(self._replicas)):
            stub = self._replicas[(self._next_reader + attempt) % len(self._replicas)]
            try:
                read = [
                    e async for batch in stub.SubscribeSessionBatches(request) for e in batch.events
                ]
            except grpc.aio.AioRpcError as exc:
                logger.info("reading %s from a replica failed: %s", self._session_id, exc.code())
                continue
            self._next_reader = (self._next_reader + attempt + 1) % len(self._replicas)
            break
        else:
            return False
        for event in read:
            if event.seq > since:
                self._pending.setdefault(event.seq, event)
        through = max([until, *(e.seq for e in read)])
        for seq in sorted(s for s in self._pending if s <= through):
            await self._relay(self._pending.pop(seq))
        await self._deliver_contiguous()
        return True
