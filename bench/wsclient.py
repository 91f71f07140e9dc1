"""A lean WebSocket client for the gateway: frames are matched against registered waiters as
they arrive and stamped with their arrival time, so latencies do not include scheduling of the
waiting coroutine and no frame list grows without bound."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from bench.errors import BenchError

Frame = dict[str, Any]
Pred = Callable[[Frame], bool]
Arrival = tuple[Frame, float]  # the frame and time.perf_counter() when it was read


@dataclass(eq=False)
class Waiter:
    pred: Pred
    what: str
    future: asyncio.Future[Arrival] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Client:
    def __init__(self, ws: ClientConnection, name: str) -> None:
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
            )
        except (OSError, TimeoutError, ConnectionClosed) as exc:
            raise BenchError(f"{name}: cannot open the WebSocket {url}: {exc!r}") from exc
        client = cls(ws, name)
        welcome = client.expect(lambda f: f.get("type") == "welcome", "welcome")
        client._reader = asyncio.create_task(client._read())
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
            return await asyncio.wait_for(waiter.future, timeout_s)
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
            await self.ws.send(json.dumps({"id": fid, "type": type_, "data": data}))
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

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                at = time.perf_counter()
                frame = json.loads(raw)
                self.frames += 1
                if frame.get("type") == "chat-message-stream-chunk":
                    self.chunk_frames += 1
                for waiter in list(self._waiters):
                    if not waiter.future.done() and waiter.pred(frame):
                        waiter.future.set_result((frame, at))
                        self._waiters.remove(waiter)
            self._closed_because = "closed by the server"
        except ConnectionClosed as exc:
            self._closed_because = f"connection closed: {exc}"
        except Exception as exc:  # reported to every waiter
            self._closed_because = f"reader failed: {exc!r}"
        finally:
            self._closed_because = self._closed_because or "reader stopped"
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

    def pred(f: Frame) -> bool:
        if f.get("type") != "process-progress":
            return False
        d = f.get("data") or {}
        return bool(
            d.get("kind") == "STATUS"
            and d.get("status") == status
            and d.get("processId") == process_id
        )

    return pred


def status_of_name(name: str, status: str) -> Pred:
    def pred(f: Frame) -> bool:
        if f.get("type") != "process-progress":
            return False
        d = f.get("data") or {}
        return bool(
            d.get("kind") == "STATUS" and d.get("status") == status and d.get("processName") == name
        )

    return pred


def assistant_says(process_id: str, content: str) -> Pred:
    def pred(f: Frame) -> bool:
        if f.get("type") != "chat-message-appended":
            return False
        d = f.get("data") or {}
        return bool(
            d.get("role") == "assistant"
            and d.get("thinkProcessId") == process_id
            and d.get("content") == content
        )

    return pred


def first_chunk(process_id: str) -> Pred:
    def pred(f: Frame) -> bool:
        if f.get("type") != "chat-message-stream-chunk":
            return False
        d = f.get("data") or {}
        return bool(d.get("thinkProcessId") == process_id and d.get("chunk"))

    return pred
