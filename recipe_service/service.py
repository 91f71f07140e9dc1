"""The RecipeService servicer: convert, call the domain, convert back."""

from __future__ import annotations

from typing import Any

from recipe_service import convert
from recipe_service.cascade import Recipes
from recipe_service.catalog import EngineCatalog
from recipe_service.inventory import recipe_inventory
from recipe_service.manuals import Manuals
from recipe_service.models import ModelSize, RecipeSource
from recipe_service.selector import RecipeSelector
from vance.errors import FailedPreconditionError, grpc_errors
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.internal.v1 import recipe_internal_pb2_grpc
from vance.protoutil import struct_to_dict
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import recipe_pb2_grpc


class RecipeServicer(
    recipe_pb2_grpc.RecipeServiceServicer, recipe_internal_pb2_grpc.RecipeInternalServiceServicer
):
    def __init__(
        self,
        recipes: Recipes,
        manuals: Manuals,
        catalog: EngineCatalog,
        selector: RecipeSelector,
    ) -> None:
        self.recipes = recipes
        self.manuals = manuals
        self.catalog = catalog
        self.selector = selector

    @grpc_errors
    async def ListRecipes(
        self, request: rpb.ListRecipesRequest, context: Any
    ) -> rpb.ListRecipesResponse:
        found = await self.recipes.list(
            request.tenant_id,
            request.project_id,
            source=convert.enum_from_proto(RecipeSource, request.source),
            listed_only=request.listed_only,
        )
        return rpb.ListRecipesResponse(recipes=[convert.recipe_to_proto(r) for r in found])

    @grpc_errors
    async def GetRecipe(self, request: rpb.GetRecipeRequest, context: Any) -> rpb.Recipe:
        found = await self.recipes.get(request.tenant_id, request.project_id, request.name)
        return convert.recipe_to_proto(found)

    @grpc_errors
    async def ApplyRecipe(
        self, request: ripb.ApplyRecipeRequest, context: Any
    ) -> ripb.AppliedRecipe:
        applied = await self.recipes.apply(
            request.tenant_id,
            request.project_id,
            recipe=request.recipe,
            engine=request.engine,
            profile=request.profile,
            caller_params=struct_to_dict(request.caller_params),
            model_size=convert.enum_from_proto(ModelSize, request.model_size),
        )
        return convert.applied_to_proto(applied)

    @grpc_errors
    async def CreateRecipe(self, request: rpb.CreateRecipeRequest, context: Any) -> rpb.Recipe:
        created = await self.recipes.create(
            request.tenant_id,
            request.project_id,
            request.name,
            convert.recipe_input_from_proto(request),
        )
        return convert.recipe_to_proto(created)

    @grpc_errors
    async def UpdateRecipe(self, request: rpb.UpdateRecipeRequest, context: Any) -> rpb.Recipe:
        updated = await self.recipes.update(
            request.tenant_id,
            request.project_id,
            request.name,
            convert.recipe_input_from_proto(request),
        )
        return convert.recipe_to_proto(updated)

    @grpc_errors
    async def DeleteRecipe(
        self, request: rpb.DeleteRecipeRequest, context: Any
    ) -> rpb.DeleteRecipeResponse:
        await self.recipes.delete(request.tenant_id, request.project_id, request.name)
        return rpb.DeleteRecipeResponse()

    @grpc_errors
    async def ResolveLifecycle(
        self, request: ripb.ResolveLifecycleRequest, context: Any
    ) -> ripb.ResolvedLifecycle:
        resolved = await self.recipes.resolve_lifecycle(
            request.tenant_id,
            request.project_id,
            recipe=request.recipe,
            engine=request.engine,
            profile=request.profile,
            settings=dict(request.settings),
            caller=convert.lifecycle_from_proto(request.caller),
        )
        return convert.resolved_to_proto(resolved)

    @grpc_errors
    async def ListEngines(
        self, request: rpb.ListEnginesRequest, context: Any
    ) -> rpb.ListEnginesResponse:
        available = list(request.available_engines)
        return convert.engines_to_proto(
            self.catalog.engines(), self.catalog.markdown(available), available
        )

    @grpc_errors
    async def ReloadEngines(
        self, request: rpb.ListEnginesRequest, context: Any
    ) -> rpb.ListEnginesResponse:
        try:
            self.catalog.reload()
        except (OSError, ValueError) as exc:
            raise FailedPreconditionError(
                f"engine catalog not reloaded, the old one stays active: {exc}",
                reason="catalog_invalid",
            ) from None
        available = list(request.available_engines)
        return convert.engines_to_proto(
            self.catalog.engines(), self.catalog.markdown(available), available
        )

    @grpc_errors
    async def SelectRecipe(
        self, request: ripb.SelectRecipeRequest, context: Any
    ) -> ripb.RecipeSelection:
        selection = await self.selector.select(
            request.tenant_id,
            request.project_id,
            request.task,
            model=request.model,
            available=list(request.available_engines),
        )
        return convert.selection_to_proto(selection)

    @grpc_errors
    async def ListInventory(
        self, request: ripb.ListInventoryRequest, context: Any
    ) -> ripb.Inventory:
        inventory = await recipe_inventory(
            self.recipes,
            request.tenant_id,
            request.project_id,
            available=list(request.available_engines),
        )
        return convert.inventory_to_proto(inventory)

    @grpc_errors
    async def ListManuals(
        self, request: rpb.ListManualsRequest, context: Any
    ) -> rpb.ListManualsResponse:
        listing = await self.manuals.listing(
            request.tenant_id,
            request.project_id,
            recipe=request.recipe,
            engine=request.engine,
            profile=request.profile,
            paths=list(request.paths),
        )
        return convert.listing_to_proto(listing)

    @grpc_errors
    async def ReadManual(self, request: rpb.ReadManualRequest, context: Any) -> rpb.Manual:
        manual = await self.manuals.read(
            request.tenant_id,
            request.project_id,
            request.name,
            recipe=request.recipe,
            engine=request.engine,
            profile=request.profile,
        )
        return convert.manual_to_proto(manual)

    @grpc_errors
    async def PutManual(self, request: rpb.PutManualRequest, context: Any) -> rpb.Manual:
        manual = await self.manuals.put(
            request.tenant_id, request.project_id, request.name, request.content
        )
        return convert.manual_to_proto(manual)

    @grpc_errors
    async def DeleteManual(
        self, request: rpb.DeleteManualRequest, context: Any
    ) -> rpb.DeleteManualResponse:
        await self.manuals.delete(request.tenant_id, request.project_id, request.name)
        return rpb.DeleteManualResponse()
