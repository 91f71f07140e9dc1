"""A lean WebSocket client for the gateway: frames are matched against registered waiters as
they arrive and stamped with their arrival time, so latencies do not include scheduling of the
waiting coroutine and no frame list grows without bound.

It is a load generator on the machine under test (hundreds of clients in the bench's process, whose
CPU the servers then lack; bench/realpace.py reports it per turn), so a frame costs little here:
the connection hands each text message to the client as the protocol decodes it (no reader task
woken per frame, no queue), orjson parses it from the bytes, and a waiter's predicate runs only
on frames of the type it waits for."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame as WsFrame
from websockets.frames import Opcode
from websockets.protocol import Event

from bench.errors import BenchError

Frame = dict[str, Any]
Pred = Callable[[Frame], bool]
Arrival = tuple[Frame, float]  # the frame and time.perf_counter() when it was read


CHUNK = "chat-message-stream-chunk"


class FramePred:
    """A predicate on frames of one type: the reader skips it for frames of any other."""

    def __init__(self, frame_type: str, test: Callable[[dict[str, Any]], bool]) -> None:
        self.frame_type = frame_type
        self._test = test  # on the frame's data

    def __call__(self, f: Frame) -> bool:
        return f.get("type") == self.frame_type and self._test(f.get("data") or {})


@dataclass(eq=False)
class Waiter:
    pred: Pred
    what: str
    future: asyncio.Future[Arrival] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    frame_type: str | None = None  # when set, only frames of this type can match

    def __post_init__(self) -> None:
        if isinstance(self.pred, FramePred):
            self.frame_type = self.pred.frame_type


class _Connection(ClientConnection):
    """Hands each text message to `on_text` with its arrival time as the protocol decodes it,
    instead of queueing it for a reader task to take (a task wake and the queue's work per
    frame). Messages before `on_text` is set (the welcome may come with the handshake) wait in
    `early`."""

    on_text: Callable[[bytes, float], None] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.early: list[tuple[bytes, float]] = []
        self._parts: list[bytes] = []  # a fragmented text message so far

    def process_event(self, event: Event) -> None:
        if (
            self.response is None
            or not isinstance(event, WsFrame)
            or event.opcode not in (Opcode.TEXT, Opcode.CONT)
        ):
            super().process_event(event)
            return
        self._parts.append(bytes(event.data))
        if not event.fin:
            return
        data = self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)
        self._parts = []
        at = time.perf_counter()
        if self.on_text is None:
            self.early.append((data, at))
        else:
            self.on_text(data, at)


class Client:
    def __init__(self, ws: _Connection, name: str) -> None:
        self.ws = ws
        self.name = name
        self.frames = 0
        self.chunk_frames = 0  # chat-message-stream-chunk frames read so far
        self._ids = itertools.count(1)
        self._waiters: list[Waiter] = []
        self._reader: asyncio.Task[None] | None = None
        self._closed_because = ""

    @classmethod
    async def connect(cls, url: str, token: str, name: str, timeout_s: float) -> Client:
        try:
            ws = await connect(
                url,
                additional_headers={"Authorization": f"Bearer {token}"},
                max_size=None,
                open_timeout=timeout_s,
                ping_interval=None,
                create_connection=_Connection,
            )
        except (OSError, TimeoutError, ConnectionClosed) as exc:
            raise BenchError(f"{name}: cannot open the WebSocket {url}: {exc!r}") from exc
        assert isinstance(ws, _Connection)
        client = cls(ws, name)
        welcome = client.expect(lambda f: f.get("type") == "welcome", "welcome")
        for data, at in ws.early:
            client._on_text(data, at)
        ws.early.clear()
        ws.on_text = client._on_text
        client._reader = asyncio.create_task(client._watch())
        await client.wait(welcome, timeout_s)
        return client

    def expect(self, pred: Pred, what: str) -> Waiter:
        """Registers interest in the next frame matching pred: call before sending."""
        if self._closed_because:
            raise BenchError(f"{self.name}: socket closed ({self._closed_because})")
        waiter = Waiter(pred, what)
        self._waiters.append(waiter)
        return waiter

    def forget(self, waiter: Waiter) -> None:
        if waiter in self._waiters:
            self._waiters.remove(waiter)
        if not waiter.future.done():
            waiter.future.cancel()

    async def wait(self, waiter: Waiter, timeout_s: float) -> Arrival:
        try:
            async with asyncio.timeout(timeout_s):
                return await waiter.future
        except TimeoutError:
            raise BenchError(
                f"{self.name}: no {waiter.what} frame within {timeout_s:.0f}s"
            ) from None
        finally:
            self.forget(waiter)

    def new_id(self) -> str:
        return f"{self.name}-{next(self._ids)}"

    async def send(self, fid: str, type_: str, data: dict[str, Any]) -> None:
        try:
            await self.ws.send(orjson.dumps({"id": fid, "type": type_, "data": data}).decode())
        except ConnectionClosed as exc:
            raise BenchError(f"{self.name}: socket closed while sending {type_}: {exc}") from exc

    def expect_reply(self, fid: str, type_: str) -> Waiter:
        return self.expect(lambda f: f.get("replyTo") == fid, f"reply to {type_}")

    async def request(self, type_: str, data: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        fid = self.new_id()
        waiter = self.expect_reply(fid, type_)
        await self.send(fid, type_, data)
        frame, _ = await self.wait(waiter, timeout_s)
        return reply_data(self.name, type_, frame)

    def _on_text(self, data: bytes, at: float) -> None:
        try:
            frame = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            self._fail(f"a frame that is not JSON: {exc}")
            return
        self.frames += 1
        kind = frame.get("type")
        if kind == CHUNK:
            self.chunk_frames += 1
        for waiter in list(self._waiters):
            if waiter.frame_type is not None and waiter.frame_type != kind:
                continue
            if not waiter.future.done() and waiter.pred(frame):
                waiter.future.set_result((frame, at))
                self._waiters.remove(waiter)

    async def _watch(self) -> None:
        """Waits for the socket's close; then every waiter fails with the reason."""
        await self.ws.wait_closed()
        exc = self.ws.protocol.close_exc
        self._fail(f"connection closed: {exc}" if exc else "closed by the server")

    def _fail(self, because: str) -> None:
        self._closed_because = self._closed_because or because
        for waiter in self._waiters:
            if not waiter.future.done():
                waiter.future.set_exception(
                    BenchError(
                        f"{self.name}: socket closed while waiting for "
                        f"{waiter.what} ({self._closed_because})"
                    )
                )
        self._waiters.clear()

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.ws.close(), 5)
        except (TimeoutError, ConnectionClosed, OSError):
            pass
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)


def reply_data(who: str, type_: str, frame: Frame) -> dict[str, Any]:
    """The data of a reply frame; an error frame becomes a BenchError naming its reason."""
    if frame.get("type") == "error":
        data = frame.get("data") or {}
        raise BenchError(
            f"{who}: {type_} failed: {data.get('errorCode')} {data.get('reason')}: "
            f"{data.get('errorMessage')}"
        )
    if frame.get("type") != type_:
        raise BenchError(f"{who}: unexpected reply to {type_}: {frame}")
    return dict(frame.get("data") or {})


def status_is(process_id: str, status: str) -> Pred:
    """A STATUS process-progress frame moving the process to status."""
    return FramePred(
        "process-progress",
        lambda d: (
            d.get("kind") == "STATUS"
            and d.get("status") == status
            and d.get("processId") == process_id
        ),
    )


def status_of_name(name: str, status: str) -> Pred:
    return FramePred(
        "process-progress",
        lambda d: (
            d.get("kind") == "STATUS" and d.get("status") == status and d.get("processName") == name
        ),
    )


def assistant_says(process_id: str, content: str) -> Pred:
    return FramePred(
        "chat-message-appended",
        lambda d: (
            d.get("role") == "assistant"
            and d.get("thinkProcessId") == process_id
            and d.get("content") == content
        ),
    )


def first_chunk(process_id: str) -> Pred:
    return FramePred(
        CHUNK, lambda d: bool(d.get("thinkProcessId") == process_id and d.get("chunk"))
    )
