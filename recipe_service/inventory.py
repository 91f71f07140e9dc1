"""The recipe inventory: the recipes a selector may pick for a task, across the cascade."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from recipe_service.cascade import Recipes
from recipe_service.models import Recipe, RecipeSource

# A cap on prompt size: past it, the selector sees the strongest levels first.
RECIPE_LIST_LIMIT = 50
# The architect is reached through the fallback, never as a match: a MATCH on it would start
# a recipe design and spawn nothing that does the task.
ARCHITECT_ENGINE = "slartibartfast"
# Engines that never read a process's `goal`: they answer a session's user (arthur) or hub
# (eddie). A MATCH on a recipe of theirs (e.g. Arthur's `discuss`) would start a child that
# waits for a user message no one sends, and never reports to its parent (seed 003 §3).
CONVERSATION_ENGINES = frozenset({"arthur", "eddie"})
_LEVEL_ORDER = {RecipeSource.PROJECT: 0, RecipeSource.TENANT: 1, RecipeSource.BUNDLED: 2}


@dataclass(frozen=True)
class InventoryEntry:
    name: str
    engine: str
    description: str
    source: RecipeSource
    engine_available: bool = True


@dataclass(frozen=True)
class Inventory:
    entries: list[InventoryEntry]
    total: int  # before the cap

    def names(self) -> set[str]:
        return {e.name for e in self.entries}

    def get(self, name: str) -> InventoryEntry | None:
        return next((e for e in self.entries if e.name == name), None)

    def markdown(self) -> str:
        lines = []
        for e in self.entries:
            mark = "" if e.engine_available else " (no worker runs this engine now)"
            description = " ".join(e.description.split())
            lines.append(f"- `{e.name}` (engine {e.engine}){mark}: {description}")
        if self.total > len(self.entries):
            lines.append(f"- ... {self.total - len(self.entries)} more recipes not shown")
        return "\n".join(lines)


def user_pickable(recipe: Recipe) -> bool:
    """Listed, not internal, no system name (a leading `_`, which covers `_slart/*`), on an
    engine that works a goal (not the architect, not a conversation engine)."""
    return (
        recipe.spec.listed
        and not recipe.spec.internal
        and not recipe.name.startswith("_")
        and recipe.engine != ARCHITECT_ENGINE
        and recipe.engine not in CONVERSATION_ENGINES
    )


async def recipe_inventory(
    recipes: Recipes,
    tenant: str,
    project: str,
    *,
    available: Collection[str] = (),
    limit: int = RECIPE_LIST_LIMIT,
) -> Inventory:
    """Project, then tenant, then bundled recipes (per name the strongest level, as the
    cascade resolves them), each level by name, capped at `limit`. `available` marks recipes
    whose engine no worker runs; empty means unknown and marks nothing."""
    found = [r for r in await recipes.list(tenant, project, listed_only=True) if user_pickable(r)]
    found.sort(key=lambda r: (_LEVEL_ORDER[r.source], r.name))
    entries = [
        InventoryEntry(
            name=r.name,
            engine=r.engine,
            description=r.spec.description.strip(),
            source=r.source,
            engine_available=not available or r.engine in available,
        )
        for r in found[:limit]
    ]
    return Inventory(entries, total=len(found))
