"""Every socket's steers on one stream per process_service replica (`SteerStream`,
process_service/runtime/steer_stream.py), instead of a unary `Steer` call each.

A unary call costs grpc.aio about 0.3 ms of CPU here and 0.4 ms in process_service; a message
on an open stream about 0.2 ms on each end, and calls that meet in one loop pass share one
(issue 28). What a socket gets is what the unary call gave it:

- **Replies and errors.** Each call has an id; its result is the `SteerResponse`, or the status
  the unary call would have failed with, raised as the same error (vance/errors.py
  `from_status`), so the socket's error frame (status, message, reason) is the same.
- **Who.** Each call carries the token of the user it is made for (`vance.auth.on_behalf_of`,
  what the unary call carried as its `authorization` metadata); process_service verifies it and
  checks Steer's rule per call. The stream itself carries this gateway's service credential.
- **Deadline.** A call waits at most `calls.timeout_s` (the unary call's deadline) in all, queue
  included, then fails DEADLINE_EXCEEDED; process_service gets the time left with it.
- **Broken stream** (process_service restarted): every call sent on it and not answered fails
  UNAVAILABLE at once, its outcome unknown, as a unary call that lost its connection; the
  client's retry with the message's idempotency key (docs/protocol.md) stores it at most once.
  A call not yet sent waits for the next stream, which opens at once, then after a short
  backoff while process_service is down.
- **Bounds.** At most `MAX_IN_FLIGHT` calls are queued or in flight; more wait for a slot
  (within their deadline). Writes wait for gRPC's flow control, so a slow process_service
  holds the queue at that bound, never more.
- **Replicas.** One stream per process_service replica; calls go round robin over those whose
  stream is open, as the unary calls went round robin over the replicas that serve.

With tracing on, steers stay unary calls (gateway/process_frames.py), which carry their trace
context and have their spans."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import grpc

from vance.auth import on_behalf_of
from vance.errors import DeadlineExceededError, UnavailableError, from_status
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import process_internal_pb2_grpc
from vance.v1 import process_pb2 as ppb

logger = logging.getLogger(__name__)

MAX_IN_FLIGHT = 1_024  # calls queued or in flight, all streams of this gateway
_BACKOFF_S = 0.1
_BACKOFF_MAX_S = 0.5
_UP_S = 1.0  # a stream that lasted this long was up: the next one opens without a wait

if TYPE_CHECKING:
    Stub = process_internal_pb2_grpc.ProcessInternalServiceAsyncStub
    Call = grpc.aio.StreamStreamCall[pipb.SteerStreamRequest, pipb.SteerStreamReply]


class _Stream:
    """One replica's stream: calls not yet sent, and those sent and not answered."""

    def __init__(self, stub: Stub) -> None:
        self._stub = stub
        self._waiting: dict[int, asyncio.Future[pipb.SteerCallResult]] = {}
        self._unsent: list[pipb.SteerCall] = []
        self._wake: asyncio.Future[None] | None = None
        self.up = False
        self.opened = 0  # streams opened, for tests and logs

    def submit(self, call: pipb.SteerCall) -> asyncio.Future[pipb.SteerCallResult]:
        result: asyncio.Future[pipb.SteerCallResult] = asyncio.get_running_loop().create_future()
        self._waiting[call.id] = result
        self._unsent.append(call)
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)
        return result

    def forget(self, call_id: int) -> None:
        """The caller stopped waiting (its deadline): a late result is dropped."""
        if self._waiting.pop(call_id, None) is not None and self._unsent:
            self._unsent = [c for c in self._unsent if c.id != call_id]

    async def run(self) -> None:
        """Until cancelled: opens the stream, reopens it when it breaks."""
        backoff = _BACKOFF_S
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            sent: set[int] = set()
            failure = "the stream ended"
            try:
                await self._stream(sent)
            except grpc.aio.AioRpcError as exc:
                failure = f"{exc.code().name}: {exc.details()}"
                logger.info("steer stream broke (%s); reopening", exc.code().name)
            except Exception as exc:
                # A bug here must not end every socket's steers for good: log, reopen.
                failure = f"internal error: {type(exc).__name__}"
                logger.exception("steer stream failed; reopening")
            finally:
                self.up = False
                self._fail(sent, failure)
            if loop.time() - started >= _UP_S:
                backoff = _BACKOFF_S
                continue  # was up: reopen at once (a restarted replica or a moved stream)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX_S)

    def _fail(self, sent: set[int], failure: str) -> None:
        """The calls sent on a stream that broke: their outcome is unknown (module doc)."""
        for call_id in sent:
            result = self._waiting.pop(call_id, None)
            if result is not None and not result.done():
                result.set_exception(
                    UnavailableError(
                        f"process_service's steer stream broke ({failure}); the message may or "
                        "may not be stored: send it again with the same idempotency key",
                        reason="unavailable",
                    )
                )

    async def _stream(self, sent: set[int]) -> None:
        call = self._stub.SteerStream()
        self.opened += 1
        self.up = True
        reader = asyncio.ensure_future(self._read(call, sent))
        writer = asyncio.ensure_future(self._write(call, sent))
        try:
            # The writer ends only by failing; the reader by the stream's end or failure.
            await asyncio.wait((reader, writer), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (reader, writer):
                task.cancel()
            call.cancel()
            await asyncio.gather(reader, writer, return_exceptions=True)
        for task in (reader, writer):
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    async def _read(self, call: Call, sent: set[int]) -> None:
        while True:
            reply = await call.read()
            if not isinstance(reply, pipb.SteerStreamReply):
                return  # grpc.aio.EOF: process_service ended the stream
            for result in reply.results:
                sent.discard(result.id)
                waiter = self._waiting.pop(result.id, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(result)

    async def _write(self, call: Call, sent: set[int]) -> None:
        """Everything submitted while the last message was written goes in the next one."""
        while True:
            while not self._unsent:
                self._wake = asyncio.get_running_loop().create_future()
                try:
                    await self._wake
                finally:
                    self._wake = None
            calls, self._unsent = self._unsent, []
            # Counted as sent before the write: a write that fails may have gone out.
            sent.update(c.id for c in calls)
            await call.write(pipb.SteerStreamRequest(calls=calls))


class SteerStreams:
    """The gateway's steers on one stream per process_service replica; `run` keeps them open
    (a background task of the gateway, gateway/app.py)."""

    def __init__(
        self, stubs: Sequence[Stub], *, timeout_s: float, max_in_flight: int = MAX_IN_FLIGHT
    ) -> None:
        self._streams = [_Stream(stub) for stub in stubs]
        self._timeout_s = timeout_s
        self._slots = asyncio.Semaphore(max_in_flight)
        self._ids = itertools.count(1)
        self._turn = itertools.count()

    @property
    def opened(self) -> int:
        return sum(s.opened for s in self._streams)

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tasks:
            for stream in self._streams:
                tasks.create_task(stream.run())

    def _pick(self) -> _Stream:
        up = [s for s in self._streams if s.up] or self._streams
        return up[next(self._turn) % len(up)]

    async def steer(self, request: ppb.SteerRequest) -> ppb.SteerResponse:
        """What the unary `Steer` answers for `request`, or the error it fails with."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout_s
        stream: _Stream | None = None
        call_id = next(self._ids)
        result: pipb.SteerCallResult | None = None
        try:
            async with asyncio.timeout_at(deadline):
                async with self._slots:
                    stream = self._pick()
                    left_ms = max(1, int((deadline - loop.time()) * 1000))
                    result = await stream.submit(
                        pipb.SteerCall(
                            id=call_id,
                            token=on_behalf_of.get(),
                            request=request,
                            timeout_ms=left_ms,
                        )
                    )
        except TimeoutError:
            raise DeadlineExceededError("Deadline Exceeded", reason="deadline_exceeded") from None
        finally:
            if result is None and stream is not None:
                stream.forget(call_id)  # given up (deadline, the socket went): drop a late reply
        if result.HasField("error"):
            e = result.error
            raise from_status(e.code, e.message, e.reason, e.status)
        return result.reply
