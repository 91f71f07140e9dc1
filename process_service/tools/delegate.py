"""process_create_delegate: spawn by task description.

recipe_service's selector picks a recipe (MATCH) or answers NONE. A MATCH spawns through the
same `spawn` process_create uses. On NONE the fallback (on by default) spawns Slartibartfast
as a child of the caller: synchronously it waits for the generated recipe (a hard cutoff) and
spawns it; asynchronously it returns PENDING at once and the caller hears of Slartibartfast's
close through the usual parent notification.

The tool runs inside the caller's turn (its lane stays held); the wait is an asyncio poll of
the store, so neither process_service's loop nor the caller's worker slot is blocked, and
Slartibartfast runs on its own lane on another slot.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from process_service.lifecycle.processes import Processes
from process_service.process_model import Process
from process_service.tool_args import ToolError, arg_bool, arg_str, rpc_details, spawn_result
from vance.domain import CloseReason, ThinkProcess
from vance.errors import VanceError
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.internal.v1 import recipe_internal_pb2_grpc

logger = logging.getLogger(__name__)

Spawn = Callable[[Process, dict[str, Any], str, str], Awaitable[ThinkProcess]]

SLART_RECIPE = "slartibartfast"
# The hard cutoff of the synchronous fallback; the slartibartfast recipe's
# `params.fallbackWaitMs` changes it (per tenant or project through the recipe cascade).
DEFAULT_WAIT_MS = 240_000
MAX_WAIT_MS = 600_000
# tool_service's bound on the whole call: the longest wait plus the spawns around it.
TOOL_TIMEOUT_MS = MAX_WAIT_MS + 60_000
_POLL_FIRST_S, _POLL_MAX_S = 0.05, 0.5


class Delegation:
    def __init__(
        self,
        spawn: Spawn,
        processes: Processes,
        recipes: recipe_internal_pb2_grpc.RecipeInternalServiceAsyncStub,
        engines_available: Callable[[], set[str]],
    ) -> None:
        self._spawn = spawn
        self._processes = processes
        self._recipes = recipes
        self._engines_available = engines_available

    async def run(
        self, caller: Process, args: dict[str, Any], key: str, profile: str
    ) -> dict[str, Any]:
        name = arg_str(args, "name")
        task = args.get("task")
        if task is not None and not isinstance(task, str):
            raise ToolError("'task' must be a string")
        task = (task or "").strip()
        fallback_on_none = arg_bool(args, "fallbackOnNone", True)
        async_fallback = arg_bool(args, "asyncFallback", False)
        params = args.get("params") or {}
        if not isinstance(params, dict):
            raise ToolError("'params' must be an object")
        selection = await self._select(caller, task)
        matched = selection.decision == ripb.SELECTION_DECISION_MATCH
        out: dict[str, Any] = {
            "decision": "MATCH" if matched else "NONE",
            "recipe": selection.recipe or None,
            "engine": selection.engine or None,
            "rationale": selection.rationale,
        }
        # The same arguments process_create takes; title, steerContent and params pass 1:1.
        passed = {k: args[k] for k in ("title", "steerContent") if args.get(k)}
        spawn_args = {"name": name, "goal": task, **passed, "params": params}
        if matched:
            child = await self._spawn(
                caller, {**spawn_args, "recipe": selection.recipe}, key, profile
            )
            out["process"] = spawn_result(child)
            return out
        if not fallback_on_none or not task:
            return out
        return await self._fallback(caller, out, spawn_args, key, profile, async_fallback)

    async def _select(self, caller: Process, task: str) -> ripb.RecipeSelection:
        try:
            selection: ripb.RecipeSelection = await self._recipes.SelectRecipe(
                ripb.SelectRecipeRequest(
                    tenant_id=caller.tenant_id,
                    project_id=caller.project_id,
                    task=task,
                    # The selector calls the model the caller runs on (same tier or model).
                    model=str(caller.params.get("model") or ""),
                    available_engines=sorted(self._engines_available()),
                )
            )
            return selection
        except Exception as exc:
            # recipe_service unreachable: still a NONE, so the caller has one failure pattern.
            return ripb.RecipeSelection(
                decision=ripb.SELECTION_DECISION_NONE,
                rationale=f"recipe selector unavailable: {rpc_details(exc)}",
            )

    async def _fallback(
        self,
        caller: Process,
        out: dict[str, Any],
        spawn_args: dict[str, Any],
        key: str,
        profile: str,
        async_fallback: bool,
    ) -> dict[str, Any]:
        name = str(spawn_args["name"])
        slart_args = {
            "name": f"{name}-slart",
            "goal": spawn_args["goal"],
            "recipe": SLART_RECIPE,
            "title": f"Recipe design for {name}",
            # Tells Slartibartfast whether the tool spawns its recipe (sync) or the caller has
            # to (async), so its report to the caller says the right thing.
            "params": {"delegateMode": "async" if async_fallback else "sync"},
        }
        try:
            slart = await self._spawn(caller, slart_args, f"{key}:slart", profile)
        except ToolError as exc:
            out["fallback"] = {"status": "FAILED", "reason": f"Slartibartfast not started: {exc}"}
            return out
        fallback: dict[str, Any] = {"slartProcessId": slart.id, "slartProcessName": slart.name}
        out["fallback"] = fallback
        if async_fallback:
            fallback["status"] = "PENDING"
            out["outcome"] = "PENDING"
            out["slartProcessId"] = slart.id
            return out
        wait_ms = _wait_ms(slart.params)
        closed = await self._wait_closed(slart.id, wait_ms / 1000)
        if closed is None:
            doc = await self._processes.get(slart.id)
            try:
                # Stopped by its parent: no STOPPED event goes back to the caller. Still INIT
                # (no slot took it yet) is stopped too: it would design a recipe nobody spawns.
                doc = await self._processes.stop(doc, stopped_by=caller.id, allow_init=True)
            except VanceError as exc:
                logger.info("slartibartfast %s not stopped: %s", slart.id, exc.message)
            if doc.close_reason is CloseReason.DONE:  # done just in time
                closed = doc
        if closed is None:
            fallback["status"] = "TIMEOUT"
            fallback["reason"] = (
                f"Slartibartfast did not finish within {wait_ms / 1000:.0f}s; it was stopped "
                "and nothing was spawned"
            )
            return out
        reason = closed.close_reason
        detail = closed.close_detail
        if reason is not CloseReason.DONE or not detail:
            fallback["status"] = "FAILED"
            said = reason.value if reason else "without a result"
            fallback["reason"] = f"Slartibartfast closed {said}: {detail}"
            return out
        fallback.update(status="DONE", recipe=detail)
        try:
            child = await self._spawn(caller, {**spawn_args, "recipe": detail}, key, profile)
        except ToolError as exc:
            fallback["status"] = "FAILED"
            fallback["reason"] = f"the generated recipe {detail!r} was not spawned: {exc}"
            return out
        fallback["engine"] = child.engine
        out["process"] = spawn_result(child)
        return out

    async def _wait_closed(self, process_id: str, timeout_s: float) -> Process | None:
        """The process once it is CLOSED, or None at the cutoff. A store poll with
        backoff: the close may be committed by any process_service replica."""
        deadline = time.monotonic() + timeout_s
        delay = _POLL_FIRST_S
        while True:
            doc = await self._processes.get(process_id)
            if doc.closed:
                return doc
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 2, _POLL_MAX_S)


def _wait_ms(params: dict[str, Any]) -> int:
    value = params.get("fallbackWaitMs")
    try:
        wait = int(value) if value is not None else DEFAULT_WAIT_MS
    except (TypeError, ValueError):
        wait = DEFAULT_WAIT_MS
    return max(1, min(wait, MAX_WAIT_MS))
