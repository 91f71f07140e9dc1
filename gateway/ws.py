"""One client WebSocket: frames in, gRPC calls out, the bound session's events pushed back."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from fastapi import WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from gateway import binding
from gateway.auth import Principal
from gateway.clients import Clients
from gateway.frames import Envelope, error_frame, event_frame, frame
from gateway.handlers import HANDLERS, FrameError
from gateway.replica import GOING_AWAY, Replica
from vance import PROTOCOL_VERSION, __version__
from vance.errors import http_status_for, reason_of
from vance.ids import new_id

logger = logging.getLogger(__name__)

_RESUBSCRIBE_BACKOFF_S = 0.2


class Connection:
    """State of one socket: who is connected, which session it is bound to, the event pump."""

    def __init__(
        self,
        ws: WebSocket,
        principal: Principal,
        clients: Clients,
        *,
        profile: str,
        ping_interval_s: int,
        replica: Replica | None = None,
    ) -> None:
        self.ws = ws
        self.replica = replica
        self.principal = principal
        self.clients = clients
        self.profile = profile
        self.ping_interval_s = ping_interval_s
        self.session_id = ""
        self.chat_process_id = ""
        self.last_seq = 0
        # The editor id of seed 002 §8: what the session's bind holds.
        self.connection_id = new_id("conn")
        self.monitor = False  # watches without binding (session-monitor)
        self.close_after_reply: tuple[int, str] | None = None
        self.closed = False
        self._send_lock = asyncio.Lock()
        self._pump: asyncio.Task[None] | None = None

    async def send(self, data: dict[str, Any]) -> None:
        async with self._send_lock:
            await self.ws.send_text(json.dumps(data, separators=(",", ":")))

    async def bind(
        self, session_id: str, chat_process_id: str, since_seq: int, *, monitor: bool = False
    ) -> None:
        """Follows a session's events from since_seq on (the bind itself is session_service's,
        taken by gateway/binding.py before this)."""
        await self.unbind()
        self.monitor = monitor
        self.session_id = session_id
        self.chat_process_id = chat_process_id
        self.last_seq = since_seq
        self._pump = asyncio.ensure_future(self._pump_events(session_id))

    async def unbind(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            try:
                await self._pump
            except (asyncio.CancelledError, Exception):
                pass
        self._pump = None
        self.session_id = ""
        self.chat_process_id = ""

    async def _pump_events(self, session_id: str) -> None:
        """Follows the session's event stream; after a broken stream (process_service restart)
        it resubscribes from the last seq it delivered, so the client misses nothing."""
        from vance.v1 import process_pb2 as ppb

        while True:
            try:
                call = self.clients.processes.SubscribeSession(
                    ppb.SubscribeSessionRequest(session_id=session_id, since_seq=self.last_seq)
                )
                async for event in call:
                    if event.seq <= self.last_seq:
                        continue
                    await self.send(event_frame(event))
                    self.last_seq = event.seq
            except grpc.aio.AioRpcError as exc:
                logger.info(
                    "event stream of %s broke (%s); resubscribing", session_id, exc.code().name
                )
            await asyncio.sleep(_RESUBSCRIBE_BACKOFF_S)

    async def welcome(self) -> None:
        await self.send(
            frame(
                "welcome",
                {
                    "userId": self.principal.username,
                    "tenantId": self.principal.tenant_id,
                    "editorId": self.connection_id,
                    "profile": self.profile,
                    "server": {
                        "version": __version__,
                        "protocolVersion": PROTOCOL_VERSION,
                        "pingInterval": self.ping_interval_s,
                    },
                },
            )
        )

    async def run(self) -> None:
        await self.welcome()
        going_away = False
        if self.replica is not None:
            self.replica.add(self)
        try:
            while not self.closed:
                raw = await self.ws.receive_text()
                await self._handle(raw)
        except WebSocketDisconnect as exc:
            going_away = exc.code == GOING_AWAY and self.replica is not None
        finally:
            if self.replica is not None:
                self.replica.remove(self, going_away=going_away)
            if not going_away:
                # The client left: onDisconnect applies. A stopping replica instead keeps the
                # bind and suspends the session FORCED (gateway/replica.py).
                await binding.release(self, disconnect=True)
            await self.unbind()

    async def _handle(self, raw: str) -> None:
        try:
            env = Envelope.model_validate(json.loads(raw))
        except (json.JSONDecodeError, ValidationError) as exc:
            await self.send(error_frame(400, f"not a frame: {exc}", "bad_frame", reply_to=None))
            return
        # Every inbound frame renews the bind (seed 002 §8.3); a lost bind ends the connection.
        lost = await binding.heartbeat(self)
        if lost:
            await self.send(
                error_frame(
                    binding.lost_code(lost),
                    "this connection lost the session's bind",
                    lost,
                    reply_to=env.id,
                )
            )
            self.session_id = ""  # nothing to release: the bind is someone else's
            self.closed = True
            await self.ws.close(code=binding.CLOSE_BIND_LOST, reason=lost)
            return
        if env.type == "ping":
            await self.send(
                frame(
                    "pong",
                    {
                        "clientTimestamp": env.data.get("clientTimestamp"),
                        "serverTimestamp": int(time.time() * 1000),
                    },
                    reply_to=env.id,
                )
            )
            return
        handler: Callable[[Connection, dict[str, Any]], Awaitable[dict[str, Any]]] | None = (
            HANDLERS.get(env.type)
        )
        if handler is None:
            await self.send(
                error_frame(
                    400, f"unknown frame type {env.type!r}", "unknown_frame", reply_to=env.id
                )
            )
            return
        try:
            reply = await handler(self, env.data)
        except FrameError as exc:
            await self.send(error_frame(exc.code, exc.message, exc.reason, reply_to=env.id))
            return
        except grpc.aio.AioRpcError as exc:
            await self.send(
                error_frame(
                    http_status_for(exc.code()),
                    exc.details() or "",
                    reason_of(exc),
                    reply_to=env.id,
                )
            )
            return
        await self.send(frame(env.type, reply, reply_to=env.id))
        if self.close_after_reply is not None:
            self.closed = True
            await self.ws.close(code=self.close_after_reply[0], reason=self.close_after_reply[1])
