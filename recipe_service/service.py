"""The RecipeService servicer."""

from __future__ import annotations

from typing import Any

from recipe_service.recipes import Recipe, RecipeBook
from vance.errors import grpc_errors
from vance.protoutil import dict_to_struct, struct_to_dict
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import recipe_pb2_grpc


def recipe_to_proto(r: Recipe) -> rpb.Recipe:
    return rpb.Recipe(
        name=r.name,
        description=r.description,
        engine=r.engine,
        source=r.source,
        document=dict_to_struct(r.document),
        tags=r.tags,
    )


class RecipeServicer(recipe_pb2_grpc.RecipeServiceServicer):
    def __init__(self, book: RecipeBook) -> None:
        self.book = book

    @grpc_errors
    async def ListRecipes(
        self, request: rpb.ListRecipesRequest, context: Any
    ) -> rpb.ListRecipesResponse:
        return rpb.ListRecipesResponse(recipes=[recipe_to_proto(r) for r in self.book.list()])

    @grpc_errors
    async def GetRecipe(self, request: rpb.GetRecipeRequest, context: Any) -> rpb.Recipe:
        return recipe_to_proto(self.book.get(request.name))

    @grpc_errors
    async def ApplyRecipe(self, request: rpb.ApplyRecipeRequest, context: Any) -> rpb.AppliedRecipe:
        applied = self.book.apply(
            recipe=request.recipe,
            engine=request.engine,
            profile=request.profile,
            caller_params=struct_to_dict(request.caller_params),
        )
        return rpb.AppliedRecipe(
            recipe_name=applied.recipe.name,
            engine=applied.recipe.engine,
            source=applied.recipe.source,
            params=dict_to_struct(applied.params),
            prompt=applied.prompt,
            allowed_tools_add=applied.tools_add,
            allowed_tools_remove=applied.tools_remove,
            snapshot=dict_to_struct(applied.snapshot()),
        )
