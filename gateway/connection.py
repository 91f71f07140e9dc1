"""One client socket's state: who is connected, which session it follows, the event pump.

The frame loop and the dispatch live in gateway/ws.py and gateway/dispatch.py; this module
imports neither, so handlers can take a `Connection` without an import cycle."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fastapi import WebSocket, WebSocketDisconnect

from gateway.auth import Principal
from gateway.clients import Clients
from gateway.frames import encode_frame, event_text, frame
from gateway.session_events import MergedEvents
from gateway.ws_transport import DIRECT_SEND
from vance import PROTOCOL_VERSION, __version__
from vance.ids import new_id
from vance.observability import tracing
from vance.v1 import common_pb2 as pb

if TYPE_CHECKING:
    from gateway.bind_rounds import BindRounds
    from gateway.client_tools import ClientToolHub

logger = logging.getLogger(__name__)


class Connection:
    """State of one socket. Its event pump runs in the socket's TaskGroup (`tasks`), so it
    never outlives the socket."""

    def __init__(
        self,
        ws: WebSocket,
        principal: Principal,
        clients: Clients,
        tasks: asyncio.TaskGroup,
        *,
        profile: str,
        ping_interval_s: int,
        bind_lease_ms: int,
        bind_rounds: BindRounds | None = None,
        revoke: Callable[[Principal], Awaitable[None]],
    ) -> None:
        self.ws = ws
        self.principal = principal
        self.clients = clients
        self.tasks = tasks
        self.profile = profile
        self.ping_interval_s = ping_interval_s
        self.bind_lease_ms = bind_lease_ms
        # Until when (time.monotonic()) the bind is trusted without a heartbeat (binding.py).
        self.bind_trusted_until = 0.0
        self.bind_used = False  # a frame went on under the lease since it was granted
        # When (time.monotonic()) a bind round last dropped this bind (gateway/bind_rounds.py):
        # a heartbeat sent before then does not restore the trust.
        self.bind_dropped_at = 0.0
        # The replica's bind rounds: a lease is trusted only while they hold theirs.
        self.bind_rounds = bind_rounds
        self.revoke_token = revoke  # logout revokes the token this socket logged in with
        self.session_id = ""
        self.chat_process_id = ""
        self.last_seq = 0
        # The editor id of seed 002 §8: what the session's bind holds.
        self.connection_id = new_id("conn")
        self.monitor = False  # watches without binding (session-monitor)
        # The session whose processes are pruned by this socket's profile instead of the
        # session's own (gateway/connection_profile.py); reset when the bind is released.
        self.profile_override = ""
        self.close_after_reply: tuple[int, str] | None = None
        self.closed = False
        self._send_lock = asyncio.Lock()
        # The protocol's direct send (gateway/ws_transport.py), for pushed events.
        self._direct: Callable[[str], bool] | None = ws.scope.get("extensions", {}).get(DIRECT_SEND)
        self._reply_direct = None if tracing.enabled() else self._direct
        self._pump: asyncio.Task[None] | None = None
        # The tools this socket's client hosts (gateway/client_tools.py); they belong to the
        # bound session, so leaving it drops them.
        self.client_tools: ClientToolHub | None = None

    async def send(self, data: dict[str, Any]) -> None:
        await self.send_text(encode_frame(data))

    async def send_text(self, text: str) -> None:
        """A frame already encoded (gateway/frames.py): a reply goes the direct way too when
        it can (`push_text`), except with tracing on, where the ASGI way gives it its
        "websocket send" span."""
        direct = self._reply_direct
        if direct is not None and not self._send_lock.locked() and direct(text):
            return
        async with self._send_lock:
            await self.ws.send_text(text)

    async def push_text(self, text: str) -> None:
        """A pushed event's frame: queued on the socket directly when it can take it now and
        no other send is under way (which keeps frames in the order they were sent), else as
        `send_text`."""
        direct = self._direct
        if direct is not None and not self._send_lock.locked() and direct(text):
            return
        await self.send_text(text)

    async def close(self, code: int, reason: str) -> None:
        self.closed = True
        await self.ws.close(code=code, reason=reason)

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
        self._pump = self.tasks.create_task(self._pump_events(session_id))

    async def unbind(self) -> None:
        if self.client_tools is not None:
            await self.client_tools.drop(self)
        pump, self._pump = self._pump, None
        if pump is not None:
            pump.cancel()
            # The pump ends only by cancellation or a gone client (both handled inside it).
            await asyncio.gather(pump, return_exceptions=True)
        self.session_id = ""
        self.chat_process_id = ""
        self.bind_trusted_until = 0.0
        self.bind_used = False

    async def _pump_events(self, session_id: str) -> None:
        """Follows the session's events on the gateway's event feed (gateway/event_feed.py,
        which resumes from the last seq received after a broken stream, so the client misses
        nothing). With several process_service replicas it follows each and merges them
        (session_events.py)."""
        try:
            if self.clients.event_feed is None:
                await self._follow_replicas(session_id)  # until cancelled or the client left
                return
            follow = self.clients.event_feed.follow(
                session_id, self.last_seq, self._deliver_now if self._direct else None
            )
            try:
                while True:
                    for event in await follow.next():
                        await self._relay(session_id, event)
            finally:
                follow.close()
        except (WebSocketDisconnect, RuntimeError) as exc:
            # The client is gone (starlette raises RuntimeError once the socket is closed);
            # the frame loop sees the disconnect too and releases the bind.
            logger.debug("event pump of %s stopped: %s", session_id, exc)
        except Exception:
            # A bug here must not take the socket's TaskGroup (and so the socket) down with it:
            # the client keeps its socket and can resume from its last seq.
            logger.exception("event pump of %s failed", session_id)

    async def _follow_replicas(self, session_id: str) -> None:
        async def relay(event: pb.SessionEvent) -> None:
            await self._relay(session_id, event)

        merged = MergedEvents(
            self.clients.process_replicas,
            session_id,
            delivered=lambda: self.last_seq,
            relay=relay,
            gap_fill_s=self.clients.event_gap_fill_s,
        )
        await merged.run()

    def _deliver_now(self, event: pb.SessionEvent) -> bool:
        """The event feed's `Deliver` (gateway/event_feed.py): the event's frame queued on the
        socket directly when it can take it now and no other send is under way; False leaves
        it (and what follows it) to the pump."""
        if event.seq <= self.last_seq:
            return True
        direct = self._direct
        if direct is None or self._send_lock.locked() or self.closed:
            return False
        try:
            rendered = event_text(event)
        except ValueError as exc:  # a kind this gateway does not know yet
            logger.warning("event %s of %s skipped: %s", event.seq, self.session_id, exc)
        except Exception:
            # Called by the feed's reader, which serves every socket: the pump meets it again
            # and handles it as any failure of its own.
            return False
        else:
            if not direct(rendered):
                return False
        self.last_seq = event.seq
        return True

    async def _relay(self, session_id: str, event: pb.SessionEvent) -> None:
        if event.seq <= self.last_seq:
            return
        try:
            rendered = event_text(event)
        except ValueError as exc:  # a kind this gateway does not know yet
            logger.warning("event %s of %s skipped: %s", event.seq, session_id, exc)
        else:
            await self.push_text(rendered)
        self.last_seq = event.seq

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
