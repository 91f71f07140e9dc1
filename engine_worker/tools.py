"""ToolDispatcher: the tools of one process for one turn, invoked through tool_service."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass

import grpc

from engine_worker.json_types import Json, JsonObject, ModelTool
from engine_worker.reports import EventPublisher
from engine_worker.watched import WatchedCache
from vance.domain import ThinkProcess, ToolCallStatus
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import tool_pb2_grpc
from vance.profiles import capabilities
from vance.protoutil import dict_to_struct, from_value, struct_to_dict
from vance.v1 import common_pb2 as pb

# The report kinds of a tool call's start and end; clients get them as the frames
# tool-call-started and tool-call-completed (docs/protocol.md).
TOOL_CALL_STARTED = "TOOL_CALL_STARTED"
TOOL_CALL_COMPLETED = "TOOL_CALL_COMPLETED"
# A call's parameters go to clients with each string cut to this many characters: the events are
# a live overlay and stored in the session's stream, not a copy of every argument.
PARAM_STRING_LIMIT = 500


# InvokeTool's deadline. tool_service bounds every call by the tool's own timeout (its spec's,
# else 60 s; client and MCP tools up to 600 s) and answers TIMEOUT itself: this deadline only
# ends the wait for a tool_service that does not answer at all, so it lies beyond those bounds.
TOOL_DEADLINE_FLOOR_S = 600.0
TOOL_DEADLINE_MARGIN_S = 60.0


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: JsonObject
    timeout_ms: int = 0  # tool_service's bound on one call, when not its default

    @property
    def deadline_s(self) -> float:
        return max(self.timeout_ms / 1000, TOOL_DEADLINE_FLOOR_S) + TOOL_DEADLINE_MARGIN_S

    def for_model(self) -> ModelTool:
        """The same object for every turn that uses this spec (pools are held between turns,
        engine_worker/watched.py), so the model client encodes a pool's tools once
        (vance/llm_http.py); nobody may change it."""
        return self._for_model

    @functools.cached_property
    def _for_model(self) -> ModelTool:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters or {"type": "object", "properties": {}},
            },
        }


@dataclass(frozen=True)
class ToolCallResult:
    status: ToolCallStatus
    result: Json = None
    error: str = ""

    def for_model(self) -> str:
        if self.status is ToolCallStatus.SUCCESS:
            return json.dumps(self.result, default=str)
        return json.dumps({"status": self.status.value, "error": self.error})


_STATUS = {
    pb.TOOL_CALL_STATUS_SUCCESS: ToolCallStatus.SUCCESS,
    pb.TOOL_CALL_STATUS_ERROR: ToolCallStatus.ERROR,
    pb.TOOL_CALL_STATUS_TIMEOUT: ToolCallStatus.TIMEOUT,
}


# engine tools, add, remove, profile, then where the process runs: the session (its client
# tools; "" for a profile without them, so those pools stay shared) and the tenant and project
# (their MCP servers).
PoolKey = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], str, str, str, str]


# Resolved pools of this worker (engine_worker/watched.py): a pool only changes when a service
# registers tools, so asking tool_service on every turn (a call and a schema conversion per
# turn) bought nothing; it is kept until tool_service reports a change.
PoolCache = WatchedCache[PoolKey, list[ToolSpec]]


class ToolDispatcher:
    """Every call carries an idempotency key from the turn and the call's place in it, so a
    redone turn's spawns and steers take effect once."""

    def __init__(
        self,
        stub: tool_pb2_grpc.ToolServiceAsyncStub | None,
        process: ThinkProcess,
        turn_id: str,
        *,
        before_invoke: Callable[[], None] | None = None,
        cache: PoolCache | None = None,
        events: EventPublisher | None = None,
    ) -> None:
        self._stub = stub
        self._cache = cache
        # Sends the turn's held-back reports: what the engine said before a tool call is
        # stored before anything the tool does (a spawned process, a steered sibling).
        self._before_invoke = before_invoke
        # Where a call's start and end are reported: riders, so they go with the turn's next
        # report that is sent anyway, or with its commit; never a send or store write of their own.
        self._events = events
        self._process = process
        self._turn_id = turn_id
        self._calls = 0
        self._pool: dict[str, ToolSpec] = {}

    @property
    def profile(self) -> str:
        # The connection bound to the session now, else the session's own (profiles apply per
        # connection: gateway/connection_profile.py).
        return str(
            self._process.connection_profile
            or self._process.recipe_snapshot.get("profile")
            or "default"
        )

    async def pool(self, engine_tools: list[str]) -> list[ToolSpec]:
        """The engine's tools changed by the recipe snapshot, pruned by the profile."""
        if self._stub is None:
            return []
        snap = self._process.recipe_snapshot
        add = tuple(str(x) for x in snap.get("allowedToolsAdd") or [])
        remove = tuple(str(x) for x in snap.get("allowedToolsRemove") or [])
        p = self._process
        session = p.session_id if capabilities(self.profile).client_tools_enabled else ""
        key: PoolKey = (
            tuple(engine_tools),
            add,
            remove,
            self.profile,
            session,
            p.tenant_id,
            p.project_id,
        )
        # A pool with client tools is asked for every turn: a client registers them right
        # before its first message, sooner than the registry's change notice may reach us.
        cache = self._cache if not session else None
        specs = cache.get(key) if cache is not None else None
        if specs is None and cache is not None and cache.watching:
            async with cache.reading:
                specs = cache.get(key)
                if specs is None:
                    since = cache.version
                    specs = await _resolve(self._stub, key)
                    cache.put(key, specs, since)
        elif specs is None:
            specs = await _resolve(self._stub, key)
        self._pool = {s.name: s for s in specs}
        return specs

    async def invoke(self, name: str, arguments: JsonObject, call_id: str) -> ToolCallResult:
        self._calls += 1
        if name not in self._pool or self._stub is None:
            return ToolCallResult(
                ToolCallStatus.ERROR, error=f"unknown tool {name!r}; use one of your tools"
            )
        if self._events is not None:
            self._events.ride(
                TOOL_CALL_STARTED,
                {"toolCallId": call_id, "toolName": name, "params": _bounded(arguments)},
            )
        if self._before_invoke is not None:
            self._before_invoke()
        spec = self._pool[name]
        try:
            resp = await self._invoke(self._stub, name, arguments, call_id, spec.deadline_s)
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                raise
            resp = tpb.InvokeToolResponse(
                status=pb.TOOL_CALL_STATUS_TIMEOUT,
                error=f"tool_service did not answer {name} within {spec.deadline_s:.0f}s",
            )
        result = ToolCallResult(
            _STATUS.get(resp.status, ToolCallStatus.ERROR),
            from_value(resp.result) if resp.HasField("result") else None,
            resp.error,
        )
        if self._events is not None:
            self._events.ride(
                TOOL_CALL_COMPLETED,
                {
                    "toolCallId": call_id,
                    "toolName": name,
                    "status": result.status.value,
                    "resultSize": len(result.for_model()),
                    "error": result.error[:PARAM_STRING_LIMIT],
                },
            )
        return result

    async def _invoke(
        self,
        stub: tool_pb2_grpc.ToolServiceAsyncStub,
        name: str,
        arguments: JsonObject,
        call_id: str,
        deadline_s: float,
    ) -> tpb.InvokeToolResponse:
        return await stub.InvokeTool(
            tpb.InvokeToolRequest(
                tool_name=name,
                arguments=dict_to_struct(arguments),
                process_id=self._process.id,
                session_id=self._process.session_id,
                tool_call_id=call_id,
                idempotency_key=f"{self._turn_id}:t{self._calls}",
                profile=self.profile,
                tenant_id=self._process.tenant_id,
                project_id=self._process.project_id,
            ),
            timeout=deadline_s,
        )


async def _resolve(stub: tool_pb2_grpc.ToolServiceAsyncStub, key: PoolKey) -> list[ToolSpec]:
    engine_tools, add, remove, profile, session, tenant, project = key
    resp = await stub.ResolvePool(
        tpb.ResolvePoolRequest(
            engine_tools=engine_tools,
            add=add,
            remove=remove,
            profile=profile,
            session_id=session,
            tenant_id=tenant,
            project_id=project,
        )
    )
    return [
        ToolSpec(t.name, t.description, struct_to_dict(t.parameters), t.timeout_ms)
        for t in resp.tools
    ]


def _bounded(value: Json) -> Json:
    if isinstance(value, str) and len(value) > PARAM_STRING_LIMIT:
        return f"{value[:PARAM_STRING_LIMIT]}... [cut: {len(value) - PARAM_STRING_LIMIT} more]"
    if isinstance(value, dict):
        return {str(k): _bounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_bounded(v) for v in value]
    return value
