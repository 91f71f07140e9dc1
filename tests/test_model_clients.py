"""The two model clients (vance/llm.py, vance/llm_http.py) against the scripted
OpenAI-compatible server: litellm and the direct path give the same replies, tool calls, usage
and errors, and `llm.client` decides which one a model goes through. The system's engine turns
run through the direct path (the tests' model is `openai/scripted`);
session_service's suggestions through litellm. Streams the scripted server would never send
(too long a line, bad JSON, a chunk of the wrong shape, a cut connection) come from a raw
loopback server here: each is a ModelCallError, never another exception."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from vance.config import LlmConfig, load_config
from vance.llm import (
    LiteLLMClient,
    ModelCallError,
    ModelClient,
    ModelReply,
    OpenAIClient,
    RoutingClient,
    make_model_client,
    uses_direct_client,
    uses_litellm,
)
from vance.llm_http import UNREACHABLE
from vance.llm_limits import LimitedClient
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm

TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "process_create",
        "description": "spawn a worker",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}


def _config(llm: ThreadedScriptedLlm) -> LlmConfig:
    return LlmConfig(model="openai/scripted", api_base=llm.base_url, api_key="k", timeout_s=30)


def _clients(config: LlmConfig) -> list[ModelClient]:
    return [LiteLLMClient(config), OpenAIClient(config)]


async def _call(
    client: ModelClient,
    content: str,
    *,
    sync: bool = False,
    stream_args: dict[str, str] | None = None,
) -> tuple[ModelReply, list[str]]:
    """One call; its chunks through an async sink, or (`sync`) a synchronous one as the
    worker's EventPublisher.chunk is."""
    chunks: list[str] = []

    async def sink(text: str) -> None:
        chunks.append(text)

    reply = await client.complete(
        tier="default:chat",
        messages=[{"role": "user", "content": content}],
        tools=[TOOL],
        on_chunk=chunks.append if sync else sink,
        stream_args=stream_args,
    )
    return reply, chunks


async def test_both_clients_give_the_same_reply_tool_calls_and_usage(
    llm: ThreadedScriptedLlm,
) -> None:
    m = f"m-{uuid.uuid4().hex[:10]}"
    llm.script.add(
        Rule(
            match=m,
            text="two tools and a few words",
            tool_calls=[
                {"name": "process_create", "arguments": {"name": "a"}},
                {"name": "process_create", "arguments": {"name": "b"}},
            ],
            repeat=True,
        )
    )
    config = _config(llm)
    via_litellm = await _call(LiteLLMClient(config), m)
    http = OpenAIClient(config)
    direct = await _call(http, m)
    await http.aclose()
    assert direct == via_litellm
    # The same request reached the server: model, messages, tools, streaming with usage.
    sent = [r for r in llm.script.requests if m in str(r.get("messages"))][-2:]
    fields = ("model", "messages", "tools", "stream", "stream_options")
    assert [{k: r.get(k) for k in fields} for r in sent] == [
        {k: sent[0].get(k) for k in fields}
    ] * 2
    assert sent[0]["model"] == "scripted" and sent[0]["tools"] == [TOOL]
    reply, chunks = direct
    assert reply.text == "two tools and a few words" == "".join(chunks)
    assert len(chunks) == 3  # streamed as the server sent it
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("process_create", {"name": "a"}),
        ("process_create", {"name": "b"}),
    ]
    assert reply.finish_reason == "tool_calls"
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    assert reply.usage.completion_tokens > 0


async def test_both_clients_raise_the_same_error_for_a_failed_call(
    llm: ThreadedScriptedLlm,
) -> None:
    m = f"m-{uuid.uuid4().hex[:10]}"
    llm.script.add(Rule(match=m, fail_status=400, repeat=True))
    config = _config(llm)
    errors = []
    for client in _clients(config):
        with pytest.raises(ModelCallError) as info:
            await _call(client, m)
        await client.aclose()
        errors.append((info.value.status_code, info.value.detail))
    assert [status for status, _ in errors] == [400, 400]
    assert all("scripted failure" in detail for _, detail in errors)


async def test_an_unreachable_endpoint_is_the_same_error_from_both() -> None:
    config = LlmConfig(
        model="openai/scripted", api_base="http://127.0.0.1:9/v1", api_key="k", timeout_s=5
    )
    for client in _clients(config):
        with pytest.raises(ModelCallError) as info:
            await _call(client, "hello")
        await client.aclose()
        assert info.value.status_code == 0


def test_the_client_setting_picks_the_path_per_model() -> None:
    auto = load_config(env={"VANCE_LLM_MODEL": "openai/gpt-4o-mini"}).llm
    limited = make_model_client(auto)
    assert isinstance(limited, LimitedClient)  # the provider's limits in front of every path
    routed = limited.inner
    assert isinstance(routed, RoutingClient)
    assert isinstance(routed.client_for("default:chat"), OpenAIClient)
    assert uses_direct_client(auto) and not uses_litellm(auto)
    other = load_config(env={"VANCE_LLM_MODEL": "anthropic/claude-3-5-haiku"}).llm
    assert isinstance(RoutingClient(other).client_for("default:chat"), LiteLLMClient)
    assert uses_litellm(other) and not uses_direct_client(other)
    forced = load_config(
        env={"VANCE_LLM_MODEL": "openai/gpt-4o-mini", "VANCE_LLM_CLIENT": "litellm"}
    ).llm
    forced_client = make_model_client(forced)
    assert isinstance(forced_client, LimitedClient)
    assert isinstance(forced_client.inner, LiteLLMClient)
    assert uses_litellm(forced) and not uses_direct_client(forced)


def _sse(*events: str) -> bytes:
    return "".join(f"data: {e}\n\n" for e in events).encode()


_GOOD = '{"choices": [{"index": 0, "delta": {"content": "fine so far"}}]}'
# What the raw server sends after its headers, and whether it closes before the stream's end.
BROKEN_STREAMS: dict[str, tuple[bytes, bool]] = {
    "a line longer than any buffer": (b"data: " + b"x" * 300_000 + b"\n\n", False),
    "an event that is not JSON": (_sse(_GOOD, "{not json"), False),
    "choices of the wrong shape": (_sse(_GOOD, '{"choices": "none"}'), False),
    "a delta of the wrong shape": (_sse('{"choices": [{"delta": ["x"]}]}'), False),
    "a tool call of the wrong shape": (
        _sse('{"choices": [{"delta": {"tool_calls": ["x"]}}]}'),
        False,
    ),
    "a bad tool call index": (
        _sse('{"choices": [{"delta": {"tool_calls": [{"index": "first"}]}}]}'),
        False,
    ),
    "a connection cut mid-stream": (_sse(_GOOD) + b"data: {", True),
    "an error event": (_sse('{"error": {"message": "overloaded"}}'), False),
}


@pytest.fixture
async def raw_server() -> AsyncIterator[tuple[str, dict[str, bytes | bool | int]]]:
    """An OpenAI-compatible endpoint on loopback that answers 200 and then `body`."""
    answer: dict[str, bytes | bool | int] = {
        "body": b"",
        "cut": False,
        "piece": 0,
        "stall": False,
    }

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        await reader.readexactly(length)
        body = answer["body"]
        assert isinstance(body, bytes)
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        if answer["cut"]:
            # A length it never delivers: the client sees the connection end early.
            head += f"Content-Length: {len(body) + 100}\r\n\r\n".encode()
        else:
            head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        piece = answer["piece"]
        assert isinstance(piece, int)
        if answer.get("stall"):
            # The head and the body, then nothing more until the client hangs up.
            writer.write(head.replace(b"Content-Length", b"X-Ignored") + body)
            await writer.drain()
            await reader.read()
        elif not piece:
            writer.write(head + body)
        else:
            # A few bytes per write, each sent before the next: the client reads the events
            # in as many pieces as the socket delivers them.
            writer.write(head)
            for at in range(0, len(body), piece):
                writer.write(body[at : at + piece])
                await writer.drain()
                await asyncio.sleep(0)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1", answer
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("case", sorted(BROKEN_STREAMS))
async def test_every_unreadable_stream_is_a_model_call_error(
    case: str, raw_server: tuple[str, dict[str, bytes | bool | int]]
) -> None:
    base_url, answer = raw_server
    answer["body"], answer["cut"] = BROKEN_STREAMS[case]
    client = OpenAIClient(LlmConfig(model="openai/x", api_base=base_url, timeout_s=30))
    try:
        with pytest.raises(ModelCallError) as info:
            await _call(client, "hello")
    finally:
        await client.aclose()
    assert info.value.status_code == 0
    if case == "an error event":
        assert info.value.detail == "overloaded"


async def test_events_split_anywhere_with_crlf_comments_and_data_lines_read_whole(
    raw_server: tuple[str, dict[str, bytes | bool | int]],
) -> None:
    """The stream is split by hand (vance/llm_http.py `_read`): CR LF line ends, comments, an
    event's data over two lines and an event cut between any two reads give the reply the
    events say."""
    base_url, answer = raw_server
    answer["body"] = (
        b": keep-alive\r\n\r\n"
        b'data: {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}\r\n\r\n'
        b'data: {"choices": [{"index": 0,\r\ndata: "delta": {"content": "lo"}}]}\r\n\r\n'
        b"event: ignored\n"
        b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
        b'data: {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, '
        b'"total_tokens": 5}}\r\n\r\n'
        b"data: [DONE]\r\n\r\n"
    )
    config = LlmConfig(model="openai/x", api_base=base_url, timeout_s=30)
    for piece in (1, 3, 7, 0):
        answer["piece"] = piece
        for sync in (False, True):
            # A synchronous sink through the limits' wrapper, as a worker's turn streams.
            client: ModelClient = LimitedClient(OpenAIClient(config), config)
            try:
                reply, chunks = await _call(client, "hello", sync=sync)
            finally:
                await client.aclose()
            assert (reply.text, chunks, reply.finish_reason) == ("Hello", ["Hel", "lo"], "stop")
            assert reply.usage.total_tokens == 5


async def test_a_stream_that_stalls_fails_after_the_calls_timeout(
    raw_server: tuple[str, dict[str, bytes | bool | int]],
) -> None:
    """`llm.timeout_s` bounds the whole call (one asyncio.timeout around it, vance/llm_http.py):
    a provider that begins its answer and then sends nothing more fails the call as one that
    timed out, after about that long, not never."""
    base_url, answer = raw_server
    answer["body"], answer["stall"] = _sse(_GOOD), True
    client = OpenAIClient(LlmConfig(model="openai/x", api_base=base_url, timeout_s=0.5))
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        with pytest.raises(ModelCallError) as info:
            await _call(client, "hello")
    finally:
        await client.aclose()
    assert (info.value.status_code, info.value.detail) == (0, UNREACHABLE)
    assert 0.4 <= loop.time() - started < 10


def _respond_delta(arguments: str, *, first: bool = False) -> str:
    call: dict[str, object] = {"index": 0, "function": {"arguments": arguments}}
    if first:
        call["id"] = "call_1"
        call["function"] = {"name": "respond", "arguments": arguments}
    return json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})


async def test_a_streamed_message_goes_out_per_event_when_a_read_holds_many(
    raw_server: tuple[str, dict[str, bytes | bool | int]],
) -> None:
    """The events of one socket read are handled in one pass (vance/llm_http.py `_read`): a
    `respond` message written over several events still reaches the sink piece by piece, in
    order, from a synchronous sink as from an async one, and the arguments parse whole."""
    base_url, answer = raw_server
    answer["body"] = _sse(
        _respond_delta('{"message": "Hel', first=True),
        _respond_delta('lo, \\"wor'),
        _respond_delta('ld\\"", "awaiting_user_input": false}'),
        '{"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}',
        "[DONE]",
    )
    config = LlmConfig(model="openai/x", api_base=base_url, timeout_s=30)
    for piece in (0, 5):  # the whole stream in one read; then a few bytes per read
        answer["piece"] = piece
        for sync in (False, True):
            client: ModelClient = LimitedClient(OpenAIClient(config), config)
            try:
                reply, chunks = await _call(
                    client, "hello", sync=sync, stream_args={"respond": "message"}
                )
            finally:
                await client.aclose()
            assert "".join(chunks) == 'Hello, "world"'
            if piece == 0:
                assert chunks == ["Hel", 'lo, "wor', 'ld"']
            assert reply.tool_calls[0].arguments == {
                "message": 'Hello, "world"',
                "awaiting_user_input": False,
            }
            assert reply.finish_reason == "tool_calls"
