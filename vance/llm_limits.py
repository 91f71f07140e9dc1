"""A provider's limits, kept per provider model in front of any model client.

- *Overload answers.* A call refused with 429, 502, 503 or 504 before anything of it streamed is
  tried again, up to `llm.retries` times: after the provider's Retry-After when it sent one, else
  after an exponential backoff (`llm.retry_base_ms` doubling, at most `llm.retry_max_ms`) with
  full jitter, so a thousand refused turns do not come back in one burst. A Retry-After holds
  every call to that model, not only the refused one: the provider said the model is busy. A
  call that streamed part of its answer is not tried again here (the user saw the part): it
  fails, and its lane redoes the turn (process_service/runtime/lanes.py).
- *Configured limits* (`llm.limits[<model>]`): at most `concurrency` calls in flight, and at
  most `tokens_per_minute` tokens (the prompt estimated at four characters a token before the
  call, settled with the usage the provider reports after it). A call above either waits, in
  the order it came, instead of failing.

A call that finally fails says why (status, tries, the provider's message): the turn's close
detail carries it. The state is per process: each worker keeps its own share, so a limit is
per worker (docs/operations.md says how to set it for N workers)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from vance.config import LlmConfig, ModelLimits
from vance.llm_core import (
    ChunkSink,
    ModelCallError,
    ModelClient,
    ModelReply,
    StreamedArgs,
    resolve_model,
)
from vance.observability import metrics

RETRIED = frozenset({429, 502, 503, 504})
_COMPLETION_ESTIMATE = 256  # tokens a call is assumed to write until its usage says


@dataclass
class _TokenBucket:
    per_minute: int
    level: float = 0.0
    at: float = field(default_factory=time.monotonic)
    order: asyncio.Lock = field(default_factory=asyncio.Lock)  # FIFO among waiters

    def __post_init__(self) -> None:
        self.level = float(self.per_minute)

    def _refill(self) -> None:
        now = time.monotonic()
        self.level = min(self.per_minute, self.level + (now - self.at) * self.per_minute / 60)
        self.at = now

    async def take(self, tokens: int) -> None:
        want = min(tokens, self.per_minute)  # one call larger than a minute's worth waits a minute
        async with self.order:
            self._refill()
            while self.level < want:
                await asyncio.sleep((want - self.level) * 60 / self.per_minute)
                self._refill()
            self.level -= tokens

    def settle(self, estimated: int, actual: int) -> None:
        self.level -= actual - estimated


@dataclass
class _ModelState:
    limits: ModelLimits
    calls: asyncio.Semaphore | None = None
    tokens: _TokenBucket | None = None
    not_before: float = 0.0  # monotonic: a Retry-After holds every call until then

    def __post_init__(self) -> None:
        if self.limits.concurrency > 0:
            self.calls = asyncio.Semaphore(self.limits.concurrency)
        if self.limits.tokens_per_minute > 0:
            self.tokens = _TokenBucket(self.limits.tokens_per_minute)


class LimitedClient:
    def __init__(self, inner: ModelClient, config: LlmConfig) -> None:
        self._inner = inner
        self._config = config
        self._models: dict[str, _ModelState] = {}

    def _state(self, model: str) -> _ModelState:
        state = self._models.get(model)
        if state is None:
            limits = self._config.limits.get(model) or ModelLimits()
            state = self._models[model] = _ModelState(limits)
        return state

    @property
    def inner(self) -> ModelClient:
        """The client the calls go through (the routing one, or litellm)."""
        return self._inner

    async def aclose(self) -> None:
        await self._inner.aclose()

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
        state = self._state(model)
        streamed = False

        def sink(text: str) -> Awaitable[None] | None:
            # Synchronous, so a synchronous on_chunk stays one (ChunkSink).
            nonlocal streamed
            streamed = True
            assert on_chunk is not None
            return on_chunk(text)

        estimate = 0
        if state.tokens is not None:
            estimate = len(json.dumps(messages)) // 4 + _COMPLETION_ESTIMATE
        started = time.monotonic()
        for attempt in range(self._config.retries + 1):
            wait = state.not_before - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if state.tokens is not None:
                await state.tokens.take(estimate)
            gate: contextlib.AbstractAsyncContextManager[Any] = (
                state.calls if state.calls is not None else contextlib.nullcontext()
            )
            try:
                async with gate:
                    reply = await self._inner.complete(
                        tier=tier,
                        messages=messages,
                        tools=tools,
                        on_chunk=sink if on_chunk is not None else None,
                        temperature=temperature,
                        stream_args=stream_args,
                    )
            except ModelCallError as exc:
                if state.tokens is not None:
                    state.tokens.settle(estimate, 0)  # a refused call used nothing
                if exc.status_code not in RETRIED or streamed or attempt == self._config.retries:
                    if attempt:
                        raise ModelCallError(
                            exc.status_code,
                            f"{exc.detail} (gave up after {attempt + 1} tries in "
                            f"{time.monotonic() - started:.1f} s)",
                            retry_after_s=exc.retry_after_s,
                        ) from exc
                    raise
                metrics.MODEL_RETRIES.labels(model, str(exc.status_code)).inc()
                state.not_before = max(
                    state.not_before, time.monotonic() + self._delay(exc, attempt)
                )
                continue
            if state.tokens is not None:
                state.tokens.settle(estimate, reply.usage.total_tokens or estimate)
            return reply
        raise AssertionError("unreachable: the last attempt raises or returns")

    def _delay(self, exc: ModelCallError, attempt: int) -> float:
        """The provider's Retry-After (plus up to 10% jitter), else full-jitter backoff."""
        cap = self._config.retry_max_ms / 1000
        if exc.retry_after_s is not None:
            return min(cap, exc.retry_after_s) * random.uniform(1.0, 1.1)
        return random.uniform(0, min(cap, self._config.retry_base_ms / 1000 * 2**attempt))
