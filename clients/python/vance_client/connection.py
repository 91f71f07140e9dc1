"""`Connection`: the socket under `VanceClient`, and what keeps it alive across drops.

It owns a WebSocket (reopened with backoff when it drops), remembers the bound session and the
highest `seq` seen per session, and on a new socket binds again with `session-resume{sinceSeq}`
(docs/protocol.md "Resume and replay"): every event reaches `events()` once, in seq order, however
often the link drops. Requests are typed (vance_client/requests.py); a failed one raises
`VanceError`. Everything it runs lives in its own TaskGroup: `async with VanceClient(...)`."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Self, TypeVar

import websockets
from websockets.asyncio.client import ClientConnection

from vance_client import requests as rq
from vance_client.errors import FATAL_CLOSE_CODES, ConnectionLost, VanceError
from vance_client.frames import ErrorFrame, Frame, Welcome, parse_frame
from vance_client.rest import Rest, ws_url

logger = logging.getLogger(__name__)

R = TypeVar("R")
_ids = itertools.count(1)


@dataclass(frozen=True)
class Link:
    """A change of the connection itself (not a server frame), yielded by `events()` in order
    with the frames: `connected` (with the session bound again, if one was), `reconnecting`
    (the socket dropped; `reason` says why), `binding` (a session is being bound: the frames
    after it are that session's; `reason` is its id when known), `unbound` (it could not be
    bound again after a reconnect), `closed` (for good: logout, a refused token)."""

    state: str
    reason: str = ""
    attempt: int = 0


Event = Frame | Link


@dataclass
class _Pending:
    future: asyncio.Future[dict[str, Any]]
    # Runs in the reader as the reply arrives, before any later frame is read: binding
    # replies name the session the frames after them belong to.
    on_reply: Callable[[dict[str, Any]], None] | None = None


class Connection:
    """A reconnecting socket of one tenant's gateway for one token; `VanceClient` adds a
    method per frame."""

    def __init__(
        self,
        url: str,
        tenant: str,
        token: str,
        *,
        profile: str = "",
        reconnect: bool = True,
        request_timeout: float = 30.0,
        max_backoff: float = 2.0,
    ) -> None:
        self.url = ws_url(url, tenant)
        self.tenant = tenant
        self.profile = profile
        self.reconnect = reconnect
        self.request_timeout = request_timeout
        self.max_backoff = max_backoff
        self.rest = Rest(url, tenant, token, profile=profile)
        self.welcome: Welcome | None = None
        self.session_id: str | None = None  # the bound (or monitored) session
        self.opened: rq.SessionOpened | None = None
        self._token = token
        self._monitor = False
        self._seqs: dict[str, int] = {}  # session id -> highest seq delivered
        self._ws: ClientConnection | None = None
        self._pending: dict[str, _Pending] = {}
        self._unawaited: set[str] = set()  # ids of frames sent with send(): replies dropped
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._ready = asyncio.Event()  # a socket is open and its session bound again
        self._closed = False
        self._stack = contextlib.AsyncExitStack()
        self._runner: asyncio.Task[None] | None = None
        self._first: asyncio.Future[None] | None = None
        self._welcomed = asyncio.Event()  # the current socket's `welcome` arrived

    async def __aenter__(self) -> Self:
        self._first = asyncio.get_running_loop().create_future()
        tasks = await self._stack.enter_async_context(asyncio.TaskGroup())
        self._runner = tasks.create_task(self._run())
        try:
            await self._first  # the first socket opened (or why it could not)
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closed = True
        if self._ws is not None:
            await self._ws.close()
        self._ready.set()  # wake requests waiting for a socket: they fail as closed
        if self._runner is not None:
            self._runner.cancel()
        await self._stack.aclose()
        await self.rest.aclose()

    def last_seq(self, session_id: str | None = None) -> int:
        """The highest seq delivered for a session (default: the bound one)."""
        sid = session_id or self.session_id
        return self._seqs.get(sid, 0) if sid else 0

    async def events(self) -> AsyncIterator[Event]:
        """Pushed frames (typed, see vance_client/frames.py) and `Link` changes, each once."""
        while True:
            event = await self._events.get()
            yield event
            if isinstance(event, Link) and event.state == "closed":
                return

    async def next_event(self, timeout: float | None = None) -> Event:
        return await asyncio.wait_for(self._events.get(), timeout)

    async def request(self, req: rq.Request[R], *, timeout: float | None = None) -> R:
        """Sends one client frame and returns its typed reply; an `error` frame raises."""
        return await self._request(req, timeout=timeout)

    async def send(self, req: rq.Out) -> None:
        """Sends a frame without waiting for a reply (a reply that comes is dropped; an error
        comes through `events()` as an `ErrorFrame`)."""
        async with asyncio.timeout(self.request_timeout):
            await self._ready.wait()
        if self._ws is None or self._closed:
            raise VanceError(499, "closed", "the client is closed")
        fid = f"c{next(_ids)}"
        self._unawaited.add(fid)
        try:
            await self._ws.send(json.dumps({"id": fid, "type": req.TYPE, "data": req.wire()}))
        except websockets.ConnectionClosed as exc:
            raise ConnectionLost() from exc

    async def _bind(self, req: rq.Request[rq.SessionOpened], *, monitor: bool) -> rq.SessionOpened:
        # Leave the bound session first, so no frame of it can arrive once the new binding's
        # frames start: the gateway stops a socket's pump before it answers session-unbind.
        if self.session_id is not None:
            await self._request(rq.SessionUnbind())
            self.session_id, self.opened = None, None

        def bound(data: dict[str, Any]) -> None:
            opened = req.reply(data)
            provisional = self._seqs.pop("", 0)
            if opened.session_id not in self._seqs:
                self._seqs[opened.session_id] = provisional
            self.session_id, self.opened, self._monitor = opened.session_id, opened, monitor

        # Frames of a new session may come before the reply: count them under "" until the
        # reply names the session (a resumed one is named in the request).
        name = getattr(req, "session_id", None)
        self.session_id = name if isinstance(name, str) else ""
        self.opened = None
        self._seqs.pop("", None)
        # In the event stream before any frame of the new binding, so a reader can mark
        # where one session's events end and the next one's begin.
        await self._emit(Link("binding", reason=self.session_id))
        try:
            return await self._request(req, on_reply=bound)
        except BaseException:
            if self.opened is None:  # refused (or cut off): nothing is bound
                self.session_id = None
            raise

    async def _request(
        self,
        req: rq.Request[R],
        *,
        timeout: float | None = None,
        on_reply: Callable[[dict[str, Any]], None] | None = None,
        wait_ready: bool = True,
    ) -> R:
        timeout = self.request_timeout if timeout is None else timeout
        async with asyncio.timeout(timeout):
            if wait_ready:
                await self._ready.wait()
            ws = self._ws
            if (self._closed and not isinstance(req, rq.Logout)) or ws is None:
                raise VanceError(499, "closed", "the client is closed")
            fid = f"c{next(_ids)}"
            future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self._pending[fid] = _Pending(future, on_reply)
            try:
                await ws.send(json.dumps({"id": fid, "type": req.TYPE, "data": req.wire()}))
                reply = await future
            except websockets.ConnectionClosed as exc:
                raise ConnectionLost() from exc
            finally:
                self._pending.pop(fid, None)
        if reply.get("type") == "error":
            err = ErrorFrame.model_validate(reply).data
            raise VanceError(err.error_code, err.reason, err.error_message, field=err.field)
        return req.reply(reply.get("data") or {})

    async def _run(self) -> None:
        """Opens sockets until closed: a drop reconnects with backoff and binds again."""
        attempt = 0
        while not self._closed:
            try:
                ws = await websockets.connect(self.url, **self._connect_options())
            except (OSError, websockets.InvalidHandshake, TimeoutError) as exc:
                if self._first is not None and not self._first.done():
                    # A gateway never reached is a wrong URL or a stopped system: say so
                    # rather than retry; only a link that worked once is reopened.
                    self._first.set_exception(VanceError(503, "unavailable", str(exc)))
                    return
                attempt += 1
                await self._emit(Link("reconnecting", reason=str(exc), attempt=attempt))
                await asyncio.sleep(min(self.max_backoff, 0.1 * 2**attempt))
                continue
            code, reason = await self._serve(ws)
            self._ready.clear()
            self._fail_pending()
            if self._closed or code in FATAL_CLOSE_CODES or not self.reconnect:
                self._closed = True
                self._ready.set()
                error = VanceError(code or 1000, reason or "closed", "the connection closed")
                if self._first is not None and not self._first.done():
                    self._first.set_exception(error)
                await self._emit(Link("closed", reason=reason or "closed"))
                return
            if code == 4409:  # the bind was taken or the session ended: do not take it back
                self.session_id, self.opened = None, None
            attempt = 1
            await self._emit(Link("reconnecting", reason=reason or f"closed ({code})", attempt=1))

    def _connect_options(self) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self._token}"}
        if self.profile:
            headers["X-Vance-Profile"] = self.profile
        return {"additional_headers": headers, "max_size": None, "open_timeout": 10}

    async def _serve(self, ws: ClientConnection) -> tuple[int, str]:
        """One socket: read it while binding the session again; ends when it closes."""
        self._ws = ws
        self._welcomed.clear()
        async with asyncio.TaskGroup() as tg:
            reader = tg.create_task(self._read(ws))
            rebinding = tg.create_task(self._rebind())
            await reader
            rebinding.cancel()
        self._ws = None
        return ws.close_code or 1006, ws.close_reason or ""

    async def _rebind(self) -> None:
        try:
            await asyncio.wait_for(self._welcomed.wait(), self.request_timeout)
            sid = self.session_id
            if sid:
                since = self._seqs.get(sid, 0)
                req: rq.Request[rq.SessionOpened] = (
                    rq.SessionMonitor(session_id=sid, since_seq=since)
                    if self._monitor
                    else rq.SessionResume(session_id=sid, since_seq=since, takeover=True)
                )
                try:
                    self.opened = await self._request(req, wait_ready=False)
                except VanceError as exc:  # closed, archived...: the client stays, unbound
                    self.session_id, self.opened = None, None
                    await self._emit(Link("unbound", reason=exc.reason))
        except (ConnectionLost, TimeoutError):
            return  # the socket dropped again; _run tries anew
        self._ready.set()
        if self._first is not None and not self._first.done():
            self._first.set_result(None)
        await self._emit(Link("connected", reason=self.session_id or ""))
        interval = self.welcome.data.server.ping_interval if self.welcome else 30
        while True:  # the protocol asks clients to ping on their own schedule
            await asyncio.sleep(max(1, interval))
            with contextlib.suppress(VanceError, TimeoutError):
                await self._request(rq.Ping(), wait_ready=False)

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                try:
                    obj = json.loads(raw)
                except (TypeError, ValueError):
                    logger.warning("dropping a frame that is not JSON")
                    continue
                if isinstance(obj, dict):
                    await self._handle(obj)
        except websockets.ConnectionClosed:
            pass

    async def _handle(self, obj: dict[str, Any]) -> None:
        reply_to = obj.get("replyTo")
        pending = self._pending.get(reply_to) if isinstance(reply_to, str) else None
        if pending is not None:
            if obj.get("type") != "error" and pending.on_reply is not None:
                pending.on_reply(obj.get("data") or {})
            if not pending.future.done():
                pending.future.set_result(obj)
            return
        if isinstance(reply_to, str) and reply_to in self._unawaited:
            self._unawaited.discard(reply_to)
            if obj.get("type") != "error":
                return
        frame = parse_frame(obj)
        if isinstance(frame, Welcome):
            self.welcome = frame
            self._welcomed.set()
            return
        if frame.seq is not None:
            sid = self.session_id if self.session_id is not None else ""
            if frame.seq <= self._seqs.get(sid, 0):
                return  # replayed twice (a resume from an older seq): shown once already
            self._seqs[sid] = frame.seq
            frame._session_id = sid or None
        await self._emit(frame)

    def _fail_pending(self) -> None:
        for p in list(self._pending.values()):
            if not p.future.done():
                p.future.set_exception(ConnectionLost())
        self._pending.clear()

    async def _emit(self, event: Event) -> None:
        await self._events.put(event)
