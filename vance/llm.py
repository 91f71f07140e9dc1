"""Model calls: one small client protocol (vance/llm_core.py), two implementations over
real HTTP.

`LiteLLMClient` reaches every provider litellm knows. Models litellm would send to an
OpenAI-compatible endpoint (`openai/...`, with or without an `api_base`) skip litellm's per-call
machinery (logging objects, provider routing, chunk rebuilding) through `OpenAIClient`
(vance/llm_http.py: the same request over connections of its own, vance/llm_wire.py, the
stream read as it comes). Per streamed call against the scripted server (200 calls, one
process): litellm about 20 ms of CPU, the openai SDK (a third client until it was removed: it
gave nothing the direct path lacks) 3.4 ms, the direct path over aiohttp 0.3-0.5 ms, over its
own connections (session 19) about half that. Both stream, ask for usage, reassemble tool calls the same way
(`ReplyBuilder`) and raise `ModelCallError` for a failed call; `make_model_client` picks per
call."""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
from typing import Any

from vance.config import LlmConfig
from vance.llm_core import (
    NOT_CONFIGURED,
    OPENAI_PREFIX,
    PURPOSE_HEADER,
    ChunkSink,
    ModelCallError,
    ModelClient,
    ModelNotConfiguredError,
    ModelReply,
    ReplyBuilder,
    StreamedArgs,
    ToolCall,
    Usage,
    is_configured,
    resolve_model,
    retry_after,
)
from vance.llm_http import OpenAIClient
from vance.llm_limits import LimitedClient
from vance.observability.metrics import timed_model_call
from vance.observability.tracing import model_span

__all__ = [
    "NOT_CONFIGURED",
    "ChunkSink",
    "LiteLLMClient",
    "ModelCallError",
    "ModelClient",
    "ModelNotConfiguredError",
    "ModelReply",
    "OpenAIClient",
    "RoutingClient",
    "StreamedArgs",
    "ToolCall",
    "Usage",
    "is_configured",
    "make_model_client",
    "resolve_model",
    "uses_direct_client",
    "uses_litellm",
    "warm_up",
    "warm_up_call",
    "warm_up_clients",
]

logger = logging.getLogger(__name__)


def _call_error(exc: Exception) -> ModelCallError:
    """litellm's exceptions derive from the openai SDK's, so one mapping serves both."""
    import httpx
    import openai

    if any(isinstance(e, openai.APIConnectionError | httpx.TransportError) for e in _chain(exc)):
        # litellm reports an unreachable endpoint as a 500 of its own making.
        return ModelCallError(0, "the model endpoint could not be reached or timed out")
    if isinstance(exc, openai.APIStatusError):
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        return ModelCallError(
            exc.status_code,
            _error_message(exc),
            retry_after_s=retry_after(headers) if headers is not None else None,
        )
    if isinstance(exc, openai.APIError):
        return ModelCallError(0, _error_message(exc))
    return ModelCallError(0, f"{type(exc).__name__}: {exc}")


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in out:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _error_message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", "") or exc)


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
        stream_args: StreamedArgs | None = None,
    ) -> ModelReply:
        model = resolve_model(self._config, tier)
        with model_span(model, tier), timed_model_call(model, tier):
            return await self._complete(model, messages, tools, on_chunk, temperature, stream_args)

    async def aclose(self) -> None:
        return None  # litellm keeps its own clients

    async def _complete(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_chunk: ChunkSink | None,
        temperature: float | None,
        stream_args: StreamedArgs | None,
    ) -> ModelReply:
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self._config.timeout_s,
            # A failed turn is retried by its lane (process_service/runtime/lanes.py).
            "max_retries": 0,
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
        try:
            stream = await self._litellm.acompletion(**kwargs)
            return await _Assembler().read(stream, on_chunk, stream_args)
        except ModelNotConfiguredError:
            raise
        except Exception as exc:
            raise _call_error(exc) from exc


class RoutingClient:
    """Per call: the direct path (vance/llm_http.py) for `openai/...` models, litellm for every other
    provider."""

    def __init__(self, config: LlmConfig, *, purpose: str = "") -> None:
        self._config = config
        self._purpose = purpose
        self._direct: ModelClient | None = None
        self._litellm: LiteLLMClient | None = None

    def client_for(self, tier: str) -> ModelClient:
        if resolve_model(self._config, tier).startswith(OPENAI_PREFIX):
            if self._direct is None:
                self._direct = OpenAIClient(self._config, purpose=self._purpose)
            return self._direct
        if self._litellm is None:
            self._litellm = LiteLLMClient(self._config, purpose=self._purpose)
        return self._litellm

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
        return await self.client_for(tier).complete(
            tier=tier,
            messages=messages,
            tools=tools,
            on_chunk=on_chunk,
            temperature=temperature,
            stream_args=stream_args,
        )

    async def aclose(self) -> None:
        for client in (self._direct, self._litellm):
            if client is not None:
                await client.aclose()


def make_model_client(config: LlmConfig, *, purpose: str = "") -> ModelClient:
    """`llm.client`: "auto" (the direct path where it serves the model, litellm elsewhere)
    or "litellm" (litellm for every call)."""
    inner: ModelClient = (
        LiteLLMClient(config, purpose=purpose)
        if config.client == "litellm"
        else RoutingClient(config, purpose=purpose)
    )
    # The provider's limits and its overload answers (vance/llm_limits.py).
    return LimitedClient(inner, config)


class _Assembler:
    """Reads a stream of litellm's chat-completion chunk objects into a ReplyBuilder."""

    async def read(
        self, stream: Any, on_chunk: ChunkSink | None, stream_args: StreamedArgs | None = None
    ) -> ModelReply:
        out = ReplyBuilder(on_chunk, stream_args)
        async for chunk in stream:
            usage = getattr(chunk, "usage", None)
            if usage is not None:
                out.usage(
                    int(usage.prompt_tokens or 0),
                    int(usage.completion_tokens or 0),
                    int(usage.total_tokens or 0),
                )
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            delta = choice.delta
            content = getattr(delta, "content", None)
            if content and (pending := out.text(content)) is not None:
                await pending
            for tc in getattr(delta, "tool_calls", None) or []:
                fn = tc.function
                pending = out.tool_delta(
                    tc.index or 0,
                    tc.id or "",
                    (fn.name if fn is not None else "") or "",
                    (fn.arguments if fn is not None else "") or "",
                )
                if pending is not None:
                    await pending
            if choice.finish_reason:
                out.reply.finish_reason = choice.finish_reason
        return out.build()


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


def _models(config: LlmConfig) -> set[str]:
    """The provider models the configured tiers resolve to."""
    out = set()
    for tier in [*config.tiers, "default:chat"]:
        try:
            out.add(resolve_model(config, tier))
        except (ModelNotConfiguredError, ValueError):
            continue
    return out


def uses_litellm(config: LlmConfig) -> bool:
    """Whether make_model_client's client sends some configured model through litellm."""
    return config.client == "litellm" or any(
        not m.startswith(OPENAI_PREFIX) for m in _models(config)
    )


def uses_direct_client(config: LlmConfig) -> bool:
    """Whether make_model_client's client sends some configured model over the direct path."""
    return config.client != "litellm" and any(m.startswith(OPENAI_PREFIX) for m in _models(config))


async def warm_up_call(config: LlmConfig, *, direct: bool = False) -> None:
    """Imports (in a thread), then one streamed tool call through litellm (or, `direct`, the
    direct path) against a local OpenAI-compatible stand-in on loopback: litellm builds pydantic
    schemas, tokenizers and price lookups on first use (about a second of CPU), the direct path
    its imports and connection pool (less), and this pays for it before a user's turn does. No
    provider is called, so nothing is billed."""
    if not direct:
        await asyncio.to_thread(warm_up)
    from vance.llm_stand_in import WarmUpServer

    server = WarmUpServer()
    await server.start()
    try:
        model = config.model if config.model.startswith("openai/") else "openai/gpt-4o-mini"
        local = LlmConfig(model=model, api_base=server.base_url, api_key="warm-up", timeout_s=30)
        if direct:
            http = OpenAIClient(local)
            try:
                await _warm(http)
            finally:
                await http.aclose()
        else:
            await _warm(LiteLLMClient(local))
    finally:
        await server.stop()


async def warm_up_clients(config: LlmConfig) -> None:
    """`warm_up_call` for each path `make_model_client`'s client takes for the configured
    models: litellm, and the direct path when it serves one."""
    if uses_litellm(config):
        await warm_up_call(config)
    if uses_direct_client(config):
        await warm_up_call(config, direct=True)


async def _warm(client: ModelClient) -> None:
    def ignore(_: str) -> None:
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
