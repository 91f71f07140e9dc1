"""Client tools, the gateway's part (docs/clients.md "Client tools"): a bound socket whose profile
allows them registers the tools its client hosts (`client-tool-register`); tool_service routes a
call of one to the ToolHost of the gateway replica that holds the socket (this module's
`invoke`), which sends `client-tool-invoke` to the socket and waits for its
`client-tool-result`. A socket that leaves its session (unbind, another bind, disconnect) ends
its calls at once with an UNAVAILABLE result and drops its tools."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

import grpc
from fastapi import WebSocketDisconnect
from pydantic import Field, JsonValue, StrictInt, StrictStr

from gateway.errors import GatewayError
from gateway.frames import frame
from gateway.inputs import FrameData, Id, Text, required
from vance.auth import on_behalf_of
from vance.channels import Channels
from vance.ids import new_id
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import tool_pb2_grpc
from vance.profiles import capabilities
from vance.protoutil import dict_to_struct, struct_to_dict, to_value
from vance.v1 import common_pb2 as pb

if TYPE_CHECKING:
    from gateway.connection import Connection

logger = logging.getLogger(__name__)

MAX_TOOLS = 64
DEFAULT_TIMEOUT_MS = 30_000  # tool_service/client_tools.py DEFAULT_TIMEOUT_MS


class ClientToolSpec(FrameData):
    # Function names the model providers accept, and the `client_` prefix (tool_service routes
    # by it; it cannot shadow a server tool).
    name: Annotated[StrictStr, Field(pattern=r"^client_[A-Za-z0-9_-]{1,57}$")]
    description: Annotated[StrictStr, Field(max_length=4_096)] = ""
    parameters: dict[str, JsonValue] | None = None  # a JSON schema of an object
    timeout_ms: Annotated[StrictInt, Field(ge=1_000, le=600_000)] | None = Field(
        default=None, alias="timeoutMs"
    )


class RegisterData(FrameData):
    tools: Annotated[list[ClientToolSpec], Field(max_length=MAX_TOOLS)] | None = None


class ResultData(FrameData):
    call_id: Id | None = Field(default=None, alias="callId")
    status: Literal["SUCCESS", "ERROR"] = "SUCCESS"
    result: JsonValue = None
    error: Text | None = None


@dataclass
class _Hosted:
    conn: Connection
    session_id: str
    timeouts_ms: dict[str, int]  # tool name -> how long the client may take


@dataclass
class _Pending:
    connection_id: str
    answer: asyncio.Future[tpb.InvokeToolResponse]


def _unavailable(message: str) -> tpb.InvokeToolResponse:
    return tpb.InvokeToolResponse(status=pb.TOOL_CALL_STATUS_ERROR, error=f"UNAVAILABLE: {message}")


@contextmanager
def _as_service() -> Iterator[None]:
    """Registrations are service-only calls (they name the address tool_service will call):
    made with the gateway's service token, not the user's the socket's calls carry."""
    token = on_behalf_of.set("")
    try:
        yield
    finally:
        on_behalf_of.reset(token)


class ClientToolHub:
    """This replica's hosted client tools and their calls in flight."""

    def __init__(self, channels: Channels) -> None:
        self._channels = channels
        self.address = ""  # this replica's ToolHost, set once it listens (gateway/app.py)
        self._hosted: dict[str, _Hosted] = {}  # by connection id
        self._pending: dict[str, _Pending] = {}  # by call id

    def _stub(self) -> tool_pb2_grpc.ToolServiceAsyncStub:
        return tool_pb2_grpc.ToolServiceStub(self._channels.get("tool_service"))

    async def register(self, conn: Connection, data: RegisterData) -> dict[str, Any]:
        if not conn.session_id or conn.monitor:
            raise GatewayError(409, "no session is bound to this connection", "no_session")
        if data.tools is None:
            required(None, "tools")
        tools = data.tools or []
        enabled = capabilities(conn.profile).client_tools_enabled
        if tools and not enabled:
            raise GatewayError(
                403,
                f"profile {conn.profile!r} does not allow client tools",
                "client_tools_not_allowed",
            )
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise GatewayError(400, "tool names must be unique", "bad_tools", field="tools")
        if not tools:
            await self.drop(conn)
            return {"registered": 0, "clientToolsEnabled": enabled}
        if not self.address:
            raise GatewayError(503, "this gateway cannot host client tools", "unavailable")
        request = tpb.RegisterClientToolsRequest(
            session_id=conn.session_id,
            connection_id=conn.connection_id,
            address=self.address,
            tools=[
                tpb.ToolSpec(
                    name=t.name,
                    description=t.description,
                    parameters=dict_to_struct(t.parameters or {"type": "object", "properties": {}}),
                    timeout_ms=t.timeout_ms or DEFAULT_TIMEOUT_MS,
                )
                for t in tools
            ],
        )
        self._hosted[conn.connection_id] = _Hosted(
            conn, conn.session_id, {t.name: t.timeout_ms or DEFAULT_TIMEOUT_MS for t in tools}
        )
        with _as_service():
            done = await self._stub().RegisterClientTools(request, timeout=10)
        return {"registered": done.registered, "clientToolsEnabled": enabled}

    async def result(self, conn: Connection, data: ResultData) -> dict[str, Any]:
        call_id = required(data.call_id, "callId")
        pending = self._pending.get(call_id)
        if pending is None or pending.connection_id != conn.connection_id:
            raise GatewayError(
                404,
                f"no call {call_id!r} waits for an answer (timed out or answered)",
                "unknown_call",
            )
        if data.status == "SUCCESS":
            answer = tpb.InvokeToolResponse(
                status=pb.TOOL_CALL_STATUS_SUCCESS, result=to_value(data.result)
            )
        else:
            answer = tpb.InvokeToolResponse(
                status=pb.TOOL_CALL_STATUS_ERROR,
                error=data.error or "the client reported an error without a message",
            )
        if not pending.answer.done():
            pending.answer.set_result(answer)
        return {"callId": call_id, "accepted": True}

    async def drop(self, conn: Connection) -> None:
        """The socket leaves its session: its calls end UNAVAILABLE, its tools are withdrawn."""
        hosted = self._hosted.pop(conn.connection_id, None)
        for pending in self._pending.values():
            if pending.connection_id == conn.connection_id and not pending.answer.done():
                pending.answer.set_result(
                    _unavailable("the client disconnected before it answered")
                )
        if hosted is None:
            return
        try:
            with _as_service():
                await self._stub().UnregisterClientTools(
                    tpb.UnregisterClientToolsRequest(
                        session_id=hosted.session_id, connection_id=conn.connection_id
                    ),
                    timeout=5,
                )
        except grpc.aio.AioRpcError as exc:
            # Calls still fail cleanly: this replica no longer hosts them (invoke below).
            logger.warning("dropping the client tools of %s failed: %s", hosted.session_id, exc)

    async def invoke(self, request: tpb.InvokeToolRequest) -> tpb.InvokeToolResponse:
        hosted = next(
            (
                h
                for h in self._hosted.values()
                if h.session_id == request.session_id
                and h.conn.session_id == request.session_id
                and request.tool_name in h.timeouts_ms
            ),
            None,
        )
        if hosted is None:
            return _unavailable(f"no client of this session hosts {request.tool_name} any more")
        timeout_s = hosted.timeouts_ms[request.tool_name] / 1000
        call_id = new_id("call")
        answer: asyncio.Future[tpb.InvokeToolResponse] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = _Pending(hosted.conn.connection_id, answer)
        try:
            await hosted.conn.send(
                frame(
                    "client-tool-invoke",
                    {
                        "callId": call_id,
                        "name": request.tool_name,
                        "params": struct_to_dict(request.arguments),
                        "timeoutMs": int(timeout_s * 1000),
                    },
                )
            )
            async with asyncio.timeout(timeout_s):
                return await answer
        except TimeoutError:
            return tpb.InvokeToolResponse(
                status=pb.TOOL_CALL_STATUS_TIMEOUT,
                error=f"the client did not answer {request.tool_name} within {timeout_s:.0f}s",
            )
        except (WebSocketDisconnect, RuntimeError, OSError):
            return _unavailable("the client disconnected before it answered")
        finally:
            self._pending.pop(call_id, None)


class GatewayToolHost(tool_pb2_grpc.ToolHostServiceServicer):
    """The ToolHost tool_service calls for the client tools of this replica's sockets."""

    def __init__(self, hub: ClientToolHub) -> None:
        self._hub = hub

    async def Invoke(
        self,
        request: tpb.InvokeToolRequest,
        context: grpc.aio.ServicerContext[tpb.InvokeToolRequest, tpb.InvokeToolResponse],
    ) -> tpb.InvokeToolResponse:
        return await self._hub.invoke(request)


def _hub(conn: Connection) -> ClientToolHub:
    if conn.client_tools is None:
        raise GatewayError(503, "this gateway cannot host client tools", "unavailable")
    return conn.client_tools


async def client_tool_register(conn: Connection, data: RegisterData) -> dict[str, Any]:
    return await _hub(conn).register(conn, data)


async def client_tool_result(conn: Connection, data: ResultData) -> dict[str, Any]:
    return await _hub(conn).result(conn, data)
