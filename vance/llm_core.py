"""What every model client shares (vance/llm.py, vance/llm_http.py): the reply types, the
protocol, the errors, tier resolution, and the assembly of a streamed reply."""

from __future__ import annotations

import email.utils
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import jiter

from vance.config import LlmConfig
from vance.errors import FailedPreconditionError

logger = logging.getLogger(__name__)

ChunkSink = Callable[[str], Awaitable[None]]
# Tool name -> the string argument of that tool that goes to on_chunk as the model writes it
# (`respond`'s and Eddie's actions' `message`): real models answer through these tools, so
# without it a user would see nothing until the whole call had arrived.
StreamedArgs = Mapping[str, str]
PURPOSE_HEADER = "X-Vance-Purpose"

NOT_CONFIGURED = (
    "no model provider is configured: set VANCE_LLM_MODEL (e.g. openai/gpt-4o-mini), and "
    "VANCE_LLM_API_KEY, or VANCE_LLM_API_BASE for any OpenAI-compatible server"
)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@dataclass
class ModelReply:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = ""
    usage: Usage = field(default_factory=Usage)


class ModelClient(Protocol):
    async def complete(
        self,
        *,
        tier: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_chunk: ChunkSink | None = None,
        temperature: float | None = None,
        stream_args: StreamedArgs | None = None,
    ) -> ModelReply: ...

    async def aclose(self) -> None:
        """Closes what the client holds open (connection pools); idempotent."""


class ModelNotConfiguredError(FailedPreconditionError):
    def __init__(self) -> None:
        super().__init__(NOT_CONFIGURED, reason="model_not_configured")


class ModelCallError(Exception):
    """A model call failed: the provider answered with an error status (status_code), or
    could not be reached or timed out (status_code 0). The same from both clients."""

    def __init__(
        self, status_code: int, message: str, *, retry_after_s: float | None = None
    ) -> None:
        super().__init__(f"model call failed ({status_code or 'no answer'}): {message}")
        self.status_code = status_code
        self.detail = message
        self.retry_after_s = retry_after_s  # the provider's Retry-After, when it sent one


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from a response's `retry-after-ms` (OpenAI's) or `Retry-After` (seconds or an
    HTTP date), or None."""
    lowered = {k.lower(): v for k, v in headers.items()}
    try:
        if "retry-after-ms" in lowered:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        value = lowered.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (ValueError, TypeError, OverflowError):
        return None


def resolve_model(config: LlmConfig, spec: str) -> str:
    """Tier alias -> provider model. VANCE_LLM_MODEL points every tier at one model; aliases
    resolve recursively; a comma list means the first configured one wins."""
    seen: set[str] = set()
    for candidate in [s.strip() for s in (spec or "default:chat").split(",") if s.strip()]:
        current = candidate
        while current in config.tiers or current.startswith("default:"):
            if current in seen:
                raise ValueError(f"model alias loop at {current!r}")
            seen.add(current)
            if config.model:
                return config.model
            nxt = config.tiers.get(current, "")
            if not nxt:
                break
            current = nxt
        else:
            return current
    raise ModelNotConfiguredError()


def is_configured(config: LlmConfig) -> bool:
    return bool(config.model) or any(config.tiers.values())


OPENAI_PREFIX = "openai/"


class ReplyBuilder:
    """Joins a streamed reply: text parts go to on_chunk as they come; tool-call deltas are
    joined by index (and a streamed argument's new text goes to on_chunk too, see
    `StreamedArgs`); the usage arrives in a last chunk without choices."""

    def __init__(self, on_chunk: ChunkSink | None, stream_args: StreamedArgs | None = None) -> None:
        self.reply = ModelReply()
        self._on_chunk = on_chunk
        self._stream_args = stream_args if on_chunk is not None else None
        self._text: list[str] = []
        # index -> the call's id, name and argument parts (joined once, in build: adding each
        # delta to a string would copy the whole arguments per delta)
        self._calls: dict[int, tuple[dict[str, str], list[str]]] = {}
        self._streams: dict[int, ArgumentStream] = {}

    async def text(self, content: str) -> None:
        self._text.append(content)
        if self._on_chunk is not None:
            await self._on_chunk(content)

    async def tool_delta(self, index: int, call_id: str, name: str, arguments: str) -> None:
        found = self._calls.get(index)
        if found is None:
            found = self._calls[index] = ({"id": "", "name": ""}, [])
        slot, parts = found
        if call_id:
            slot["id"] = call_id
        if name:
            slot["name"] = name
        if not arguments:
            return
        parts.append(arguments)
        if self._stream_args is None or self._on_chunk is None:
            return
        stream = self._streams.get(index)
        if stream is None:
            key = self._stream_args.get(slot["name"])
            if key is None:
                return
            stream = self._streams[index] = ArgumentStream(key)
        new = stream.feed(arguments)
        if new:
            await self._on_chunk(new)

    def usage(self, prompt: int, completion: int, total: int) -> None:
        self.reply.usage = Usage(prompt, completion, total)

    def build(self) -> ModelReply:
        reply = self.reply
        reply.text = "".join(self._text)
        for index in sorted(self._calls):
            slot, parts = self._calls[index]
            raw = "".join(parts)
            reply.tool_calls.append(
                ToolCall(
                    id=slot["id"] or f"call_{index}",
                    name=slot["name"],
                    arguments=parse_arguments(raw),
                    raw_arguments=raw,
                )
            )
        return reply


# A JSON string's body up to its closing quote, a half escape at its end, or a bad escape:
# plain characters and whole escapes (`\uXXXX` or a backslash and one character).
_STRING_BODY = re.compile(r'(?:[^"\\]|\\u[0-9a-fA-F]{4}|\\[^u])*')
_LONGEST_ESCAPE = 6  # `\uXXXX`
# Made once: json.loads(..., strict=False) builds a decoder per call, ten times this one's cost.
# Lenient as models are: a raw control character in the string is read as itself.
_LENIENT = json.JSONDecoder(strict=False)


class ArgumentStream:
    """One tool call's JSON arguments as they arrive, and what is new of one string field.

    Until the field's string has opened, jiter's partial mode reads the arguments so far as if
    they ended there (the whole prefix again per delta, so past MAX_BYTES without the field the
    field does not stream; the final message still arrives whole). Once it has opened, only
    the string's own new characters are read: each delta's escapes are decoded by themselves
    (a half escape, or the first half of a surrogate pair, waits for the next delta) up to
    the closing quote. A model writes its answer a few characters per delta, so reading the
    whole prefix again per delta cost time quadratic in the answer's length (issue 28: about
    5 ms of a worker's CPU for a 2 KB answer)."""

    MAX_BYTES = 256 * 1024

    def __init__(self, key: str) -> None:
        self._key = key
        self._buf = bytearray()  # the arguments until the field's string opened
        self._body: str | None = None  # inside the string: its characters not yet decoded
        self._done = False  # the string closed (or cannot be read): nothing more to stream

    def feed(self, part: str) -> str:
        if self._done:
            return ""
        if self._body is not None:
            if not self._body and "\\" not in part and '"' not in part:
                return part  # most deltas: plain characters, nothing to decode
            self._body += part
            return self._decode()
        if len(self._buf) > self.MAX_BYTES:
            return ""
        self._buf += part.encode()
        return self._open()

    def _open(self) -> str:
        """Before the string opened: whether it has now, and what of it is readable."""
        buf = bytes(self._buf)
        try:
            value = jiter.from_json(buf, partial_mode="trailing-strings")
        except ValueError:
            return ""  # not JSON (the final parse reports it); nothing to stream
        text = value.get(self._key) if isinstance(value, dict) else None
        if not isinstance(text, str):
            return ""
        whole = jiter.from_json(buf, partial_mode="on")
        if isinstance(whole, dict) and isinstance(whole.get(self._key), str):
            self._done = True  # the string closed in this very delta
            return text
        # The string is still open, so it is the last thing in the arguments, and every quote
        # in it is escaped: it begins after the last quote that no backslash escapes.
        raw = buf.decode()
        at = len(raw)
        while (at := raw.rfind('"', 0, at)) >= 0:
            if (at - len(raw[:at].rstrip("\\"))) % 2 == 0:
                break
        self._buf.clear()
        if at < 0:
            self._done = True
            return ""
        self._body = raw[at + 1 :]
        out = self._decode()
        if not text.startswith(out):
            self._done = True  # read otherwise than jiter reads it: stream nothing more
            return ""
        return out

    def _decode(self) -> str:
        body = self._body or ""
        match = _STRING_BODY.match(body)
        end = match.end() if match else 0
        closed = end < len(body) and body[end] == '"'
        if not closed and len(body) - end > _LONGEST_ESCAPE:
            self._done = True  # a bad escape: the final parse reports it
            return ""
        try:
            text = _LENIENT.decode(f'"{body[:end]}"')
        except ValueError:
            self._done = True
            return ""
        if not closed and text and "\ud800" <= text[-1] <= "\udbff":
            # The first half of a surrogate pair: it goes out with its second half.
            end -= _LONGEST_ESCAPE
            text = text[:-1]
        self._body = body[end:]
        self._done = closed
        return str(text)


def parse_arguments(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        # jiter: the values json.loads reads (big integers, NaN) at a tenth of its time, once
        # per tool call; what jiter refuses json.loads gets to read as before (a lone
        # surrogate escape), so only what neither reads is not JSON.
        parsed = jiter.from_json(raw.encode())
    except ValueError:
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            logger.warning("model sent tool arguments that are not JSON")
            return {"_invalid_json": raw}
    return parsed if isinstance(parsed, dict) else {"value": parsed}
