"""What every model client shares (vance/llm.py, vance/llm_http.py): the reply types, the
protocol, the errors, tier resolution, and the assembly of a streamed reply."""

from __future__ import annotations

import email.utils
import json
import logging
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
        self._calls: dict[int, dict[str, str]] = {}
        self._streams: dict[int, ArgumentStream] = {}

    async def text(self, content: str) -> None:
        self._text.append(content)
        if self._on_chunk is not None:
            await self._on_chunk(content)

    async def tool_delta(self, index: int, call_id: str, name: str, arguments: str) -> None:
        slot = self._calls.setdefault(index, {"id": "", "name": "", "args": ""})
        if call_id:
            slot["id"] = call_id
        if name:
            slot["name"] = name
        if not arguments:
            return
        slot["args"] += arguments
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
            slot = self._calls[index]
            reply.tool_calls.append(
                ToolCall(
                    id=slot["id"] or f"call_{index}",
                    name=slot["name"],
                    arguments=parse_arguments(slot["args"]),
                    raw_arguments=slot["args"],
                )
            )
        return reply


class ArgumentStream:
    """One tool call's JSON arguments as they arrive, and what is new of one string field.

    jiter's partial mode reads the arguments so far as if they ended there (an open string
    counts as written up to here; a half escape is left for the next delta), so each delta
    yields exactly the characters the model added to the field. The whole prefix is read again
    per delta: about a microsecond per 100 bytes, against tens of milliseconds between a
    provider's deltas. Past MAX_BYTES the field stops streaming (the final message still
    arrives whole): a runaway argument must not cost quadratic time."""

    MAX_BYTES = 256 * 1024

    def __init__(self, key: str) -> None:
        self._key = key
        self._buf = bytearray()
        self._sent = 0

    def feed(self, part: str) -> str:
        if len(self._buf) > self.MAX_BYTES:
            return ""
        self._buf += part.encode()
        try:
            value = jiter.from_json(bytes(self._buf), partial_mode="trailing-strings")
        except ValueError:
            return ""  # not JSON (the final parse reports it); nothing to stream
        text = value.get(self._key) if isinstance(value, dict) else None
        if not isinstance(text, str) or len(text) <= self._sent:
            return ""
        new, self._sent = text[self._sent :], len(text)
        return new


def parse_arguments(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        logger.warning("model sent tool arguments that are not JSON")
        return {"_invalid_json": raw}
    return parsed if isinstance(parsed, dict) else {"value": parsed}
