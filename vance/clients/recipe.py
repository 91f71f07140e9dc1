"""recipe_service as session_service sees it: applying a recipe and resolving the lifecycle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc

from vance.clients._rpc import call
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.internal.v1 import recipe_internal_pb2_grpc
from vance.protoutil import struct_to_dict


@dataclass(frozen=True)
class AppliedRecipe:
    """The parts of an applied recipe a new process is made from."""

    recipe_name: str
    engine: str
    snapshot: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)


class Recipes(Protocol):
    async def apply(
        self, *, tenant_id: str, project_id: str, recipe: str, engine: str, profile: str
    ) -> AppliedRecipe: ...

    async def resolve_lifecycle(
        self, request: ripb.ResolveLifecycleRequest
    ) -> ripb.ResolvedLifecycle: ...


class RecipeClient:
    """`Recipes` over gRPC."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        # Both calls are service-only (vance.internal.v1).
        self.stub: recipe_internal_pb2_grpc.RecipeInternalServiceAsyncStub = (
            recipe_internal_pb2_grpc.RecipeInternalServiceStub(channel)
        )

    async def apply(
        self, *, tenant_id: str, project_id: str, recipe: str, engine: str, profile: str
    ) -> AppliedRecipe:
        got = await call(
            self.stub.ApplyRecipe(
                ripb.ApplyRecipeRequest(
                    tenant_id=tenant_id,
                    project_id=project_id,
                    recipe=recipe,
                    engine=engine,
                    profile=profile,
                )
            )
        )
        return AppliedRecipe(
            recipe_name=got.recipe_name,
            engine=got.engine,
            snapshot=struct_to_dict(got.snapshot),
            params=struct_to_dict(got.params),
        )

    async def resolve_lifecycle(
        self, request: ripb.ResolveLifecycleRequest
    ) -> ripb.ResolvedLifecycle:
        # The lifecycle messages are session_service's own vocabulary (session_service/protos.py
        # turns them into LifecycleProps), so they cross this seam as they are.
        return await call(self.stub.ResolveLifecycle(request))
