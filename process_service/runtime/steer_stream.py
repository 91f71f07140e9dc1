"""The server side of `SteerStream`: a gateway's steers on one stream (gateway/steer_stream.py).

A unary `Steer` costs grpc.aio a call of its own on each end (about 0.4 ms of CPU here and
0.3 ms in the gateway, against about 0.2 ms each for a message on an open stream; issue 28).
On the stream each call is what the unary call was: its user's token verified and Steer's rule
checked (vance/authz.py `Admission`, the auth interceptor's own checks), the same servicer code,
counted in Steer's RED series, and its failure sent as the status the unary call would have
ended with (vance/errors.py `as_error`, `status_details`).

Calls run concurrently, each in a task of the stream's TaskGroup; their results are written as
they finish, everything finished while the previous message was being written in one message.
Bounds: at most `MAX_IN_FLIGHT` calls of a stream run at once; past that the stream is not read
until one finishes, so gRPC's flow control holds a fast gateway back instead of memory growing
here. When the gateway goes away (or the stream breaks), the calls still running are cancelled,
as unary calls whose caller went away are."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from vance.auth import Identity, current_identity
from vance.authz import Admission
from vance.errors import DeadlineExceededError, as_error, status_details
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.observability import logcontext
from vance.rpc_calls import observe
from vance.v1 import process_pb2 as ppb

STEER = "/vance.v1.ProcessService/Steer"  # the method whose rule and metrics a call takes
MAX_IN_FLIGHT = 512  # calls of one stream running at once

Steer = Callable[[ppb.SteerRequest], Awaitable[ppb.SteerResponse]]


class _Outbox:
    """Results not yet written, and the writer's one waiter."""

    def __init__(self) -> None:
        self.results: list[pipb.SteerCallResult] = []
        self.closed = False
        self._waiter: asyncio.Future[None] | None = None

    def put(self, result: pipb.SteerCallResult) -> None:
        self.results.append(result)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def take(self) -> list[pipb.SteerCallResult]:
        """What is there (at least one result), waiting for some; [] once closed and empty."""
        while not self.results and not self.closed:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        out, self.results = self.results, []
        return out


class SteerCalls:
    """Serves SteerStream calls with the servicer's `steer` (what the unary Steer runs)."""

    def __init__(self, admission: Admission, steer: Steer, *, max_in_flight: int = MAX_IN_FLIGHT):
        self._admission = admission
        self._steer = steer
        self._max_in_flight = max_in_flight

    async def serve(
        self,
        requests: AsyncIterator[pipb.SteerStreamRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        caller = current_identity.get()  # the stream's own (a service: the method is theirs)
        out = _Outbox()
        slots = asyncio.Semaphore(self._max_in_flight)
        running: set[asyncio.Task[None]] = set()
        async with asyncio.TaskGroup() as tasks:
            writer = tasks.create_task(_write(out, context))
            async for request in requests:
                for call in request.calls:
                    await slots.acquire()  # full: stop reading (flow control, module doc)
                    task = tasks.create_task(self._call(call, caller, out, slots))
                    running.add(task)
                    task.add_done_callback(running.discard)
            # The gateway closed its side: answer what runs, then end the stream.
            if running:
                await asyncio.wait(list(running))
            out.close()
            await writer

    async def _call(
        self,
        call: pipb.SteerCall,
        caller: Identity | None,
        out: _Outbox,
        slots: asyncio.Semaphore,
    ) -> None:
        try:
            out.put(await self._run(call, caller))
        finally:
            slots.release()

    async def _run(self, call: pipb.SteerCall, caller: Identity | None) -> pipb.SteerCallResult:
        start = time.perf_counter()
        admitted = False
        timeout = asyncio.timeout(call.timeout_ms / 1000 if call.timeout_ms else None)
        try:
            async with timeout:
                if call.token:
                    await self._admission.admit(STEER, call.token, call.request)
                else:
                    current_identity.set(caller)
                    logcontext.from_request(call.request)
                admitted = True
                reply = await self._steer(call.request)
        except Exception as exc:
            if isinstance(exc, TimeoutError) and timeout.expired():
                # The unary call's deadline ends it the same way (DEADLINE_EXCEEDED at the
                # caller); the gateway stopped waiting for this one already.
                exc = DeadlineExceededError("Deadline Exceeded", reason="deadline_exceeded")
            error = as_error(exc)
            if admitted:
                observe(STEER, start, error.code)
            return pipb.SteerCallResult(
                id=call.id,
                error=pipb.CallError(
                    code=error.code.value[0],
                    message=error.message,
                    reason=error.reason,
                    status=status_details(error.code, error),
                ),
            )
        observe(STEER, start, None)
        return pipb.SteerCallResult(id=call.id, reply=reply)


async def _write(out: _Outbox, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    """Every result finished while the last message was written goes in the next one."""
    while results := await out.take():
        await context.write(pipb.SteerStreamReply(results=results))
