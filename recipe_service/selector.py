"""The recipe selector of process_create_delegate: one model call, MATCH or NONE, never throws.

The system prompt is the bundled `recipe-selector` recipe's prompt (read from the package, not
the cascade, so it is the same static text for every tenant); the user prompt carries the
engine catalog, the recipe inventory and the task. Every edge case ends as NONE with a
rationale, so callers have one failure pattern and nothing wrong is ever spawned.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from recipe_service.cascade import Recipes
from recipe_service.catalog import EngineCatalog
from recipe_service.inventory import Inventory, recipe_inventory
from recipe_service.models import Recipe
from vance.llm import ModelClient, warm_up

logger = logging.getLogger(__name__)

SELECTOR_RECIPE = "recipe-selector"
# Sent as X-Vance-Purpose: proxies and the scripted test model tell selector calls apart.
PURPOSE = "recipe-selector"
CLOSING = "Pick the matching recipe (or NONE) and emit a single JSON object now."


class Decision(StrEnum):
    MATCH = "MATCH"
    NONE = "NONE"


@dataclass(frozen=True)
class Selection:
    decision: Decision
    rationale: str
    recipe: str = ""
    engine: str = ""
    model_called: bool = False
    model: str = ""


def none(rationale: str, *, called: bool = False, model: str = "") -> Selection:
    return Selection(Decision.NONE, rationale, model_called=called, model=model)


class RecipeSelector:
    def __init__(
        self,
        recipes: Recipes,
        catalog: EngineCatalog,
        selector_recipe: Recipe,
        llm: Callable[[], ModelClient],
        *,
        timeout_s: float = 5.0,
    ) -> None:
        self._recipes = recipes
        self._catalog = catalog
        self._system_prompt = selector_recipe.spec.prompt_prefix.strip()
        params = selector_recipe.spec.params
        self._default_model = str(params.get("model") or "default:fast")
        temperature = params.get("temperature")
        self._temperature = float(temperature) if temperature is not None else None
        # A factory: the model client (litellm) is imported on the first selection, not when
        # recipe_service starts.
        self._llm_factory = llm
        self._llm: ModelClient | None = None
        self._timeout_s = timeout_s

    async def warm_up(self) -> None:
        """Imports the model client's modules in a thread, then builds the client."""
        try:
            await asyncio.to_thread(warm_up)
            if self._llm is None:
                self._llm = self._llm_factory()
        except Exception:
            logger.warning("warming up the selector's model client failed", exc_info=True)

    async def select(
        self,
        tenant: str,
        project: str,
        task: str,
        *,
        model: str = "",
        available: Collection[str] = (),
    ) -> Selection:
        """MATCH with a recipe from the inventory, or NONE with the reason. Never raises."""
        try:
            return await self._select(
                tenant, project, task, model or self._default_model, available
            )
        except Exception as exc:  # the contract: every failure is a NONE the caller can read
            logger.exception("recipe selection failed")
            return none(f"selector failed: {exc}")

    async def _select(
        self, tenant: str, project: str, task: str, model: str, available: Collection[str]
    ) -> Selection:
        if not task.strip():
            return none("empty task description")
        inventory = await recipe_inventory(self._recipes, tenant, project, available=available)
        if not inventory.entries:
            where = f"project {project!r}" if project else f"tenant {tenant!r}"
            return none(f"no recipes available for {where} (project, tenant or bundled)")
        messages = [
            {"role": "system", "content": self._system_prompt},
            {"role": "user", "content": self.user_prompt(inventory, task, available)},
        ]
        try:
            if self._llm is None:
                self._llm = self._llm_factory()
            async with asyncio.timeout(self._timeout_s):
                reply = await self._llm.complete(
                    tier=model, messages=messages, temperature=self._temperature
                )
        except TimeoutError:
            logger.info("selector model call timed out after %.1f s", self._timeout_s)
            return none(f"LLM call timed out after {self._timeout_s:g} s", called=True, model=model)
        except Exception as exc:
            logger.info("selector model call failed: %s", exc)
            return none(f"LLM call failed: {exc}", called=True, model=model)
        return parse_reply(reply.text, inventory, model=model)

    def user_prompt(self, inventory: Inventory, task: str, available: Collection[str]) -> str:
        return (
            "## Engine catalog\n"
            f"{self._catalog.markdown(available)}\n\n"
            "## Recipe inventory\n"
            f"{inventory.markdown()}\n\n"
            "## Task\n"
            f"{task.strip()}\n\n"
            f"{CLOSING}"
        )


def parse_reply(text: str, inventory: Inventory, *, model: str = "") -> Selection:
    """The model's answer as a Selection; the recipe must exist verbatim in the inventory
    even though the prompt says so already (defence in depth against invented names)."""
    start = text.find("{")
    if start < 0:
        return none("LLM reply has no JSON object", called=True, model=model)
    try:
        doc, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        return none(f"JSON parse error: {exc}", called=True, model=model)
    if not isinstance(doc, dict):
        return none("LLM reply has no JSON object", called=True, model=model)
    decision = str(doc.get("decision") or "").strip().upper()
    rationale = _text(doc.get("rationale"))
    if decision == Decision.NONE:
        return none(rationale or "the selector found no fitting recipe", called=True, model=model)
    if decision != Decision.MATCH:
        return none(
            f"LLM reply has no valid decision (expected MATCH or NONE, got {decision or 'none'})",
            called=True,
            model=model,
        )
    name = _text(doc.get("recipe"))
    entry = inventory.get(name)
    if entry is None:
        return none(f"unknown recipe '{name}' — not in inventory", called=True, model=model)
    if not entry.engine_available:
        return none(
            f"recipe '{name}' needs engine '{entry.engine}', which no worker runs now",
            called=True,
            model=model,
        )
    return Selection(
        Decision.MATCH,
        rationale or f"recipe '{name}' fits the task",
        recipe=entry.name,
        engine=entry.engine,
        model_called=True,
        model=model,
    )


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""
