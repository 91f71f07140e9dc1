"""process_service as a tool host: serves the process tools and registers them at start-up."""

from __future__ import annotations

import asyncio
import logging

import grpc

from process_service.hub.peer_specs import PEER_TOOLS
from process_service.hub.tool_specs import HUB_TOOLS
from process_service.knowledge.tools import KNOWLEDGE_TOOLS
from process_service.tool_args import ToolError
from process_service.tool_specs import PROCESS_TOOLS
from process_service.tools.process_tools import ProcessTools
from process_service.tools.talk_specs import PLAN_TOOLS, TALK_TOOLS
from process_service.user_work.specs import USER_WORK_TOOLS
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import tool_pb2_grpc
from vance.protoutil import dict_to_struct, struct_to_dict, to_value
from vance.v1 import common_pb2 as pb

logger = logging.getLogger(__name__)

OWNER = "process_service"


class ProcessToolHost(tool_pb2_grpc.ToolHostServiceServicer):
    def __init__(self, tools: ProcessTools) -> None:
        self._tools = tools

    async def Invoke(
        self,
        request: tpb.InvokeToolRequest,
        context: grpc.aio.ServicerContext[tpb.InvokeToolRequest, tpb.InvokeToolResponse],
    ) -> tpb.InvokeToolResponse:
        try:
            result = await self._tools.invoke(
                request.tool_name,
                struct_to_dict(request.arguments),
                request.process_id,
                request.idempotency_key or request.tool_call_id,
                request.profile or "default",
            )
        except ToolError as exc:
            return tpb.InvokeToolResponse(status=pb.TOOL_CALL_STATUS_ERROR, error=str(exc))
        except Exception as exc:
            logger.exception("tool %s failed", request.tool_name)
            return tpb.InvokeToolResponse(
                status=pb.TOOL_CALL_STATUS_ERROR, error=f"{request.tool_name} failed: {exc}"
            )
        return tpb.InvokeToolResponse(
            status=pb.TOOL_CALL_STATUS_SUCCESS, result=to_value(result.to_json())
        )


async def register_forever(channel: grpc.aio.Channel, address: str) -> None:
    """Registers the process tools with tool_service, retrying until it answers."""
    stub = tool_pb2_grpc.ToolServiceStub(channel)
    request = tpb.RegisterToolsRequest(
        owner=OWNER,
        address=address,
        tools=[
            tpb.ToolSpec(
                name=t["name"],
                description=t["description"],
                parameters=dict_to_struct(t["parameters"]),
                labels=t["labels"],
                owner=OWNER,
                timeout_ms=t.get("timeoutMs", 0),
            )
            for t in PROCESS_TOOLS
            + HUB_TOOLS
            + USER_WORK_TOOLS
            + TALK_TOOLS
            + PLAN_TOOLS
            + PEER_TOOLS
            + KNOWLEDGE_TOOLS
        ],
    )
    delay = 0.2
    while True:
        try:
            await stub.RegisterTools(request, timeout=5)
            logger.info("registered %d tools with tool_service", len(request.tools))
            return
        except grpc.aio.AioRpcError as exc:
            logger.info("tool_service not reachable yet (%s); retrying", exc.code().name)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
