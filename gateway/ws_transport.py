"""The WebSocket protocol uvicorn runs for the gateway's sockets: uvicorn's own (websockets'
sans-I/O implementation, what `ws="auto"` picks) with a few changes for a relay that sends many
small frames (issue 28: a streamed answer is several `chat-message-stream-chunk` frames of a few
hundred bytes each, and a turn about ten frames in all):

- **One write per loop turn.** uvicorn writes every message to the socket at once, one `send`
  system call each; here a message is queued in websockets' protocol and the socket is written
  once the event loop has run what is ready (one callback for all sockets), or at once when
  the event feed has handed the socket its events of a message (`write_queued`), so the frames
  of one `FollowSessions` message leave in one write per socket.
  Order is kept: every write, ours or uvicorn's (pongs, the close), takes the protocol's
  pending bytes in the order they were queued. A socket whose writes are paused (a slow
  client) goes uvicorn's way, which waits until it drains.
- **Compression only where it pays.** permessage-deflate is still negotiated with every client
  that offers it (browsers and the `websockets` client always do), with uvicorn's settings, but
  a message under `COMPRESS_MIN_BYTES` goes out uncompressed, as RFC 7692 allows message by
  message (its RSV1 bit unset): deflating a 300-byte frame saves ~100 bytes for ~10 µs of CPU,
  ~4% of the gateway's CPU at a model's pace. Larger messages (a chat's history, a long
  answer's final `chat-message-appended`) are compressed as before.
- **No deflate state between messages.** The response asks for no context takeover in both
  directions (`server_no_context_takeover`, `client_no_context_takeover`; RFC 7692 §7.1.1 lets a
  server ask for both even when the client did not offer them), so each compressed message is
  compressed and decompressed on its own and a socket keeps no zlib state between messages:
  with context takeover, a socket held a decompressor (~7 KB, plus its 4 KB window from the
  client's first message on) for its whole life, and a compressor (~40 KB) from its first large
  message on; most of the gateway's memory per open socket. A fresh zlib object per compressed
  message costs no measurable CPU (it is a few µs next to the message's own compression); what
  is lost is the previous messages as a dictionary, which matters little for messages of 1 KiB
  or more and not at all for a client's small frames.
- **A direct send for pushed events.** The socket's scope carries `DIRECT_SEND`, the protocol's
  own queueing of a text message (`send_text_now`): gateway/connection.py sends pushed event
  frames through it, past starlette's `WebSocket.send`, the ASGI wrappers and the socket's send
  lock, about a third of a pushed frame's cost in the gateway (py-spy at realpace200). It takes
  the fast path of `send` only and says False otherwise (not yet accepted, closing, a slow
  client's paused writes), and the caller goes the ASGI way. A pushed frame sent this way has no
  OpenTelemetry "websocket send" span (with tracing on). A message that is not compressed is
  framed here (a two- or four-byte header before the text), not by websockets' `Frame`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from uvicorn._types import ASGISendEvent
from uvicorn.config import Config
from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.exceptions import InvalidState
from websockets.extensions.base import Extension
from websockets.extensions.permessage_deflate import (
    PerMessageDeflate,
    ServerPerMessageDeflateFactory,
)
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.typing import ExtensionParameter

logger = logging.getLogger(__name__)

# Messages of this size or more are compressed (when the client negotiated permessage-deflate).
COMPRESS_MIN_BYTES = 1024
# The scope extension under which a socket's `send_text_now` is found.
DIRECT_SEND = "vance.direct_send"


def _text_header(length: int) -> bytes:
    """RFC 6455 §5.2: FIN and the text opcode, then the unmasked payload length (7 bits, or
    126 and 16 bits; longer messages are compressed, so they never come here)."""
    if length < 126:
        return bytes((0x81, length))
    return b"\x81\x7e" + length.to_bytes(2, "big")


class ThresholdDeflate(PerMessageDeflate):
    """permessage-deflate that leaves a whole message under COMPRESS_MIN_BYTES uncompressed.
    With no context takeover (negotiated both ways, below) websockets makes a compressor or a
    decompressor per compressed message and drops it at the message's end."""

    def encode(self, frame: Frame) -> Frame:
        if frame.opcode is Opcode.TEXT or frame.opcode is Opcode.BINARY:
            if frame.fin and len(frame.data) < COMPRESS_MIN_BYTES:
                return frame  # a whole small message: sent as it is
        return super().encode(frame)


class ThresholdDeflateFactory(ServerPerMessageDeflateFactory):
    """Negotiates as websockets' factory does; the extension it hands out is ThresholdDeflate."""

    def process_request_params(
        self, params: Sequence[ExtensionParameter], accepted_extensions: Sequence[Extension]
    ) -> tuple[list[ExtensionParameter], PerMessageDeflate]:
        response, ext = super().process_request_params(params, accepted_extensions)
        return response, ThresholdDeflate(
            ext.remote_no_context_takeover,
            ext.local_no_context_takeover,
            ext.remote_max_window_bits,
            ext.local_max_window_bits,
            ext.compress_settings,
        )


class GatewayWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's protocol with the deflate threshold and one write per loop turn."""

    def __init__(
        self, config: Config, server_state: ServerState, app_state: dict[str, Any], **kw: Any
    ) -> None:
        super().__init__(config, server_state, app_state, **kw)
        if config.ws_per_message_deflate:
            # uvicorn's own settings (websockets_sansio_impl.py), with the threshold.
            self.conn.available_extensions = [
                ThresholdDeflateFactory(
                    server_no_context_takeover=True,
                    client_no_context_takeover=True,
                    server_max_window_bits=12,
                    client_max_window_bits=12,
                    compress_settings={"memLevel": 5},
                )
            ]
        self._flush_due = False

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope: Any = getattr(self, "scope", None)  # made by uvicorn's handle_connect
        if scope is not None:
            scope.setdefault("extensions", {})[DIRECT_SEND] = self.send_text_now

    def _can_queue(self) -> bool:
        return (
            self.handshake_complete
            and not self.close_sent
            and not self.disconnected
            and self.initial_response is None
            and self.writable.is_set()
        )

    def send_text_now(self, text: str) -> bool:
        """Queues a text message as `send` does on its fast path; False when that path is
        closed (the caller then sends through ASGI, which waits or raises as it should)."""
        if not self._can_queue():
            return False
        data = text.encode()
        conn = self.conn
        if len(data) < COMPRESS_MIN_BYTES and conn.state is State.OPEN:
            if conn.expect_continuation_frame:
                return False  # never: this server does not fragment; websockets' way raises
            # The bytes websockets' `send_text` queues for it: a server frame is not masked
            # and a message this small is not compressed (ThresholdDeflate), so the frame is
            # a header and the text. Built here it costs about a seventh of going through
            # `Frame` and `serialize` (its checks, the extensions' pass, a BytesIO).
            conn.writes.append(_text_header(len(data)) + data)
        else:
            try:
                conn.send_text(data)
            except InvalidState:
                return False
        self._flush_soon()
        return True

    async def send(self, message: ASGISendEvent) -> None:
        if message["type"] == "websocket.send" and self._can_queue():
            try:
                data = message.get("bytes")
                text = message.get("text")
                if data is not None:
                    self.conn.send_binary(data)
                elif text is not None:
                    self.conn.send_text(text.encode())
            except InvalidState as exc:
                raise ClientDisconnected() from exc
            self._flush_soon()
            return
        await super().send(message)  # writes what is queued before its own message
        if message["type"] == "websocket.accept" and self.handshake_complete:
            # The handshake's request and response stay referenced for the socket's life
            # (uvicorn's attributes; websockets' parser keeps the request in its frame) with
            # their headers, ~4 KB; past the accept nothing reads them again (the ASGI scope
            # has its own copy of the request's headers).
            self.request.headers.clear()
            del self.request, self.response

    def _flush_soon(self) -> None:
        if not self._flush_due:
            self._flush_due = True
            _due_writes(self.loop).add(self)

    def _flush(self) -> None:
        self._flush_due = False
        if self.disconnected or self.transport.is_closing():
            return  # the socket went meanwhile: nothing can be written (uvloop would raise)
        output = self.conn.data_to_send()
        if output:
            self.transport.write(b"".join(output))


class _DueWrites:
    """The sockets of one event loop with frames queued and not yet written: written by one
    callback once the loop has run what is ready, or at once by `write_queued`."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._sockets: list[GatewayWebSocketProtocol] = []
        self._scheduled = False

    def add(self, socket: GatewayWebSocketProtocol) -> None:
        self._sockets.append(socket)
        if not self._scheduled:
            self._scheduled = True
            self.loop.call_soon(self.write)

    def write(self) -> None:
        self._scheduled = False
        sockets, self._sockets = self._sockets, []
        for socket in sockets:
            try:
                socket._flush()
            except Exception:  # one socket's failure must not keep the others' frames back
                logger.exception("writing a socket's queued frames failed")


_due: _DueWrites | None = None


def _due_writes(loop: asyncio.AbstractEventLoop) -> _DueWrites:
    global _due
    if _due is None or _due.loop is not loop:
        _due = _DueWrites(loop)
    return _due


def write_queued() -> None:
    """Writes every socket's queued frames now. The event feed (gateway/event_feed.py) calls it
    once it has handed a socket its events of a message: they leave at once, not after the
    message's other sockets' frames were rendered nor after whatever else the loop has ready
    (under load, at realpace200, those waits were the gateway's share of a chunk's lag: p50
    9-19 ms, p99 ~40 ms), and still in one write per socket per message."""
    if _due is not None:
        _due.write()
