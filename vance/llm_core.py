"""What every model client shares (vance/llm.py, vance/llm_http.py): the reply types, the
protocol, the errors, tier resolution, and the assembly of a streamed reply."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from vance.config import LlmConfig
from vance.errors import FailedPreconditionError

logger = logging.getLogger(__name__)

ChunkSink = Callable[[str], Awaitable[None]]
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
    ) -> ModelReply: ...

    async def aclose(self) -> None:
        """Closes what the client holds open (connection pools); idempotent."""


class ModelNotConfiguredError(FailedPreconditionError):
    def __init__(self) -> None:
        super().__init__(NOT_CONFIGURED, reason="model_not_configured")


class ModelCallError(Exception):
    """A model call failed: the provider answered with an error status (status_code), or
    could not be reached or timed out (status_code 0). The same from both clients."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"model call failed ({status_code or 'no answer'}): {message}")
        self.status_code = status_code
        self.detail = message


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
    joined by index; the usage arrives in a last chunk without choices."""

    def __init__(self, on_chunk: ChunkSink | None) -> None:
        self.reply = ModelReply()
        self._on_chunk = on_chunk
        self._text: list[str] = []
        self._calls: dict[int, dict[str, str]] = {}

    async def text(self, content: str) -> None:
        self._text.append(content)
        if self._on_chunk is not None:
            await self._on_chunk(content)

    def tool_delta(self, index: int, call_id: str, name: str, arguments: str) -> None:
        slot = self._calls.setdefault(index, {"id": "", "name": "", "args": ""})
        if call_id:
            slot["id"] = call_id
        if name:
            slot["name"] = name
        if arguments:
            slot["args"] += arguments

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


def parse_arguments(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        logger.warning("model sent tool arguments that are not JSON")
        return {"_invalid_json": raw}
    return parsed if isinstance(parsed, dict) else {"value": parsed}
