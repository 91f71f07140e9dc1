"""The tools Slartibartfast works with: what it may design against, and storing its recipe.

Validation needs what only services know (the catalog in recipe_service, the engines the
connected workers run here, the recipes of the cascade), so it happens here and in
recipe_service, not in the engine. A generated recipe is stored in the caller's project as
`_slart/<runId>/<name>`, the run id being the Slartibartfast process's id.
"""

from __future__ import annotations

from collections.abc import Callable

import grpc
import yaml

from process_service.process_model import Process
from process_service.tool_args import (
    Text,
    ToolArgs,
    ToolError,
    ToolResult,
    parse_args,
    rpc_details,
)
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.internal.v1 import recipe_internal_pb2_grpc
from vance.json_types import JsonObject
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import recipe_pb2_grpc

ARCHITECT_ENGINE = "slartibartfast"
GENERATED_PREFIX = "_slart/"
# Recipe names a generated recipe may reference (params.allowedRecipes) must exist.
REFERENCE_KEYS = ("allowedRecipes",)


class StoreArgs(ToolArgs):
    name: Text
    yaml: Text


class EngineEntry(ToolResult):
    name: str
    available: bool


class RecipeEntry(ToolResult):
    name: str
    engine: str
    description: str


class SlartContext(ToolResult):
    catalog: str  # the engine catalog as markdown
    engines: list[EngineEntry]
    recipes: list[RecipeEntry]


class StoredRecipe(ToolResult):
    recipe: str
    engine: str
    description: str


def generated_path(run_id: str, name: str) -> str:
    return f"{GENERATED_PREFIX}{run_id}/{name}"


class GeneratedRecipes:
    def __init__(
        self,
        recipes: recipe_pb2_grpc.RecipeServiceAsyncStub,
        catalog: recipe_internal_pb2_grpc.RecipeInternalServiceAsyncStub,
        engines_available: Callable[[], set[str]],
    ) -> None:
        self._recipes = recipes
        self._catalog = catalog  # the engine catalog and the selector's inventory
        self._engines_available = engines_available

    async def context(self, caller: Process) -> SlartContext:
        """The engine catalog (engines no worker runs are marked) and the recipe inventory."""
        available = sorted(self._engines_available())
        catalog = await self._catalog.ListEngines(
            rpb.ListEnginesRequest(available_engines=available)
        )
        inventory = await self._catalog.ListInventory(
            ripb.ListInventoryRequest(
                tenant_id=caller.tenant_id,
                project_id=caller.project_id,
                available_engines=available,
            )
        )
        return SlartContext(
            catalog=catalog.markdown,
            engines=[
                EngineEntry(name=e.name, available=not e.unavailable) for e in catalog.engines
            ],
            recipes=[
                RecipeEntry(name=r.name, engine=r.engine, description=r.description)
                for r in inventory.recipes
            ],
        )

    async def store(self, caller: Process, args: JsonObject) -> StoredRecipe:
        """Validates a proposed recipe and stores it; a ToolError lists every problem found,
        so one repair round can fix them all."""
        if caller.engine != ARCHITECT_ENGINE:
            raise ToolError("only Slartibartfast stores generated recipes")
        parsed = parse_args(StoreArgs, args)
        name, text = parsed.name, parsed.yaml
        tenant = caller.tenant_id
        project = caller.project_id
        try:
            doc: object = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ToolError(f"the recipe is not valid YAML: {exc}") from None
        if not isinstance(doc, dict):
            raise ToolError("the recipe must be a YAML mapping")
        problems = await self._check(doc, tenant, project)
        if problems:
            raise ToolError("; ".join(problems))
        path = generated_path(caller.id, name)
        stored = await self._put(tenant, project, path, text)
        return StoredRecipe(
            recipe=stored.name, engine=stored.engine, description=stored.description
        )

    async def _check(self, doc: dict[object, object], tenant: str, project: str) -> list[str]:
        """The problems of a designed recipe, read from its YAML mapping as written (any
        shape: recipe_service validates the document itself)."""
        problems = []
        engine = str(doc.get("engine") or "")
        catalog = await self._catalog.ListEngines(rpb.ListEnginesRequest())
        known = {e.name for e in catalog.engines}
        available = self._engines_available()
        if not engine:
            problems.append("engine is missing")
        elif engine not in known:
            problems.append(
                f"engine {engine!r} is not in the engine catalog ({', '.join(sorted(known))})"
            )
        elif engine == ARCHITECT_ENGINE:
            problems.append("a generated recipe must do the task, not design recipes")
        elif engine not in available:
            problems.append(
                f"no worker runs engine {engine!r} now (running: {', '.join(sorted(available))})"
            )
        params = doc.get("params") or {}
        for key in REFERENCE_KEYS:
            refs = params.get(key) if isinstance(params, dict) else None
            for ref in refs if isinstance(refs, list) else []:
                if not await self._exists(tenant, project, str(ref)):
                    problems.append(f"params.{key} names recipe {ref!r}, which does not exist")
        return problems

    async def _exists(self, tenant: str, project: str, name: str) -> bool:
        try:
            await self._recipes.GetRecipe(
                rpb.GetRecipeRequest(tenant_id=tenant, project_id=project, name=name)
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                return False
            raise
        return True

    async def _put(self, tenant: str, project: str, path: str, text: str) -> rpb.Recipe:
        """recipe_service validates the document (schema, catalog, prompt templates); a
        redone turn finds its own recipe and overwrites it."""
        try:
            created: rpb.Recipe = await self._recipes.CreateRecipe(
                rpb.CreateRecipeRequest(tenant_id=tenant, project_id=project, name=path, yaml=text)
            )
            return created
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.ALREADY_EXISTS:
                raise ToolError(rpc_details(exc)) from exc
        try:
            updated: rpb.Recipe = await self._recipes.UpdateRecipe(
                rpb.UpdateRecipeRequest(tenant_id=tenant, project_id=project, name=path, yaml=text)
            )
            return updated
        except grpc.aio.AioRpcError as exc:
            raise ToolError(rpc_details(exc)) from exc
