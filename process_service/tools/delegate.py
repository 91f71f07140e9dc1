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
from collections.abc import Awaitable, Callable, Mapping
from typing import ClassVar

from pydantic import Field, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

from process_service.lifecycle.processes import Processes
from process_service.process_model import Process
from process_service.tool_args import (
    OptText,
    SpawnResult,
    Text,
    ToolArgs,
    ToolError,
    ToolResult,
    parse_args,
    reason,
    rpc_details,
)
from vance.domain import CloseReason, ThinkProcess
from vance.errors import VanceError
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.internal.v1 import recipe_internal_pb2_grpc
from vance.json_types import JsonObject, JsonValue

logger = logging.getLogger(__name__)

# process_create's spawn (process_tools.py): the caller, process_create's arguments, the key,
# the connection profile.
Spawn = Callable[[Process, JsonObject, str, str], Awaitable[ThinkProcess]]

SLART_RECIPE = "slartibartfast"
# The hard cutoff of the synchronous fallback; the slartibartfast recipe's
# `params.fallbackWaitMs` changes it (per tenant or project through the recipe cascade).
DEFAULT_WAIT_MS = 240_000
MAX_WAIT_MS = 600_000
# tool_service's bound on the whole call: the longest wait plus the spawns around it.
TOOL_TIMEOUT_MS = MAX_WAIT_MS + 60_000
_POLL_FIRST_S, _POLL_MAX_S = 0.05, 0.5


class DelegateArgs(ToolArgs):
    name: Text
    task: OptText = ""
    fallback_on_none: bool = True
    async_fallback: bool = False
    params: JsonObject = Field(default_factory=dict)  # recipe parameters, free-form JSON
    # Passed to process_create as they came (it checks them), when given.
    title: JsonValue = None
    steer_content: JsonValue = None

    @field_validator("fallback_on_none", "async_fallback", mode="before")
    @classmethod
    def _flag(cls, value: JsonValue, info: ValidationInfo) -> JsonValue:
        # null is the default (as a missing argument); anything but a boolean is an error.
        name = info.field_name or ""
        if value is None:
            default: bool = cls.model_fields[name].default
            return default
        if not isinstance(value, bool):
            raise reason(f"'{to_camel(name)}' must be true or false")
        return value

    @field_validator("params", mode="before")
    @classmethod
    def _object(cls, value: JsonValue) -> JsonValue:
        if not value:
            return {}
        if not isinstance(value, dict):
            raise reason("'params' must be an object")
        return value


class FallbackResult(ToolResult):
    """What became of Slartibartfast's recipe design, the fallback on NONE."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset(
        {"slart_process_id", "slart_process_name", "recipe", "reason", "engine"}
    )

    slart_process_id: str | None = None
    slart_process_name: str | None = None
    status: str = ""  # PENDING, DONE, TIMEOUT, FAILED
    recipe: str | None = None  # the generated recipe
    reason: str | None = None
    engine: str | None = None  # the engine of the child spawned from it


class DelegateResult(ToolResult):
    """process_create_delegate's answer: the selector's decision, and the child spawned (on a
    MATCH, or from the fallback's recipe)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset(
        {"fallback", "outcome", "slart_process_id", "process"}
    )

    decision: str  # MATCH or NONE
    recipe: str | None  # null when NONE (sent as null)
    engine: str | None
    rationale: str
    fallback: FallbackResult | None = None
    outcome: str | None = None  # PENDING while an asynchronous fallback runs
    slart_process_id: str | None = None
    process: SpawnResult | None = None

    def to_json(self) -> JsonObject:
        out = super().to_json()
        if self.fallback is not None:  # its own omissions
            out["fallback"] = self.fallback.to_json()
        return out


# SelectRecipe's deadline: recipe_service cuts its model call at recipes.selector_timeout_ms
# (at most 600 s) and answers NONE itself; this only ends the wait for one that does not answer.
SELECT_TIMEOUT_S = 660.0


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
        self, caller: Process, args: Mapping[str, JsonValue], key: str, profile: str
    ) -> DelegateResult:
        parsed = parse_args(DelegateArgs, args)
        task = parsed.task
        selection = await self._select(caller, task)
        matched = selection.decision == ripb.SELECTION_DECISION_MATCH
        out = DelegateResult(
            decision="MATCH" if matched else "NONE",
            recipe=selection.recipe or None,
            engine=selection.engine or None,
            rationale=selection.rationale,
        )
        # The same arguments process_create takes; title, steerContent and params pass 1:1.
        passed: JsonObject = {
            k: v for k, v in (("title", parsed.title), ("steerContent", parsed.steer_content)) if v
        }
        spawn_args: JsonObject = {
            "name": parsed.name,
            "goal": task,
            **passed,
            "params": parsed.params,
        }
        if matched:
            child = await self._spawn(
                caller, {**spawn_args, "recipe": selection.recipe}, key, profile
            )
            out.process = SpawnResult.of(child)
            return out
        if not parsed.fallback_on_none or not task:
            return out
        return await self._fallback(caller, out, spawn_args, key, profile, parsed.async_fallback)

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
                ),
                timeout=SELECT_TIMEOUT_S,
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
        out: DelegateResult,
        spawn_args: JsonObject,
        key: str,
        profile: str,
        async_fallback: bool,
    ) -> DelegateResult:
        name = str(spawn_args["name"])
        slart_args: JsonObject = {
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
            out.fallback = FallbackResult(
                status="FAILED", reason=f"Slartibartfast not started: {exc}"
            )
            return out
        fallback = FallbackResult(slart_process_id=slart.id, slart_process_name=slart.name)
        out.fallback = fallback
        if async_fallback:
            fallback.status = "PENDING"
            out.outcome = "PENDING"
            out.slart_process_id = slart.id
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
            fallback.status = "TIMEOUT"
            fallback.reason = (
                f"Slartibartfast did not finish within {wait_ms / 1000:.0f}s; it was stopped "
                "and nothing was spawned"
            )
            return out
        close_reason = closed.close_reason
        detail = closed.close_detail
        if close_reason is not CloseReason.DONE or not detail:
            fallback.status = "FAILED"
            said = close_reason.value if close_reason else "without a result"
            fallback.reason = f"Slartibartfast closed {said}: {detail}"
            return out
        fallback.status, fallback.recipe = "DONE", detail
        try:
            child = await self._spawn(caller, {**spawn_args, "recipe": detail}, key, profile)
        except ToolError as exc:
            fallback.status = "FAILED"
            fallback.reason = f"the generated recipe {detail!r} was not spawned: {exc}"
            return out
        fallback.engine = child.engine
        out.process = SpawnResult.of(child)
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


def _wait_ms(params: Mapping[str, object]) -> int:
    value = params.get("fallbackWaitMs")
    try:
        wait = int(value) if isinstance(value, int | float | str) else DEFAULT_WAIT_MS
    except ValueError:
        wait = DEFAULT_WAIT_MS
    return max(1, min(wait, MAX_WAIT_MS))
