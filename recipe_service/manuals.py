"""Manuals: markdown named by a recipe's params.manualPaths, found project -> tenant -> bundled."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from recipe_service.cascade import Recipes, lookup_scopes
from recipe_service.models import NAME_PATTERN, Manual, RecipeSource
from recipe_service.store import TENANT_SCOPE, ScopedCollection, scope_of
from recipe_service.validation import check_manual, check_name, check_scope
from vance.clock import Clock
from vance.errors import NotFoundError
from vance.store import Document


def manual_name(path: str) -> str:
    """`manuals/recipes.md`, `recipes.md` and `recipes` all name the manual `recipes`."""
    return path.strip().rsplit("/", 1)[-1].removesuffix(".md")


def manual_names(paths: Any) -> list[str]:
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, list):
        return []
    return list(dict.fromkeys(manual_name(str(p)) for p in paths if str(p).strip()))


@dataclass(frozen=True)
class ManualListing:
    manuals: list[Manual]
    missing: list[str]


class Manuals:
    def __init__(
        self,
        collection: ScopedCollection,
        bundled: dict[str, Manual],
        recipes: Recipes,
        clock: Clock,
    ) -> None:
        self._stored = collection
        self._bundled = bundled
        self._recipes = recipes
        self._clock = clock

    async def find(self, tenant: str, project: str, name: str) -> Manual | None:
        if not re.fullmatch(NAME_PATTERN, name):
            return None
        scopes = lookup_scopes(tenant, project)
        if scopes:
            found = await self._stored.find(tenant, scopes, name)
            for scope in scopes:
                if scope in found:
                    return _from_stored(found[scope])
        return self._bundled.get(name)

    async def listing(
        self,
        tenant: str,
        project: str,
        *,
        recipe: str,
        engine: str,
        profile: str,
        paths: list[str],
        bundled: bool = False,
    ) -> ManualListing:
        if bundled:
            return ManualListing(
                manuals=[self._bundled[name] for name in sorted(self._bundled)], missing=[]
            )
        names = (
            manual_names(paths)
            if paths
            else await self._recipe_manuals(
                tenant, project, recipe=recipe, engine=engine, profile=profile
            )
        )
        manuals, missing = [], []
        for name in names:
            found = await self.find(tenant, project, name)
            if found is None:
                missing.append(name)
            else:
                manuals.append(found)
        return ManualListing(manuals=manuals, missing=missing)

    async def read(
        self, tenant: str, project: str, name: str, *, recipe: str, engine: str, profile: str
    ) -> Manual:
        name = manual_name(name)
        if recipe or engine:
            allowed = await self._recipe_manuals(
                tenant, project, recipe=recipe, engine=engine, profile=profile
            )
            if name not in allowed:
                raise NotFoundError(
                    f"recipe {recipe or engine!r} names no manual {name!r}"
                    f" (it names: {', '.join(allowed) or 'none'})",
                    reason="manual_not_in_recipe",
                )
        found = await self.find(tenant, project, name)
        if found is None:
            raise NotFoundError(f"no manual {name!r}", reason="manual_not_found")
        return found

    async def put(self, tenant: str, project: str, name: str, content: str) -> Manual:
        """Creates or replaces a stored manual (manuals are edited as whole files)."""
        check_scope(tenant, project)
        check_manual(name, content)
        doc = await self._stored.replace(
            tenant,
            scope_of(project),
            name,
            {"content": content, "updated_at_ms": self._clock.now_ms()},
            upsert=True,
        )
        if doc is None:  # an upsert returns the document; this guards a store that does not
            raise NotFoundError(f"manual {name!r} was not stored", reason="manual_not_found")
        return _from_stored(doc)

    async def delete(self, tenant: str, project: str, name: str) -> None:
        check_scope(tenant, project)
        if not await self._stored.delete(
            tenant, scope_of(project), check_name(name, what="manual")
        ):
            raise NotFoundError(f"no stored manual {name!r}", reason="manual_not_found")

    async def _recipe_manuals(
        self, tenant: str, project: str, *, recipe: str, engine: str, profile: str
    ) -> list[str]:
        # Applied, not raw: a profile block can name its own manuals in its params.
        applied = await self._recipes.apply(
            tenant, project, recipe=recipe, engine=engine, profile=profile, caller_params={}
        )
        return manual_names(applied.params.get("manualPaths"))


def _from_stored(doc: Document) -> Manual:
    scope = str(doc["scope"])
    return Manual(
        name=str(doc["name"]),
        content=str(doc["content"]),
        source=RecipeSource.TENANT if scope == TENANT_SCOPE else RecipeSource.PROJECT,
    )
