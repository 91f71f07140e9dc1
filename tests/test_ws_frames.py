"""The gateway's frames on the wire (gateway/frames.py, gateway/ws_transport.py): a chunk frame
put together from its process's shared parts reads exactly as the frame it stands for, and a
client that negotiates permessage-deflate gets large messages compressed and small ones plain,
and reads both."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from typing import Any

import websockets
from websockets.extensions.base import Extension
from websockets.extensions.permessage_deflate import (
    ClientPerMessageDeflateFactory,
    PerMessageDeflate,
)
from websockets.frames import Frame, Opcode
from websockets.typing import ExtensionParameter

from gateway.frames import encode_frame, event_frame, event_text
from gateway.ws_transport import COMPRESS_MIN_BYTES
from tests.harness import System, WsClient
from vance.protoutil import dict_to_struct
from vance.v1 import common_pb2 as pb


def _events() -> list[pb.SessionEvent]:
    chunk = pb.SessionEvent(seq=7, session_id="s1")
    chunk.stream_chunk.think_process_id = "tp_1"
    chunk.stream_chunk.process_name = 'chat "main" ü'
    chunk.stream_chunk.role = pb.CHAT_ROLE_ASSISTANT
    chunk.stream_chunk.chunk = 'Hello\n "wörld" </script>\t\\ 😀'
    appended = pb.SessionEvent(seq=8, session_id="s1")
    m = appended.chat_message_appended
    m.id, m.think_process_id, m.process_name, m.content = "cm_1", "tp_1", "chat", "Hi ü"
    m.role, m.created_at_ms = pb.CHAT_ROLE_USER, 1_700_000_000_000
    m.meta.CopyFrom(dict_to_struct({"askId": "a1", "n": 2}))
    status = pb.SessionEvent(seq=9, session_id="s1")
    s = status.process_status_changed
    s.think_process_id, s.process_name, s.engine = "tp_1", "chat", "arthur"
    s.from_status, s.to_status = pb.PROCESS_STATUS_RUNNING, pb.PROCESS_STATUS_CLOSED
    s.close_reason = pb.CLOSE_REASON_STALE
    s.close_detail = 'turn failed 3 times: "overloaded" ü'
    return [chunk, appended, status]


def test_an_event_s_text_is_its_frame_encoded() -> None:
    for event in _events():
        text = event_text(event)
        sent, built = json.loads(text), event_frame(event)
        assert sent.pop("id").startswith("f_")
        built.pop("id")
        assert sent == built
        assert list(json.loads(text)) == ["id", "replyTo", "type", "data", "seq"]
        # The same text as the generic encoder's, ids aside.
        assert json.loads(encode_frame(event_frame(event))) | {"id": ""} == sent | {"id": ""}


def test_what_the_fast_encoder_refuses_is_still_sent() -> None:
    # A client's `ping` may echo any JSON number: one past 64 bits still goes back whole.
    assert json.loads(encode_frame({"clientTimestamp": 10**30})) == {"clientTimestamp": 10**30}


class _Recording(PerMessageDeflate):
    """Notes, for every data frame read, whether it came compressed (RSV1) and its size."""

    seen: list[tuple[bool, int]]

    def decode(self, frame: Frame, *, max_size: int | None = None) -> Frame:
        if frame.opcode in (Opcode.TEXT, Opcode.BINARY):
            self.seen.append((frame.rsv1, len(frame.data)))
        return super().decode(frame, max_size=max_size)


class _RecordingFactory(ClientPerMessageDeflateFactory):
    def __init__(self) -> None:
        super().__init__(client_max_window_bits=True)
        self.seen: list[tuple[bool, int]] = []
        self.negotiated: PerMessageDeflate | None = None

    def process_response_params(
        self, params: Sequence[ExtensionParameter], accepted_extensions: Sequence[Extension]
    ) -> PerMessageDeflate:
        ext = super().process_response_params(params, accepted_extensions)
        recording = _Recording(
            ext.remote_no_context_takeover,
            ext.local_no_context_takeover,
            ext.remote_max_window_bits,
            ext.local_max_window_bits,
            ext.compress_settings,
        )
        recording.seen = self.seen
        self.negotiated = recording
        return recording


async def _connect(system: System, **kw: Any) -> WsClient:
    ws = await websockets.connect(
        f"ws://{system.gateway}/brain/default/ws",
        additional_headers={"Authorization": f"Bearer {await system.login()}"},
        max_size=None,
        **kw,
    )
    return await WsClient(ws).start()


async def _echo(client: WsClient, mark: str) -> dict[str, Any]:  # JSON: the frame as read
    """The model's echo of the question carrying `mark` (the scripted model echoes it)."""
    return await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and mark in f["data"]["content"][:40]
            and f["data"]["role"] == "assistant"
        ),
        timeout=30,
        what="the echo",
    )


async def test_large_messages_come_compressed_small_ones_plain(system: System) -> None:
    factory = _RecordingFactory()
    client = await _connect(system, compression=None, extensions=[factory])
    # No context takeover either way, though the client did not ask: the gateway keeps no
    # deflate state for a socket between its messages.
    assert factory.negotiated is not None
    assert factory.negotiated.local_no_context_takeover
    assert factory.negotiated.remote_no_context_takeover
    await client.ok("session-create", {"projectId": "demo"})
    for _ in range(2):  # each compressed message stands alone, in both directions
        m = uuid.uuid4().hex[:8]
        # A question well over the threshold, and the model's echo of it: both large messages.
        content = f"big {m}" + " the same words again and again" * 80
        await client.ok("process-steer", {"processName": "chat", "content": content})
        echo = await _echo(client, m)
        assert echo["data"]["content"] == f"You said: {content}"  # read whole through deflate
    compressed = [size for rsv1, size in factory.seen if rsv1]
    plain = [size for rsv1, size in factory.seen if not rsv1]
    # The questions and their echoes, compressed well below their size; welcome, replies and
    # the status frames plain, all under the threshold.
    assert len(compressed) >= 4, factory.seen
    assert all(size < len(content) / 4 for size in compressed), compressed
    assert len(plain) >= 4, factory.seen
    assert all(size < COMPRESS_MIN_BYTES for size in plain), plain
    # Every frame the client read was parsed (none lost between plain and compressed ones).
    assert len(client.frames) == len(factory.seen)
    await client.close()


async def test_a_client_without_compression_reads_the_same_frames(system: System) -> None:
    client = await _connect(system, compression=None)
    await client.ok("session-create", {"projectId": "demo"})
    m = uuid.uuid4().hex[:8]
    content = f"plain {m} " + "x" * (2 * COMPRESS_MIN_BYTES)
    await client.ok("process-steer", {"processName": "chat", "content": content})
    echo = await _echo(client, m)
    assert echo["data"]["content"] == f"You said: {content}"
    seqs = [f["seq"] for f in client.frames if "seq" in f]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
    await client.close()


async def test_a_client_that_stops_reading_gets_every_frame_in_order_later(
    system: System,
) -> None:
    """Megabytes of replies to a client that reads nothing for a while: the gateway's writes
    pause (the socket's buffers are full) and resume, and nothing is lost or reordered."""
    ws = await websockets.connect(
        f"ws://{system.gateway}/brain/default/ws",
        additional_headers={"Authorization": f"Bearer {await system.login()}"},
        max_size=None,
        max_queue=2,  # the client stops reading its socket after two unread messages
        compression=None,
    )
    count, size = 40, 200_000  # 8 MB of pongs: well past what the sockets buffer

    async def pings() -> None:
        for i in range(count):
            stamp = f"{i:04d}" + "p" * size
            await ws.send(
                json.dumps({"id": f"p{i}", "type": "ping", "data": {"clientTimestamp": stamp}})
            )

    sender = asyncio.create_task(pings())
    try:
        welcome = json.loads(await asyncio.wait_for(ws.recv(), 30))
        assert welcome["type"] == "welcome"
        for i in range(count):
            pong = json.loads(await asyncio.wait_for(ws.recv(), 60))
            assert pong["type"] == "pong" and pong["replyTo"] == f"p{i}", pong["replyTo"]
            assert pong["data"]["clientTimestamp"] == f"{i:04d}" + "p" * size
        await asyncio.wait_for(sender, 30)
        # The socket still works both ways afterwards.
        await ws.send(json.dumps({"id": "last", "type": "ping", "data": {"clientTimestamp": 1}}))
        last = json.loads(await asyncio.wait_for(ws.recv(), 30))
        assert last["replyTo"] == "last"
    finally:
        sender.cancel()
        await ws.close()
