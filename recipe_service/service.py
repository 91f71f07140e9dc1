"""The RecipeService servicer: convert, call the domain, convert back."""

from __future__ import annotations

import grpc

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
        self,
        request: rpb.ListRecipesRequest,
        context: grpc.aio.ServicerContext[rpb.ListRecipesRequest, rpb.ListRecipesResponse],
    ) -> rpb.ListRecipesResponse:
        found = await self.recipes.list(
            request.tenant_id,
            request.project_id,
            source=convert.enum_from_proto(RecipeSource, request.source),
            listed_only=request.listed_only,
        )
        return rpb.ListRecipesResponse(recipes=[convert.recipe_to_proto(r) for r in found])

    @grpc_errors
    async def GetRecipe(
        self,
        request: rpb.GetRecipeRequest,
        context: grpc.aio.ServicerContext[rpb.GetRecipeRequest, rpb.Recipe],
    ) -> rpb.Recipe:
        found = await self.recipes.get(request.tenant_id, request.project_id, request.name)
        return convert.recipe_to_proto(found)

    @grpc_errors
    async def ApplyRecipe(
        self,
        request: ripb.ApplyRecipeRequest,
        context: grpc.aio.ServicerContext[ripb.ApplyRecipeRequest, ripb.AppliedRecipe],
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
    async def CreateRecipe(
        self,
        request: rpb.CreateRecipeRequest,
        context: grpc.aio.ServicerContext[rpb.CreateRecipeRequest, rpb.Recipe],
    ) -> rpb.Recipe:
        created = await self.recipes.create(
            request.tenant_id,
            request.project_id,
            request.name,
            convert.recipe_input_from_proto(request),
        )
        return convert.recipe_to_proto(created)

    @grpc_errors
    async def UpdateRecipe(
        self,
        request: rpb.UpdateRecipeRequest,
        context: grpc.aio.ServicerContext[rpb.UpdateRecipeRequest, rpb.Recipe],
    ) -> rpb.Recipe:
        updated = await self.recipes.update(
            request.tenant_id,
            request.project_id,
            request.name,
            convert.recipe_input_from_proto(request),
        )
        return convert.recipe_to_proto(updated)

    @grpc_errors
    async def DeleteRecipe(
        self,
        request: rpb.DeleteRecipeRequest,
        context: grpc.aio.ServicerContext[rpb.DeleteRecipeRequest, rpb.DeleteRecipeResponse],
    ) -> rpb.DeleteRecipeResponse:
        await self.recipes.delete(request.tenant_id, request.project_id, request.name)
        return rpb.DeleteRecipeResponse()

    @grpc_errors
    async def ResolveLifecycle(
        self,
        request: ripb.ResolveLifecycleRequest,
        context: grpc.aio.ServicerContext[ripb.ResolveLifecycleRequest, ripb.ResolvedLifecycle],
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
        self,
        request: rpb.ListEnginesRequest,
        context: grpc.aio.ServicerContext[rpb.ListEnginesRequest, rpb.ListEnginesResponse],
    ) -> rpb.ListEnginesResponse:
        available = list(request.available_engines)
        return convert.engines_to_proto(
            self.catalog.engines(), self.catalog.markdown(available), available
        )

    @grpc_errors
    async def ReloadEngines(
        self,
        request: rpb.ListEnginesRequest,
        context: grpc.aio.ServicerContext[rpb.ListEnginesRequest, rpb.ListEnginesResponse],
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
        self,
        request: ripb.SelectRecipeRequest,
        context: grpc.aio.ServicerContext[ripb.SelectRecipeRequest, ripb.RecipeSelection],
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
        self,
        request: ripb.ListInventoryRequest,
        context: grpc.aio.ServicerContext[ripb.ListInventoryRequest, ripb.Inventory],
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
        self,
        request: rpb.ListManualsRequest,
        context: grpc.aio.ServicerContext[rpb.ListManualsRequest, rpb.ListManualsResponse],
    ) -> rpb.ListManualsResponse:
        listing = await self.manuals.listing(
            request.tenant_id,
            request.project_id,
            recipe=request.recipe,
            engine=request.engine,
            profile=request.profile,
            paths=list(request.paths),
            bundled=request.bundled,
        )
        return convert.listing_to_proto(listing)

    @grpc_errors
    async def ReadManual(
        self,
        request: rpb.ReadManualRequest,
        context: grpc.aio.ServicerContext[rpb.ReadManualRequest, rpb.Manual],
    ) -> rpb.Manual:
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
    async def PutManual(
        self,
        request: rpb.PutManualRequest,
        context: grpc.aio.ServicerContext[rpb.PutManualRequest, rpb.Manual],
    ) -> rpb.Manual:
        manual = await self.manuals.put(
            request.tenant_id, request.project_id, request.name, request.content
        )
        return convert.manual_to_proto(manual)

    @grpc_errors
    async def DeleteManual(
        self,
        request: rpb.DeleteManualRequest,
        context: grpc.aio.ServicerContext[rpb.DeleteManualRequest, rpb.DeleteManualResponse],
    ) -> rpb.DeleteManualResponse:
        await self.manuals.delete(request.tenant_id, request.project_id, request.name)
        return rpb.DeleteManualResponse()
