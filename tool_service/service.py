"""The ToolService servicer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc

from tool_service.client_tools import CLIENT_PREFIX
from tool_service.pool import resolve_pool
from tool_service.registry import ToolRegistry
from tool_service.routing import ToolRouter
from vance.errors import InvalidArgumentError, grpc_errors
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import tool_pb2_grpc
from vance.protoutil import dict_to_struct, struct_to_dict


class ToolServicer(tool_pb2_grpc.ToolServiceServicer):
    def __init__(self, registry: ToolRegistry, router: ToolRouter) -> None:
        self.registry = registry
        self.router = router

    @grpc_errors
    async def RegisterTools(
        self,
        request: tpb.RegisterToolsRequest,
        context: grpc.aio.ServicerContext[tpb.RegisterToolsRequest, tpb.RegisterToolsResponse],
    ) -> tpb.RegisterToolsResponse:
        if not request.owner or not request.address:
            raise InvalidArgumentError("owner and address are required")
        specs = [
            {
                "name": t.name,
                "description": t.description,
                "parameters": struct_to_dict(t.parameters),
                "labels": list(t.labels),
                "allowed_profiles": list(t.allowed_profiles),
                "timeout_ms": int(t.timeout_ms),
            }
            for t in request.tools
        ]
        if any(not s["name"] for s in specs):
            raise InvalidArgumentError("every tool needs a name")
        count = await self.registry.register(request.owner, request.address, specs)
        return tpb.RegisterToolsResponse(registered=count)

    @grpc_errors
    async def ListTools(
        self,
        request: tpb.ListToolsRequest,
        context: grpc.aio.ServicerContext[tpb.ListToolsRequest, tpb.ListToolsResponse],
    ) -> tpb.ListToolsResponse:
        docs = await self.registry.list(request.profile)
        return tpb.ListToolsResponse(tools=[_spec(d) for d in docs])

    @grpc_errors
    async def ResolvePool(
        self,
        request: tpb.ResolvePoolRequest,
        context: grpc.aio.ServicerContext[tpb.ResolvePoolRequest, tpb.ListToolsResponse],
    ) -> tpb.ListToolsResponse:
        pool = resolve_pool(
            await self.router.candidates(request),
            engine_tools=list(request.engine_tools),
            add=list(request.add),
            remove=list(request.remove),
            profile=request.profile or "default",
        )
        return tpb.ListToolsResponse(tools=[_spec(d) for d in pool])

    async def WatchRegistry(
        self,
        request: tpb.WatchRegistryRequest,
        context: grpc.aio.ServicerContext[tpb.WatchRegistryRequest, tpb.RegistryChange],
    ) -> AsyncIterator[tpb.RegistryChange]:
        async for generation in self.registry.changes():
            yield tpb.RegistryChange(generation=generation)

    @grpc_errors
    async def InvokeTool(
        self,
        request: tpb.InvokeToolRequest,
        context: grpc.aio.ServicerContext[tpb.InvokeToolRequest, tpb.InvokeToolResponse],
    ) -> tpb.InvokeToolResponse:
        return await self.router.invoke(request)

    @grpc_errors
    async def RegisterClientTools(
        self,
        request: tpb.RegisterClientToolsRequest,
        context: grpc.aio.ServicerContext[
            tpb.RegisterClientToolsRequest, tpb.RegisterToolsResponse
        ],
    ) -> tpb.RegisterToolsResponse:
        if not request.session_id or not request.connection_id or not request.address:
            raise InvalidArgumentError("session_id, connection_id and address are required")
        specs: list[dict[str, Any]] = [
            {
                "name": t.name,
                "description": t.description,
                "parameters": struct_to_dict(t.parameters),
                "timeout_ms": int(t.timeout_ms),
            }
            for t in request.tools
        ]
        if any(not t.name.startswith(CLIENT_PREFIX) for t in request.tools):
            raise InvalidArgumentError(f"client tool names start with {CLIENT_PREFIX!r}")
        count = await self.router.client_tools.register(
            request.session_id, request.connection_id, request.address, specs
        )
        await self.registry.changed()
        return tpb.RegisterToolsResponse(registered=count)

    @grpc_errors
    async def UnregisterClientTools(
        self,
        request: tpb.UnregisterClientToolsRequest,
        context: grpc.aio.ServicerContext[
            tpb.UnregisterClientToolsRequest, tpb.UnregisterClientToolsResponse
        ],
    ) -> tpb.UnregisterClientToolsResponse:
        removed = await self.router.client_tools.unregister(
            request.session_id, request.connection_id
        )
        if removed:
            await self.registry.changed()
        return tpb.UnregisterClientToolsResponse(removed=removed)


def _spec(d: dict[str, Any]) -> tpb.ToolSpec:
    return tpb.ToolSpec(
        name=d["_id"],
        description=d.get("description", ""),
        parameters=dict_to_struct(d.get("parameters")),
        labels=d.get("labels") or [],
        allowed_profiles=d.get("allowed_profiles") or [],
        owner=d.get("owner", ""),
        timeout_ms=int(d.get("timeout_ms") or 0),
    )
