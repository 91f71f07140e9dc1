"""Slartibartfast: designs a recipe for a task no existing recipe fits, in one turn.

PROPOSING (the model writes a recipe) -> VALIDATING (slart_store_recipe checks the engine, the
referenced recipes and the recipe format, and stores it) -> REPAIRING (the model gets every
problem back; bounded attempts) -> DONE with the stored path `_slart/<runId>/<name>` as the
close detail, or FAILED (closed INCOMPLETE, which the parent hears as FAILED) with the reasons.
Each phase goes out as a `process-progress` STATUS event.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re

import yaml

from engine_worker.context import ThinkEngineContext
from engine_worker.engine import EngineDefaults, TurnOutcome
from engine_worker.json_types import Json, JsonObject, ModelMessage
from vance.domain import ChatRole, CloseReason, ProcessStatus, ThinkProcess, ToolCallStatus
from vance.llm_core import ModelCallError, ModelReply

logger = logging.getLogger(__name__)

TOOLS = ["slart_context", "slart_store_recipe"]
NAME_PATTERN = r"^[a-z][a-z0-9-]{0,63}$"
DEFAULT_ATTEMPTS = 3
# A model call that failed in a way the next call may not (no answer or a timeout (0), 408,
# 500) is tried again after a doubling delay before the design fails. Overload answers (429,
# 502-504) are already retried by the model client (vance/llm_limits.py).
TRANSIENT = frozenset({0, 408, 500})
DEFAULT_MODEL_RETRIES = 2
DEFAULT_RETRY_BASE_MS = 1_000
FALLBACK_PROMPT = "You are Slartibartfast, the recipe architect. Design one recipe for the task."
FORMAT = """\
Answer with one YAML document (you may wrap it in ```yaml fences) and nothing else:

name: <lowercase-name-with-dashes>
description: <what the recipe is for and what it is not for; later selection matches on it>
engine: <one engine from the catalog that a worker runs>
title: <short title>
params:
  model: <a tier such as default:fast or default:analyze>
  maxIterations: <number>
promptMode: APPEND
promptPrefix: |
  <the worker's instructions for this kind of task>
allowedToolsAdd: []      # optional tool names, globs or @labels
"""
REPAIR = (
    "The recipe failed validation:\n{problems}\n\nFix every problem and answer with the whole "
    "corrected YAML document, in the same format."
)


class Slartibartfast(EngineDefaults):
    name = "slartibartfast"
    title = "Slartibartfast"
    description = "Recipe architect: designs, validates and stores a recipe for a task."
    version = "1.0.0"

    async def start(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        return await self._design(process, ctx)

    async def resume(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        return await self._design(process, ctx)

    async def steer(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        # It closes at the end of its first turn; a message that still reaches it changes nothing.
        await ctx.drain_pending()
        return TurnOutcome.idle()

    def summarize_for_parent(self, process: ThinkProcess, outcome: TurnOutcome) -> str:
        return outcome.close_detail or f"{process.name} {outcome.status.value.lower()}"

    async def _design(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        await ctx.drain_pending()
        task = process.goal.strip()
        if not task:
            return _failed("no task to design a recipe for")
        await ctx.chat.append(ChatRole.USER, task)
        await ctx.tools.pool(TOOLS)
        known = await ctx.tools.invoke("slart_context", {}, "context")
        if known.status is not ToolCallStatus.SUCCESS:
            return _failed(f"the engine catalog is not available: {known.error}")
        prompt = str(process.recipe_snapshot.get("prompt") or FALLBACK_PROMPT)
        messages: list[ModelMessage] = [
            {"role": "system", "content": f"{prompt.strip()}\n\n{FORMAT}"},
            {"role": "user", "content": _brief(known.result, task)},
        ]
        attempts = max(1, int(ctx.settings.get("maxAttempts", DEFAULT_ATTEMPTS)))
        tier = str(ctx.settings.get("model", "default:analyze"))
        problems: list[str] = []
        for attempt in range(1, attempts + 1):
            phase = "PROPOSING" if attempt == 1 else "REPAIRING"
            await ctx.events.progress("STATUS", {"phase": phase, "attempt": attempt})
            try:
                reply = await _complete(ctx, tier, messages, attempt)
            except Exception as exc:
                return _failed(f"model call failed: {exc}")
            await ctx.chat.append(ChatRole.ASSISTANT, reply.text)
            messages.append({"role": "assistant", "content": reply.text})
            await ctx.events.progress("STATUS", {"phase": "VALIDATING", "attempt": attempt})
            name, text, problems = parse_proposal(reply.text)
            if not problems:
                stored = await ctx.tools.invoke(
                    "slart_store_recipe", {"name": name, "yaml": text}, f"store-{attempt}"
                )
                if stored.status is ToolCallStatus.SUCCESS and isinstance(stored.result, dict):
                    return await _done(ctx, stored.result, attempt, _next_step(ctx, stored.result))
                problems = [stored.error or "the recipe was not stored"]
            await ctx.chat.append(
                ChatRole.SYSTEM, "Validation failed: " + "; ".join(problems), {"attempt": attempt}
            )
            messages.append({"role": "user", "content": REPAIR.format(problems=_bullets(problems))})
        await ctx.events.progress("STATUS", {"phase": "FAILED", "problems": problems})
        return _failed(f"no valid recipe after {attempts} attempts: {'; '.join(problems)}")


async def _complete(
    ctx: ThinkEngineContext, tier: str, messages: list[ModelMessage], attempt: int
) -> ModelReply:
    """One design call; a transient failure is tried again (`modelRetries` times, after
    `modelRetryBaseMs` doubling), each retry visible as a RETRYING status event."""
    retries = max(0, int(ctx.settings.get("modelRetries", DEFAULT_MODEL_RETRIES)))
    delay = max(0, int(ctx.settings.get("modelRetryBaseMs", DEFAULT_RETRY_BASE_MS))) / 1000
    for retry in range(retries + 1):
        try:
            return await ctx.llm.complete(tier=tier, messages=messages)
        except ModelCallError as exc:
            if exc.status_code not in TRANSIENT or retry == retries:
                raise
            logger.info("slartibartfast model call failed (%s), retrying", exc.status_code)
            await ctx.events.progress(
                "STATUS",
                {"phase": "RETRYING", "attempt": attempt, "retry": retry + 1, "error": str(exc)},
            )
            await asyncio.sleep(delay * 2**retry)
    raise AssertionError("unreachable: the last try returns or raises")


def parse_proposal(text: str) -> tuple[str, str, list[str]]:
    """(name, recipe YAML without the name, problems) from the model's answer."""
    fenced = re.search(r"```(?:ya?ml)?\s*\n(.*?)```", text, re.DOTALL)
    body = fenced.group(1) if fenced else text
    try:
        doc = yaml.safe_load(body)
    except yaml.YAMLError as exc:
        return "", "", [f"the answer is not valid YAML: {exc}"]
    if not isinstance(doc, dict):
        return "", "", ["the answer must be one YAML mapping with name, description and engine"]
    name = doc.pop("name", None)
    if not isinstance(name, str) or not re.fullmatch(NAME_PATTERN, name):
        return "", "", [f"name {name!r} must match {NAME_PATTERN}"]
    return name, yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), []


def _brief(known: Json, task: str) -> str:
    known = known if isinstance(known, dict) else {}
    recipes = "\n".join(
        f"- `{r.get('name')}` (engine {r.get('engine')}): {r.get('description')}"
        for r in known.get("recipes") or []
    )
    return (
        f"## Engine catalog\n{known.get('catalog', '')}\n\n"
        f"## Existing recipes\n{recipes or '- none'}\n\n"
        f"## Task\n{task}\n\nDesign the recipe now."
    )


def _bullets(problems: list[str]) -> str:
    return "\n".join(f"- {p}" for p in problems)


def _next_step(ctx: ThinkEngineContext, stored: JsonObject) -> str:
    """What the parent should do with the recipe: process_create_delegate's synchronous mode
    spawns it itself, so telling the caller to spawn it would start it twice."""
    if ctx.settings.get("delegateMode") == "sync":
        return "process_create_delegate starts it for you."
    return f"Spawn it with process_create recipe={json.dumps(stored.get('recipe', ''))}."


async def _done(
    ctx: ThinkEngineContext, stored: JsonObject, attempt: int, next_step: str
) -> TurnOutcome:
    path = str(stored.get("recipe") or "")
    engine = str(stored.get("engine") or "")
    await ctx.events.progress("STATUS", {"phase": "DONE", "recipe": path, "attempt": attempt})
    note = f"Stored recipe {path} (engine {engine})."
    await ctx.chat.append(ChatRole.SYSTEM, note, {"recipe": path})
    return TurnOutcome(
        ProcessStatus.CLOSED,
        CloseReason.DONE,
        # The path is the result the delegate tool waits for (it reads the close detail).
        close_detail=path,
        summary=(
            f"Generated recipe {path} (engine {engine}): {stored.get('description', '')} "
            f"{next_step}"
        ),
        payload={"recipe": path, "engine": engine},
    )


def _failed(reason: str) -> TurnOutcome:
    return TurnOutcome(
        ProcessStatus.CLOSED, CloseReason.INCOMPLETE, close_detail=reason, summary=reason
    )
