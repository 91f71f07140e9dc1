"""The direct path to an OpenAI-compatible endpoint: the chat-completions request the openai SDK
would send, over keep-alive connections of the client's own (vance/llm_wire.py, vance/llm_pool.py), and the
server-sent events read as they come into a ReplyBuilder (vance/llm_core.py). The SDK builds a
typed model per chunk; reading the JSON itself is what brings a streamed call from about 3.4 ms
of CPU to under 0.5 ms (measured against the scripted server, 200 calls in one process);
splitting the events by hand and decoding them with orjson (about a sixth of json.loads' time on
a chunk) cuts what each event costs by about a third (issue 28).

Why a small asyncio Protocol with httptools (llhttp) and not aiohttp, which carried these calls
until session 19: a call in flight over aiohttp held its ClientResponse, StreamReader, timer
contexts, connection and reading task, 16-21 KiB of RSS and about 125 pymalloc blocks per call
(100 to 300 calls held at the scripted model's time to first token, uvloop, one process); over the
Protocol 6-10 KiB and about 55 blocks, of which the uvloop transport and the parser are the
connection's. And each piece of a streamed answer went through aiohttp's parser callbacks into
its StreamReader and woke the reading task; here the parser hands the body to `_Events.feed`
inside data_received, so a synchronous sink (the worker's) costs no wake-up between the
answer's head and its end: with the worker's EventPublisher as the sink a call streamed in 8
pieces costs 0.39-0.42 ms of CPU against 0.77-0.83 over aiohttp, a piece about 35 us against
60 (bench/model_calls.py cpu --worker-sink, 2,000 calls, 100 at once; docs/performance.md
"Model clients").
tests/test_model_clients.py holds this path to the same replies, tool calls, usage and errors
as litellm, and shows every way a stream can fail to read (too long a line, bad JSON, a chunk of
the wrong shape, a cut connection) as a ModelCallError; tests/test_llm_wire.py the
connections' keep-alive, bound, retry and TLS."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from typing import Any

import orjson

from vance.config import LlmConfig
from vance.llm_core import (
    OPENAI_PREFIX,
    PURPOSE_HEADER,
    ChunkSink,
    ModelCallError,
    ModelReply,
    ReplyBuilder,
    StreamedArgs,
    resolve_model,
    retry_after,
)
from vance.llm_pool import Pool
from vance.llm_wire import ErrorAnswer, Origin, Unreachable, request_head
from vance.observability.metrics import timed_model_call
from vance.observability.tracing import model_span

OPENAI_API = "https://api.openai.com/v1"
UNREACHABLE = "the model endpoint could not be reached or timed out"
USER_AGENT = "vancetope"
_PATH = "/chat/completions"
_DONE = b"[DONE]"


class OpenAIClient:
    """For `openai/<model>` (the prefix is litellm's provider name and is not sent), at
    `api_base` when set, else OpenAI's API."""

    def __init__(self, config: LlmConfig, *, purpose: str = "") -> None:
        self._config = config
        headers = {"User-Agent": USER_AGENT, "Content-Type": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        if purpose:
            headers[PURPOSE_HEADER] = purpose
        self._unusable: ValueError | None = None
        try:
            self._origin = Origin((config.api_base or OPENAI_API).rstrip("/") + _PATH)
            # No Accept-Encoding: a compressed event stream costs a decompression per read.
            self._head = request_head(self._origin, headers)
        except ValueError as exc:
            # A bad api_base (or a key with a line break) fails each call as unreachable, as
            # aiohttp's invalid URL did, not the client's making (inside a call's routing).
            self._origin, self._head, self._unusable = Origin(OPENAI_API + _PATH), b"", exc
        self._pool: Pool | None = None
        self._tools = _ToolsJson()

    def _connections(self) -> Pool:
        # Made on first use: its connections belong to the event loop that runs the calls.
        if self._pool is None:
            # As many connections as turns may wait on the provider (LlmConfig).
            self._pool = Pool(self._origin, self._config.max_connections)
        return self._pool

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None

    async def complete(
        self,
        *,
        tier: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_chunk: ChunkSink | None = None,
        temperature: float | None = None,
        stream_args: StreamedArgs | None = None,
    ) -> ModelReply:
        model = resolve_model(self._config, tier)
        if self._unusable is not None:
            raise ModelCallError(0, UNREACHABLE) from self._unusable
        with model_span(model, tier), timed_model_call(model, tier):
            events = _Events(ReplyBuilder(on_chunk, stream_args))
            try:
                async with asyncio.timeout(self._config.timeout_s):
                    # The request is made in the call's argument, and the pool empties the
                    # list once the answer begins, so nothing holds the body while the answer
                    # streams (a turn in flight holds its call for seconds at a hosted model's
                    # pace, issue 28).
                    await self._connections().call(
                        self._request(model, messages, tools, temperature), events
                    )
            except ErrorAnswer as exc:
                raise ModelCallError(
                    exc.status, _error_text(exc), retry_after_s=retry_after(exc.headers)
                ) from exc
            except (Unreachable, TimeoutError) as exc:
                raise ModelCallError(0, UNREACHABLE) from exc
            except ValueError as exc:
                # A cut connection or bad HTTP (StreamBroken), a line over MAX_EVENT_BYTES or
                # an event that is not JSON or not a chunk (_Malformed): the provider's answer
                # cannot be read, which the lane treats as any failed call.
                raise ModelCallError(0, f"the model's stream could not be read: {exc}") from exc
            return events.out.build()

    def _request(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        temperature: float | None,
    ) -> list[bytes]:
        """The request's head and body, written with one writev."""
        body = self._body(model, messages, tools, temperature)
        return [b"%s%d\r\n\r\n" % (self._head, len(body)), body]

    def _body(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        temperature: float | None,
    ) -> bytes:
        """The request's JSON as bytes (orjson: several times json.dumps' speed)."""
        body: dict[str, Any] = {
            "model": model.removeprefix(OPENAI_PREFIX),
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if temperature is not None:
            body["temperature"] = temperature
        data = orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
        if tools:
            data = b"".join((data[:-1], b',"tools":', self._tools.encode(tools), b"}"))
        return data


class _ToolsJson:
    """A request's `tools` as JSON, encoded once per list of the same tool objects: a worker
    sends the same pool with every call of a chat (the pool is held between turns and each
    tool's dict is made once, engine_worker/tools.py), and re-encoding its schemas was a good
    part of a call's JSON encoding. Keyed by the objects' ids, and holding the objects, so an
    id cannot be reused by another object while its entry lives; a tool dict is never changed
    after it is made."""

    _MAX = 64

    def __init__(self) -> None:
        self._held: dict[tuple[int, ...], tuple[list[dict[str, Any]], bytes]] = {}

    def encode(self, tools: list[dict[str, Any]]) -> bytes:
        key = tuple(map(id, tools))
        hit = self._held.get(key)
        if hit is not None:
            return hit[1]
        text = orjson.dumps(tools, option=orjson.OPT_NON_STR_KEYS)
        if len(self._held) >= self._MAX:
            self._held.clear()
        self._held[key] = (list(tools), text)
        return text


# An event longer than this cannot be read (a provider's delta is a few hundred bytes): the
# call fails as one whose stream could not be read.
MAX_EVENT_BYTES = 256 * 1024


class _Events:
    """Server-sent events: `data:` lines joined up to a blank line make one event.

    Fed each piece of the body as the socket delivers it (vance/llm_wire.py, in the
    connection's data_received) and split here: at a hosted model's pace each event comes in a
    read of its own. The complete events of a piece are handled in one synchronous pass
    (`_event`): a synchronous sink (the worker's EventPublisher.chunk) costs no coroutine and
    no wake-up per event; what an async sink returns waits in `pending`, and the connection
    reads no more until the call has awaited it, in order."""

    __slots__ = ("_rest", "out", "pending")

    def __init__(self, out: ReplyBuilder) -> None:
        self.out = out
        self.pending: list[Awaitable[None]] = []
        self._rest = b""  # an event not yet ended by its blank line

    def feed(self, block: bytes) -> bool:
        if self._rest:
            block = self._rest + block
        if b"\r" in block:
            block = block.replace(b"\r\n", b"\n")
        events = block.split(b"\n\n")
        # What follows the last blank line (with a CR whose LF is still to come) waits.
        rest = self._rest = events.pop()
        if len(rest) > MAX_EVENT_BYTES:
            raise _Malformed(f"an event of more than {MAX_EVENT_BYTES} bytes")
        # What the piece's events gave an async sink before one failed stays in `pending`:
        # the sink saw it before the failure, as without the pass.
        out, pending = self.out, self.pending
        return any(_event(event, out, pending) for event in events)

    def end(self) -> None:
        if self._rest.strip():
            _event(self._rest, self.out, self.pending)  # the last event, its blank line never sent


def _data(event: bytes) -> bytes:
    """An event's data: its `data:` lines joined by newlines (comments and other fields left
    out); empty when it has none."""
    if event.startswith(b"data:") and b"\n" not in event:
        return event[5:].lstrip(b" ")  # nearly every event: one data line
    return b"\n".join(
        line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:")
    )


class _Malformed(ValueError):
    """A chunk whose JSON is not shaped as a chat-completion chunk."""


def _wrong(value: object, kind: type, what: str) -> _Malformed:
    return _Malformed(f"{what} is {type(value).__name__}, not {kind.__name__}")


def _event(event: bytes, out: ReplyBuilder, pending: list[Awaitable[None]]) -> bool:
    """Feeds one event; True at the end of the stream. What an async sink returns goes to
    `pending`, for the reader to await."""
    payload = _data(event)
    if not payload:
        return False  # a comment, another field, or blank lines between events
    if payload == _DONE:
        return True
    # orjson: about two thirds of jiter's time on a chunk (jiter's default string cache costs
    # more than it saves here: a delta's strings differ from event to event).
    chunk = orjson.loads(payload)
    if not isinstance(chunk, dict):
        return False
    if chunk.get("error"):
        # An error inside a stream that began with 200 (as the SDK reports it: no status).
        raise ModelCallError(0, _message(chunk))
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        out.usage(
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
            int(usage.get("total_tokens") or 0),
        )
    # The shape checks inline, each a type test on the way (a helper call per field was a
    # good part of an event's cost); a value of the wrong shape fails as _Malformed.
    choices = chunk.get("choices")
    if not choices:
        return False
    if type(choices) is not list:
        raise _wrong(choices, list, "choices")
    choice = choices[0]
    if type(choice) is not dict:
        raise _wrong(choice, dict, "a choice")
    delta = choice.get("delta")
    if delta:
        if type(delta) is not dict:
            raise _wrong(delta, dict, "a delta")
        content = delta.get("content")
        if content and (sent := out.text(str(content))) is not None:
            pending.append(sent)
        calls = delta.get("tool_calls")
        if calls:
            if type(calls) is not list:
                raise _wrong(calls, list, "tool_calls")
            for tc in calls:
                if type(tc) is not dict:
                    raise _wrong(tc, dict, "a tool call")
                fn = tc.get("function") or _NONE
                if type(fn) is not dict:
                    raise _wrong(fn, dict, "a function")
                sent = out.tool_delta(
                    int(tc.get("index") or 0),
                    _text(tc.get("id")),
                    _text(fn.get("name")),
                    _text(fn.get("arguments")),
                )
                if sent is not None:
                    pending.append(sent)
    if choice.get("finish_reason"):
        out.reply.finish_reason = str(choice["finish_reason"])
    return False


_NONE: dict[str, Any] = {}


def _text(value: object) -> str:
    """A string field of a delta as a string ("" when absent or empty)."""
    if type(value) is str:
        return value
    return str(value) if value else ""


def _error_text(answer: ErrorAnswer) -> str:
    text = answer.body.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        return text.strip() or answer.reason or f"HTTP {answer.status}"
    return _message(body) if isinstance(body, dict) else text


def _message(body: dict[str, Any]) -> str:
    inner = body.get("error", body)
    if isinstance(inner, dict) and inner.get("message"):
        return str(inner["message"])
    return json.dumps(body)
