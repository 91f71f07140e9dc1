"""tool_service server: wiring and lifecycle."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable
from pathlib import Path

from tool_service.client_tools import ClientTools
from tool_service.mcp_hub import McpHub
from tool_service.registry import ToolRegistry
from tool_service.routing import ToolRouter
from tool_service.service import ToolServicer
from vance.auth import ServiceCredential
from vance.channels import Channels
from vance.config import Config, load_config
from vance.heap import settle_heap
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.internal.v1 import session_internal_pb2_grpc, tool_pb2, tool_pb2_grpc
from vance.logsetup import setup_logging
from vance.observability.setup import start_observability
from vance.server import GrpcHost, run_main, serve_until_signal
from vance.store import connect
from vance.v1 import session_pb2_grpc

SERVICE_NAME = tool_pb2.DESCRIPTOR.services_by_name["ToolService"].full_name


async def create_server(config: Config, *, port: int | None = None) -> tuple[GrpcHost, int]:
    client, db = connect(config)
    registry = ToolRegistry(db, ServiceCredential.from_config(config, "tool_service"))
    channels = Channels(config, name="tool_service")
    settings = session_internal_pb2_grpc.SessionInternalServiceStub(channels.get("session_service"))

    def settings_changes() -> AsyncIterable[sipb.SettingsChange]:
        return settings.WatchSettings(sipb.WatchSettingsRequest())

    mcp = McpHub(
        session_pb2_grpc.SessionServiceStub(channels.get("session_service")),
        Path(config.mcp.secrets_dir or Path(config.data_dir) / "secrets"),
        registry.changed,
        settings_changes,
    )
    router = ToolRouter(registry, ClientTools(db), mcp)
    host = GrpcHost([SERVICE_NAME], config)
    tool_pb2_grpc.add_ToolServiceServicer_to_server(ToolServicer(registry, router), host.server)
    bound = host.bind(config.grpc_host, config.port("tool_service") if port is None else port)
    # Another replica's registrations, seen within about a second (tool_service/registry.py).
    host.background.start("tools-follow", registry.follow_store())
    # The MCP connections live as long as the server; stopping it cancels and awaits them
    # (their stdio servers are stopped by the mcp package on the way out).
    mcp_task = asyncio.get_running_loop().create_task(mcp.run())

    async def close() -> None:
        mcp_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await mcp_task
        await registry.close()
        await channels.close()
        await client.close()

    host.on_stop(close)
    return host, bound


async def serve() -> None:
    config = load_config()
    setup_logging(config.logging, "tool_service")
    start_observability(config, "tool_service")
    host, _ = await create_server(config)
    settle_heap()
    await serve_until_signal(host, "tool_service")


def main() -> None:
    run_main(serve)
