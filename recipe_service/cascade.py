"""Recipes across the cascade (project -> tenant -> bundled) and their management."""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import ValidationError

from recipe_service.catalog import EngineCatalog
from recipe_service.defaulting import apply_defaulting
from recipe_service.lifecycle import resolve_lifecycle
from recipe_service.models import (
    DEFAULT_RECIPE,
    AppliedRecipe,
    Lifecycle,
    ModelSize,
    Recipe,
    RecipeSource,
    RecipeSpec,
    ResolvedLifecycle,
)
from recipe_service.store import TENANT_SCOPE, ScopedCollection, scope_of
from recipe_service.validation import (
    check_name,
    check_scope,
    integral_floats_to_ints,
    parse_yaml,
    validate_document,
)
from vance.clock import Clock
from vance.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
)
from vance.store import Document

# A recipe as a caller hands it in: YAML text or an already structured document.
RecipeInput = str | dict[str, Any]


def lookup_scopes(tenant: str, project: str) -> list[str]:
    """Stored levels to search, strongest first; without a tenant only bundled recipes exist."""
    if not tenant:
        return []
    if project and project != TENANT_SCOPE:
        return [project, TENANT_SCOPE]
    return [TENANT_SCOPE]


class Recipes:
    def __init__(
        self,
        collection: ScopedCollection,
        catalog: EngineCatalog,
        bundled: dict[str, Recipe],
        clock: Clock,
    ) -> None:
        self._stored = collection
        self._catalog = catalog
        self._bundled = bundled
        self._clock = clock

    async def find(self, tenant: str, project: str, name: str) -> Recipe | None:
        """First hit wins: project, then tenant, then bundled. Nothing is merged."""
        scopes = lookup_scopes(tenant, project)
        if scopes and name:
            found = await self._stored.find(tenant, scopes, name)
            for scope in scopes:
                if scope in found:
                    return _from_stored(found[scope])
        return self._bundled.get(name)

    async def get(self, tenant: str, project: str, name: str) -> Recipe:
        recipe = await self.find(tenant, project, name)
        if recipe is None:
            raise NotFoundError(f"no recipe {name!r}", reason="recipe_not_found")
        return recipe

    async def list(
        self,
        tenant: str,
        project: str,
        *,
        source: RecipeSource | None = None,
        listed_only: bool = False,
    ) -> list[Recipe]:
        """The effective view (per name the strongest level), or one level's own recipes."""
        if source is RecipeSource.BUNDLED:
            found = dict(self._bundled)
        elif source is not None:
            if source is RecipeSource.PROJECT and not project:
                raise InvalidArgumentError("listing project recipes needs project_id")
            scope = project if source is RecipeSource.PROJECT else TENANT_SCOPE
            stored = await self._stored.list(tenant, [scope]) if tenant else {}
            found = {str(d["name"]): _from_stored(d) for d in stored.get(scope, [])}
        else:
            found = dict(self._bundled)
            scopes = lookup_scopes(tenant, project)
            stored = await self._stored.list(tenant, scopes) if scopes else {}
            for scope in reversed(scopes):  # weakest first, so stronger levels overwrite
                found.update({str(d["name"]): _from_stored(d) for d in stored.get(scope, [])})
        recipes = [found[n] for n in sorted(found)]
        if listed_only:
            # A leading underscore marks system names (`_slart/...` generated recipes).
            recipes = [
                r
                for r in recipes
                if r.spec.listed and not r.spec.internal and not r.name.startswith("_")
            ]
        return recipes

    async def create(self, tenant: str, project: str, name: str, content: RecipeInput) -> Recipe:
        scope, text = self._prepare(tenant, project, name, content)
        now = self._clock.now_ms()
        fields = {"text": text, "created_at_ms": now, "updated_at_ms": now}
        if not await self._stored.insert(tenant, scope, name, fields):
            raise AlreadyExistsError(
                f"recipe {name!r} already exists at {_level(scope)} level", reason="recipe_exists"
            )
        return await self.get_stored(tenant, project, name)

    async def update(self, tenant: str, project: str, name: str, content: RecipeInput) -> Recipe:
        scope, text = self._prepare(tenant, project, name, content)
        fields = {"text": text, "updated_at_ms": self._clock.now_ms()}
        doc = await self._stored.replace(tenant, scope, name, fields)
        if doc is None:
            raise NotFoundError(
                f"no recipe {name!r} at {_level(scope)} level", reason="recipe_not_found"
            )
        return _from_stored(doc)

    async def delete(self, tenant: str, project: str, name: str) -> None:
        check_scope(tenant, project)
        scope = scope_of(project)
        if not await self._stored.delete(tenant, scope, check_name(name)):
            raise NotFoundError(
                f"no recipe {name!r} at {_level(scope)} level", reason="recipe_not_found"
            )

    async def get_stored(self, tenant: str, project: str, name: str) -> Recipe:
        scope = scope_of(project)
        found = await self._stored.find(tenant, [scope], name)
        if scope not in found:
            raise NotFoundError(f"recipe {name!r} vanished", reason="recipe_not_found")
        return _from_stored(found[scope])

    async def apply(
        self,
        tenant: str,
        project: str,
        *,
        recipe: str,
        engine: str,
        profile: str,
        caller_params: dict[str, Any],
        model_size: ModelSize | None = None,
    ) -> AppliedRecipe:
        """apply_defaulting for a spawn; an empty recipe means the recipe named after the engine."""
        found = await self.get(tenant, project, _recipe_name(recipe, engine))
        # The engine's own recipe (same cascade) is the base a promptMode APPEND builds on.
        base = (
            None if found.name == found.engine else await self.find(tenant, project, found.engine)
        )
        return apply_defaulting(
            found,
            base=base,
            tenant=tenant,
            project=project,
            profile=profile,
            caller_params=caller_params,
            model_size=model_size,
        )

    async def resolve_lifecycle(
        self,
        tenant: str,
        project: str,
        *,
        recipe: str,
        engine: str,
        profile: str,
        settings: dict[str, str],
        caller: Lifecycle,
    ) -> ResolvedLifecycle:
        bootstrap = await self.get(tenant, project, _recipe_name(recipe, engine))
        # The `default` recipe goes through the same cascade, so a tenant can change the
        # global table; if it is missing, step 5 (built-in) still answers.
        default = await self.find(tenant, project, DEFAULT_RECIPE)
        return resolve_lifecycle(
            bootstrap=bootstrap,
            default_recipe=default.spec if default else None,
            profile=profile,
            settings=settings,
            caller=caller,
        )

    def _prepare(
        self, tenant: str, project: str, name: str, content: RecipeInput
    ) -> tuple[str, str]:
        """Validates and returns (scope, YAML text to store)."""
        check_scope(tenant, project)
        check_name(name)
        if isinstance(content, str):
            text = content
            doc = parse_yaml(name, text)
        else:
            doc = integral_floats_to_ints(content)
        spec = validate_document(name, doc, self._catalog.names())
        if not isinstance(content, str):
            text = yaml.safe_dump(spec.document(), sort_keys=False, allow_unicode=True)
        return scope_of(project), text


def _recipe_name(recipe: str, engine: str) -> str:
    name = recipe or engine
    if not name:
        raise InvalidArgumentError("name a recipe or an engine", reason="recipe_required")
    return name


def _level(scope: str) -> str:
    return "tenant" if scope == TENANT_SCOPE else f"project {scope!r}"


def _from_stored(doc: Document) -> Recipe:
    """Stored recipes were validated on write; the engine is not re-checked on read so a
    catalog reload cannot make existing recipes unreadable."""
    name = str(doc["name"])
    text = str(doc["text"])
    try:
        spec = RecipeSpec.model_validate(yaml.safe_load(text))
    except (ValidationError, yaml.YAMLError) as exc:
        raise FailedPreconditionError(
            f"stored recipe {name!r} is unreadable: {exc}", reason="recipe_unreadable"
        ) from None
    scope = str(doc["scope"])
    return Recipe(
        name=name,
        spec=spec,
        source=RecipeSource.TENANT if scope == TENANT_SCOPE else RecipeSource.PROJECT,
        text=text,
        tenant_id=str(doc["tenant_id"]),
        project_id="" if scope == TENANT_SCOPE else scope,
        updated_at_ms=int(doc.get("updated_at_ms") or 0),
    )
