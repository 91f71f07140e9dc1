"""The direct path to an OpenAI-compatible endpoint: the chat-completions request the openai SDK
would send, over one aiohttp session per client, and the server-sent events read as they come
into a ReplyBuilder (vance/llm_core.py). The SDK builds a typed model per chunk; reading the
JSON itself is what brings a streamed call from about 3.4 ms of CPU to under 0.5 ms (measured
against the scripted server, 200 calls in one process); splitting the events by hand and
decoding them with orjson (about a sixth of json.loads' time on a chunk) cuts what each event
costs by about a third (issue 28). tests/test_model_clients.py holds this path to the same
replies, tool calls, usage and errors as litellm, and shows every way a stream can fail to read
(too long a line, bad JSON, a chunk of the wrong shape, a cut connection) as a ModelCallError."""

from __future__ import annotations

import json
from typing import Any, TypeVar

import aiohttp
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
from vance.observability.metrics import timed_model_call
from vance.observability.tracing import model_span

OPENAI_API = "https://api.openai.com/v1"
UNREACHABLE = "the model endpoint could not be reached or timed out"
_DONE = b"[DONE]"
_T = TypeVar("_T")


class OpenAIClient:
    """For `openai/<model>` (the prefix is litellm's provider name and is not sent), at
    `api_base` when set, else OpenAI's API."""

    def __init__(self, config: LlmConfig, *, purpose: str = "") -> None:
        self._config = config
        self._url = (config.api_base or OPENAI_API).rstrip("/") + "/chat/completions"
        self._headers = {"Content-Type": "application/json"}
        if config.api_key:
            self._headers["Authorization"] = f"Bearer {config.api_key}"
        if purpose:
            self._headers[PURPOSE_HEADER] = purpose
        self._session: aiohttp.ClientSession | None = None
        self._tools = _ToolsJson()

    def _client(self) -> aiohttp.ClientSession:
        # Made on first use: a session belongs to the event loop that runs the calls.
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self._config.timeout_s),
                headers=self._headers,
                # As many connections as turns may wait on the provider (LlmConfig).
                connector=aiohttp.TCPConnector(
                    limit=self._config.max_connections,
                    limit_per_host=self._config.max_connections,
                ),
            )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

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
        with model_span(model, tier), timed_model_call(model, tier):
            try:
                # The body is made in the call's argument, so nothing here holds it while the
                # answer streams: aiohttp lets go of it once it is sent (a turn in flight holds
                # its request for seconds at a hosted model's pace, issue 28).
                async with self._client().post(
                    self._url, data=self._body(model, messages, tools, temperature)
                ) as response:
                    if response.status >= 400:
                        raise ModelCallError(
                            response.status,
                            await _error_text(response),
                            retry_after_s=retry_after(response.headers),
                        )
                    return await _read(response, ReplyBuilder(on_chunk, stream_args))
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise ModelCallError(0, UNREACHABLE) from exc
            except ValueError as exc:
                # A line over aiohttp's buffer ("Chunk too big"), an event that is not JSON or
                # not a chunk (_Malformed): the provider's answer cannot be read, which the lane
                # treats as any failed call.
                raise ModelCallError(0, f"the model's stream could not be read: {exc}") from exc

    def _body(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        temperature: float | None,
    ) -> bytes:
        """The request's JSON as bytes (orjson: several times json.dumps' speed, and bytes
        aiohttp sends as they are, where a str was encoded into a second copy)."""
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
# call fails as one whose stream could not be read, as aiohttp's own line limit made it before.
MAX_EVENT_BYTES = 256 * 1024


async def _read(response: aiohttp.ClientResponse, out: ReplyBuilder) -> ModelReply:
    """Server-sent events: `data:` lines joined up to a blank line make one event.

    Read as the socket delivers them and split here: at a hosted model's pace each event comes
    in a read of its own, and a `readline` per line (two per event) through aiohttp's
    StreamReader cost more than the event's own work (issue 28)."""
    content = response.content
    rest = b""  # an event not yet ended by its blank line
    while block := await content.readany():
        if rest:
            block = rest + block
        if b"\r" in block:
            block = block.replace(b"\r\n", b"\n")
        events = block.split(b"\n\n")
        # What follows the last blank line (with a CR whose LF is still to come) waits.
        rest = events.pop()
        if len(rest) > MAX_EVENT_BYTES:
            raise _Malformed(f"an event of more than {MAX_EVENT_BYTES} bytes")
        for event in events:
            if await _event(event, out):
                return out.build()
    if rest.strip():
        await _event(rest, out)  # the last event, its blank line never sent
    return out.build()


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


def _shaped(value: object, kind: type[_T], what: str) -> _T:
    if not isinstance(value, kind):
        raise _Malformed(f"{what} is {type(value).__name__}, not {kind.__name__}")
    return value


async def _event(event: bytes, out: ReplyBuilder) -> bool:
    """Feeds one event; True at the end of the stream."""
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
    choices = _shaped(chunk.get("choices") or [], list, "choices")
    if not choices:
        return False
    choice = _shaped(choices[0], dict, "a choice")
    delta = _shaped(choice.get("delta") or {}, dict, "a delta")
    content = delta.get("content")
    if content:
        await out.text(str(content))
    for tc in _shaped(delta.get("tool_calls") or [], list, "tool_calls"):
        tc = _shaped(tc, dict, "a tool call")
        fn = _shaped(tc.get("function") or {}, dict, "a function")
        await out.tool_delta(
            int(tc.get("index") or 0),
            str(tc.get("id") or ""),
            str(fn.get("name") or ""),
            str(fn.get("arguments") or ""),
        )
    if choice.get("finish_reason"):
        out.reply.finish_reason = str(choice["finish_reason"])
    return False


async def _error_text(response: aiohttp.ClientResponse) -> str:
    text = await response.text()
    try:
        body = json.loads(text)
    except ValueError:
        return text.strip() or response.reason or f"HTTP {response.status}"
    return _message(body) if isinstance(body, dict) else text


def _message(body: dict[str, Any]) -> str:
    inner = body.get("error", body)
    if isinstance(inner, dict) and inner.get("message"):
        return str(inner["message"])
    return json.dumps(body)
