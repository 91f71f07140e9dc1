"""Where a tool lives and how a call reaches it: a registered service tool (its ToolHost), a
client tool of the calling session (the gateway replica that holds the client's socket), or a
tool of an MCP server of the caller's tenant or project (`<server>__<tool>`, tool_service's own
connection). Pools see all three alike, so labels, recipe cuts and profiles apply to each."""

from __future__ import annotations

from typing import Protocol

from tool_service.client_tools import CLIENT_PREFIX, ClientTools, as_registry_specs
from tool_service.registry import ToolRegistry, error
from vance.internal.v1 import tool_pb2 as tpb
from vance.profiles import capabilities
from vance.store import Document

MCP_SEPARATOR = "__"
# The gateway bounds a client's answer by the tool's timeout and answers TIMEOUT itself; this
# much longer, tool_service waits for that answer to travel back.
CLIENT_SLACK_S = 2.0


class McpTools(Protocol):
    async def specs(self, tenant_id: str, project_id: str, wanted: list[str]) -> list[Document]: ...

    async def invoke(self, request: tpb.InvokeToolRequest) -> tpb.InvokeToolResponse: ...


class ToolRouter:
    def __init__(
        self, registry: ToolRegistry, client_tools: ClientTools, mcp: McpTools | None
    ) -> None:
        self.registry = registry
        self.client_tools = client_tools
        self.mcp = mcp

    async def candidates(self, request: tpb.ResolvePoolRequest) -> list[Document]:
        """Every tool a pool of this process could select: the registered ones, its session's
        client tools (for a profile that allows them) and its tenant's or project's MCP tools."""
        docs = list(await self.registry.list())
        profile = request.profile or "default"
        if request.session_id and capabilities(profile).client_tools_enabled:
            docs += as_registry_specs(await self.client_tools.of_session(request.session_id))
        if request.tenant_id and self.mcp is not None:
            wanted = [*request.engine_tools, *request.add]
            docs += await self.mcp.specs(request.tenant_id, request.project_id, wanted)
        return docs

    async def invoke(self, request: tpb.InvokeToolRequest) -> tpb.InvokeToolResponse:
        name = request.tool_name
        doc = await self.registry.find(name)
        if doc is not None:
            return await self.registry.invoke(doc, request)
        if name.startswith(CLIENT_PREFIX):
            return await self._client(request)
        if MCP_SEPARATOR in name and request.tenant_id and self.mcp is not None:
            return await self.mcp.invoke(request)
        return error(f"unknown tool {name!r}")

    async def _client(self, request: tpb.InvokeToolRequest) -> tpb.InvokeToolResponse:
        specs = as_registry_specs(await self.client_tools.of_session(request.session_id))
        spec = next((s for s in specs if s["_id"] == request.tool_name), None)
        if spec is None:
            return error(
                f"UNAVAILABLE: no client connected to this session hosts {request.tool_name} "
                "(the client disconnected or does not offer it)"
            )
        timeout_s = int(spec["timeout_ms"]) / 1000
        return await self.registry.call_host(
            str(spec["address"]),
            request,
            timeout_s + CLIENT_SLACK_S,
            what=f"the client's gateway for {request.tool_name}",
        )
