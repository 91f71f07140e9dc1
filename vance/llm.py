"""Model calls: one small client protocol, implemented by litellm's real HTTP path."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from vance.config import LlmConfig
from vance.errors import FailedPreconditionError
from vance.observability.metrics import timed_model_call
from vance.observability.tracing import model_span

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


@dataclass
class ModelReply:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = ""


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


class ModelNotConfiguredError(FailedPreconditionError):
    def __init__(self) -> None:
        super().__init__(NOT_CONFIGURED, reason="model_not_configured")


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


class LiteLLMClient:
    """Streams through litellm.acompletion; tool-call deltas are reassembled by index."""

    def __init__(self, config: LlmConfig, *, purpose: str = "") -> None:
        # litellm fetches a price map over the network on import unless told not to.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.telemetry = False
        litellm.suppress_debug_info = True
        # litellm's per-chunk success logging feeds callbacks we do not register; skipping it
        # saves about 2 ms of CPU per streamed call (21 instead of 23 ms, measured against the
        # scripted server; the openai SDK alone takes 5 ms).
        litellm.disable_streaming_logging = True
        self._litellm = litellm
        self._config = config
        # Sent as `X-Vance-Purpose` so proxies and the scripted test model can tell side calls
        # (e.g. the session-metadata suggestion) from engine turns.
        self._headers = {PURPOSE_HEADER: purpose} if purpose else {}

    async def complete(
        self,
        *,
        tier: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_chunk: ChunkSink | None = None,
        temperature: float | None = None,
    ) -> ModelReply:
        model = resolve_model(self._config, tier)
        with model_span(model, tier), timed_model_call(model):
            return await self._complete(model, messages, tools, on_chunk, temperature)

    async def _complete(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_chunk: ChunkSink | None,
        temperature: float | None,
    ) -> ModelReply:
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "stream": True,
            "timeout": self._config.timeout_s,
        }
        if self._config.api_base:
            kwargs["api_base"] = self._config.api_base
        if self._config.api_key:
            kwargs["api_key"] = self._config.api_key
        if tools:
            kwargs["tools"] = tools
        if temperature is not None:
            kwargs["temperature"] = temperature
        if self._headers:
            kwargs["extra_headers"] = self._headers
        stream = await self._litellm.acompletion(**kwargs)
        reply = ModelReply()
        text_parts: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        async for chunk in stream:
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            delta = choice.delta
            if getattr(delta, "content", None):
                text_parts.append(delta.content)
                if on_chunk is not None:
                    await on_chunk(delta.content)
            for tc in getattr(delta, "tool_calls", None) or []:
                slot = calls.setdefault(tc.index or 0, {"id": "", "name": "", "args": ""})
                if tc.id:
                    slot["id"] = tc.id
                if tc.function is not None:
                    if tc.function.name:
                        slot["name"] = tc.function.name
                    if tc.function.arguments:
                        slot["args"] += tc.function.arguments
            if choice.finish_reason:
                reply.finish_reason = choice.finish_reason
        reply.text = "".join(text_parts)
        for index in sorted(calls):
            slot = calls[index]
            reply.tool_calls.append(
                ToolCall(
                    id=slot["id"] or f"call_{index}",
                    name=slot["name"],
                    arguments=_parse_arguments(slot["args"]),
                    raw_arguments=slot["args"],
                )
            )
        return reply


# What litellm imports lazily on its first completion (measured: the first streamed call costs
# 700 ms of CPU, later ones under 40 ms). Importing them when a worker starts keeps that off the
# first user's turn. Names that a litellm version lacks are skipped.
_FIRST_CALL_MODULES = (
    "litellm.litellm_core_utils.default_encoding",
    "litellm.proxy.openai_files_endpoints.common_utils",
    "litellm.llms.litellm_proxy.chat.transformation",
    "litellm.llms.github_copilot.authenticator",
    "litellm.llms.openai_like.dynamic_config",
    "litellm.llms.openai.chat.gpt_audio_transformation",
    "litellm._service_logger",
    "litellm.integrations.generic_api.generic_api_callback",
    "litellm.types.litellm_core_utils.streaming_chunk_builder_utils",
    "litellm.proxy.mcp_server.stdio_gate",
    "litellm.litellm_core_utils.logging_callback_manager",
    "litellm.llms.github_copilot.per_user_auth",
    "litellm.llms.bedrock.chat.invoke_transformations.amazon_ai21_transformation",
    "anyio._backends._asyncio",
    "anyio.streams.memory",
)


def warm_up() -> None:
    """Blocking (run it in a thread): imports litellm and what its first call would."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for name in ("litellm", *_FIRST_CALL_MODULES):
        try:
            importlib.import_module(name)
        except Exception as exc:  # a module litellm no longer has, or that fails to import
            logger.debug("warm-up import of %s skipped: %r", name, exc)


async def warm_up_call(config: LlmConfig) -> None:
    """Imports (in a thread), then one streamed tool call through litellm against a local
    OpenAI-compatible stand-in on loopback: litellm builds pydantic schemas, tokenizers and
    price lookups on first use (about a second of CPU), and this pays for it before a user's
    turn does. No provider is called, so nothing is billed."""
    await asyncio.to_thread(warm_up)
    from vance.testing.scripted_llm import Rule, ScriptedLlmServer

    server = ScriptedLlmServer()
    await server.start()
    try:
        server.script.add(
            Rule(text="ok", tool_calls=[{"name": "warm_up", "arguments": {"ok": True}}])
        )
        model = config.model if config.model.startswith("openai/") else "openai/gpt-4o-mini"
        client = LiteLLMClient(
            LlmConfig(model=model, api_base=server.base_url, api_key="warm-up", timeout_s=30)
        )

        async def ignore(_: str) -> None:
            return None

        await client.complete(
            tier="default:chat",
            messages=[{"role": "user", "content": "warm up"}],
            tools=[
                {
                    "type": "function",
                    "function": {
                        "name": "warm_up",
                        "parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                    },
                }
            ],
            on_chunk=ignore,
        )
    finally:
        await server.stop()


def _parse_arguments(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        logger.warning("model sent tool arguments that are not JSON")
        return {"_invalid_json": raw}
    return parsed if isinstance(parsed, dict) else {"value": parsed}
