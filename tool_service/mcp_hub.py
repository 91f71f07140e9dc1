"""MCP tool servers of tenants and projects (the `tools.mcp.servers` setting,
vance/mcp_servers.py): their tools join the pool as `<server>__<tool>` with the labels `@mcp`
and `@mcp:<server>`, so recipes select and cut them as any other tool; a server that is down
shows as unavailable tools with the reason, and calling one answers that reason.

One connection per tenant and server configuration (tool_service/mcp_conn.py), each run by a
task of the hub's TaskGroup, made when a pool first needs it and closed after it has gone
unused for IDLE_S.

The servers of a project come from its settings, kept until session_service reports a settings
write on `WatchSettings` (then every pool watcher is told too, as their pools name those
servers' tools); while that stream is down, for SETTINGS_TTL_S, and the watchers are told every
SETTINGS_TTL_S, so no pool outlives a change by more than that."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import logging
import time
from collections.abc import AsyncIterable, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc

from tool_service.mcp_conn import McpConnection, pool_name
from tool_service.registry import error
from vance.internal.v1 import tool_pb2 as tpb
from vance.mcp_servers import SETTING_MCP_SERVERS, McpServer, parse_servers
from vance.protoutil import struct_to_dict, to_value
from vance.store import Document
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb
from vance.v1 import session_pb2_grpc

logger = logging.getLogger(__name__)

LABEL = "@mcp"
SETTINGS_TTL_S = 5.0  # without the settings watch: a settings write is seen after this
WATCHED_SETTINGS_TTL_S = 600.0  # with it: only bounds how long a list lives without a change
FIRST_CONNECT_S = 8.0  # a pool that first needs a server waits this long for its tools
CALL_RECONNECT_S = 5.0  # a call to a server that is down waits this long for it to come back
IDLE_S = 600.0
UNAVAILABLE_TOOL = "unavailable"


class McpHub:
    def __init__(
        self,
        sessions: session_pb2_grpc.SessionServiceAsyncStub,
        secrets_dir: Path,
        on_change: Callable[[], Awaitable[None]],
        settings_changes: Callable[[], AsyncIterable[object]] | None = None,
    ) -> None:
        self._sessions = sessions
        # session_service's settings writes (SessionInternalService.WatchSettings)
        self._settings_changes = settings_changes
        self._watching_settings = False
        # Counts the settings changes reported: a list read while one arrived may predate it and
        # is not kept.
        self._settings_version = 0
        self._secrets_dir = secrets_dir
        self._on_change = on_change
        self._settings: dict[tuple[str, str], tuple[float, list[McpServer]]] = {}
        # One settings read per key at a time: the pools that find the copy expired meanwhile
        # wait for it instead of each asking session_service (hundreds of turns in flight
        # would otherwise send a burst of reads at every expiry).
        self._reading: dict[tuple[str, str], asyncio.Lock] = {}
        self._conns: dict[tuple[str, str], McpConnection] = {}
        self._tasks: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._tg: asyncio.TaskGroup | None = None

    async def run(self) -> None:
        """Owns every connection's task; returns only by cancellation (tool_service stops)."""
        async with asyncio.TaskGroup() as tg:
            self._tg = tg
            watch = tg.create_task(self._follow_settings())
            try:
                while True:
                    await asyncio.sleep(IDLE_S / 4)
                    self._close_idle()
            finally:
                self._tg = None
                watch.cancel()
                for task in self._tasks.values():
                    task.cancel()

    async def _follow_settings(self) -> None:
        if self._settings_changes is None:
            return
        while True:
            try:
                async for _ in self._settings_changes():
                    self._settings.clear()
                    self._settings_version += 1
                    self._watching_settings = True
                    await self._on_change()
            except grpc.aio.AioRpcError as exc:
                logger.debug("settings watch lost: %s", exc.code().name)
            # Lists kept for the watched bound must not outlive the watch: a change may go
            # unseen now, so from here on they are kept SETTINGS_TTL_S.
            self._watching_settings = False
            self._settings.clear()
            self._settings_version += 1
            await self._on_change()
            await asyncio.sleep(SETTINGS_TTL_S)

    def _close_idle(self) -> None:
        cutoff = time.monotonic() - IDLE_S
        for key, conn in list(self._conns.items()):
            if conn.last_used < cutoff:
                logger.info("closing idle MCP server %s", conn.server.name)
                self._tasks.pop(key).cancel()
                del self._conns[key]

    async def servers(self, tenant_id: str, project_id: str) -> list[McpServer]:
        """The servers a process of this project reaches (project value over tenant value)."""
        key = (tenant_id, project_id)
        now = time.monotonic()
        held = self._settings.get(key)
        if held is not None and held[0] > now:
            return held[1]
        async with self._reading.setdefault(key, asyncio.Lock()):
            held = self._settings.get(key)
            if held is not None and held[0] > time.monotonic():
                return held[1]  # read by the caller this one waited for
            return await self._read(tenant_id, project_id, held)

    async def _read(
        self, tenant_id: str, project_id: str, held: tuple[float, list[McpServer]] | None
    ) -> list[McpServer]:
        key = (tenant_id, project_id)
        now = time.monotonic()
        since = self._settings_version
        try:
            view = await self._sessions.GetSettings(
                spb.GetSettingsRequest(tenant_id=tenant_id, project_id=project_id), timeout=5
            )
            raw = view.effective.get(SETTING_MCP_SERVERS, "")
            servers = parse_servers(raw) if raw else []
        except grpc.aio.AioRpcError as exc:
            # Kept for the TTL too: a process of a project session_service does not know (or
            # an outage) must not cost a call per pool. An outage keeps the last list.
            if exc.code() != grpc.StatusCode.NOT_FOUND:
                logger.warning("MCP settings of %s/%s unreadable: %s", tenant_id, project_id, exc)
            servers = held[1] if held is not None else []
        except ValueError as exc:  # checked on write; one stored before the check is skipped
            logger.warning("MCP settings of %s/%s ignored: %s", tenant_id, project_id, exc)
            servers = []
        ttl_s = WATCHED_SETTINGS_TTL_S if self._watching_settings else SETTINGS_TTL_S
        if since == self._settings_version:
            self._settings[key] = (now + ttl_s, servers)
        return servers

    def _connection(self, tenant_id: str, server: McpServer) -> McpConnection:
        key = (tenant_id, server.model_dump_json())
        conn = self._conns.get(key)
        if conn is None:
            if self._tg is None:
                raise RuntimeError("the MCP hub is not running")
            conn = self._conns[key] = McpConnection(server, self._secrets_dir, self._on_change)
            self._tasks[key] = self._tg.create_task(conn.run())
        conn.last_used = time.monotonic()
        return conn

    async def specs(self, tenant_id: str, project_id: str, wanted: list[str]) -> list[Document]:
        """The tools of the servers that `wanted` (a pool's names, globs and @labels) may
        select: a server no pattern can reach is not connected for it."""
        servers = [
            s
            for s in await self.servers(tenant_id, project_id)
            if any(_may_select(p, s.name) for p in wanted)
        ]
        conns = [self._connection(tenant_id, s) for s in servers]
        # A server seen for the first time gets a moment to connect, so the first turn that
        # names it sees its tools rather than "not connected yet".
        waiting = [c.attempted.wait() for c in conns if not c.attempted.is_set()]
        if waiting:
            try:
                async with asyncio.timeout(FIRST_CONNECT_S):
                    await asyncio.gather(*waiting)
            except TimeoutError:
                pass
        return [spec for c in conns for spec in _specs(c)]

    async def invoke(self, request: tpb.InvokeToolRequest) -> tpb.InvokeToolResponse:
        server_name = request.tool_name.split("__", 1)[0]
        servers = await self.servers(request.tenant_id, request.project_id)
        server = next((s for s in servers if s.name == server_name), None)
        if server is None:
            return error(f"unknown tool {request.tool_name!r}: no MCP server {server_name!r}")
        conn = self._connection(request.tenant_id, server)
        client = await conn.wait_up(CALL_RECONNECT_S)
        if client is None:
            return error(f"UNAVAILABLE: MCP server {server.name!r} is down: {conn.reason}")
        tool = next(
            (t for t in conn.tools if pool_name(server.name, t.name) == request.tool_name), None
        )
        if tool is None:
            return error(f"MCP server {server.name!r} has no tool {request.tool_name!r}")
        timeout_s = server.timeout_ms / 1000
        try:
            async with asyncio.timeout(timeout_s):
                result = await client.call_tool(tool.name, struct_to_dict(request.arguments))
        except TimeoutError:
            return tpb.InvokeToolResponse(
                status=pb.TOOL_CALL_STATUS_TIMEOUT,
                error=f"MCP server {server.name!r} did not answer {tool.name} within {timeout_s:.0f}s",
            )
        except Exception as exc:  # the transport broke (server killed, network): reconnect
            reason = str(exc) or type(exc).__name__
            conn.broke(reason)
            return error(f"UNAVAILABLE: MCP server {server.name!r} failed: {reason}")
        return _response(server.name, result)


def _may_select(pattern: str, server: str) -> bool:
    if pattern.startswith("@"):
        return pattern in (LABEL, f"{LABEL}:{server}")
    prefix = f"{server}__"
    return pattern.startswith(prefix) or fnmatch.fnmatchcase(f"{prefix}x", pattern)


def _specs(conn: McpConnection) -> list[Document]:
    name = conn.server.name
    labels = [LABEL, f"{LABEL}:{name}"]
    if conn.client is None and not conn.tools:
        return [
            {
                "_id": pool_name(name, UNAVAILABLE_TOOL),
                "description": f"MCP server {name!r} is unavailable: {conn.reason}. "
                "Calling this tool answers that reason; its tools come back when it does.",
                "parameters": {"type": "object", "properties": {}},
                "labels": labels,
                "owner": f"mcp:{name}",
            }
        ]
    down = "" if conn.client is not None else f"UNAVAILABLE ({conn.reason}). "
    return [
        {
            "_id": pool_name(name, t.name),
            "description": f"{down}[MCP {name}] {t.description or t.name}",
            "parameters": t.input_schema or {"type": "object", "properties": {}},
            "labels": labels,
            "owner": f"mcp:{name}",
        }
        for t in conn.tools
    ]


def _response(server: str, result: Any) -> tpb.InvokeToolResponse:
    """The model reads what the tool said: its structured result when it gave one, else its
    text; a tool-level error (is_error) is an ERROR result with that text."""
    text = "\n".join(getattr(c, "text", "") for c in result.content if getattr(c, "text", ""))
    if result.is_error:
        return error(f"MCP server {server!r}: {text or 'the tool failed'}")
    value: Any = result.structured_content
    if isinstance(value, dict) and set(value) == {"result"}:
        value = value["result"]  # the SDK wraps a plain return value so
    if value is None:
        value = text
    return tpb.InvokeToolResponse(
        status=pb.TOOL_CALL_STATUS_SUCCESS, result=to_value(json.loads(json.dumps(value)))
    )
