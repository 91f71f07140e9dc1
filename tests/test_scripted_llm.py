"""The scripted model's streams: events byte for byte as `json.dumps` writes them, at the pace
the rule asks, held until released (the server alone, over real HTTP on loopback)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from tests.harness import eventually
from vance.testing.scripted_llm import Rule, ScriptedLlmServer


async def _stream(port: int, body: dict[str, Any]) -> tuple[bytes, list[tuple[float, bytes]]]:
    """The response head and each `data:` event with the time it was read (s after the send)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data = json.dumps(body).encode()
    writer.write(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%b" % (len(data), data)
    )
    t0 = time.monotonic()
    head = await reader.readuntil(b"\r\n\r\n")
    events: list[tuple[float, bytes]] = []
    while True:
        size = int((await reader.readline()).strip(), 16)
        chunk = await reader.readexactly(size + 2)
        if not size:
            break
        events.append((time.monotonic() - t0, chunk[:-2]))
    writer.close()
    return head, events


def _payloads(events: list[tuple[float, bytes]]) -> list[dict[str, Any]]:
    out = []
    for _, event in events:
        assert event.startswith(b"data: ") and event.endswith(b"\n\n"), event
        text = event[6:-2].decode()
        if text != "[DONE]":
            payload = json.loads(text)
            # Byte for byte what json.dumps of the payload gives, as litellm-era clients saw.
            assert text == json.dumps(payload)
            out.append(payload)
    return out


async def test_a_paced_tool_call_streams_its_arguments_in_pieces_at_the_rule_pace() -> None:
    server = ScriptedLlmServer()
    await server.start()
    try:
        server.script.add(
            Rule(
                tool_calls=[{"name": "respond", "arguments": {"message": 'Grüße, "du"!'}}],
                ttft_ms=200,
                stream_ms=300,
                arg_chunks=4,
            )
        )
        body = {
            "model": "m",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "hi"}],
        }
        head, events = await _stream(server.port, body)
    finally:
        await server.stop()
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"Transfer-Encoding: chunked" in head
    payloads = _payloads(events)
    assert events[-1][1] == b"data: [DONE]\n\n"
    assert payloads[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert payloads[1]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "respond"
    args = "".join(
        p["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] for p in payloads[1:5]
    )
    assert json.loads(args) == {"message": 'Grüße, "du"!'}
    assert payloads[5]["choices"][0]["finish_reason"] == "tool_calls"
    assert payloads[6]["choices"] == [] and payloads[6]["usage"]["total_tokens"] > 0
    # The role at once, the first piece after ttft_ms, the last stream_ms after the first
    # (loaded machines read late, never early).
    times = [t for t, _ in events]
    assert times[0] < 0.15
    assert times[1] >= 0.2 and times[4] - times[1] >= 0.29
    assert times[4] < 5.0


async def test_a_held_stream_waits_for_its_release() -> None:
    server = ScriptedLlmServer()
    await server.start()
    try:
        server.script.add(Rule(text="abcdef", chunks=3, hold="h", hold_after=1))
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
        task = asyncio.create_task(_stream(server.port, body))
        await eventually(lambda: server.script.in_flight == 1, what="the held stream")
        assert server.script.in_flight == 1 and not task.done()
        server.gate("h").set()
        _, events = await asyncio.wait_for(task, 10)
    finally:
        await server.stop()
    text = "".join(p["choices"][0]["delta"].get("content", "") for p in _payloads(events))
    assert text == "abcdef"
