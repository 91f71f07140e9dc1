"""The gateway application: REST routes, health, the client WebSocket, and how it is served.

Layout (docs/architecture.md, "Gateway"): ws.py accepts sockets and reads frames, dispatch.py
is the frame table, *_frames.py the handlers, rest*.py the REST routes, inputs.py and
limits.py the input rules, errors.py the one error mapper, auth.py and revocations.py the
tokens."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc
import uvicorn
from fastapi import FastAPI, WebSocket
from fastapi.responses import JSONResponse, Response
from fastapi_offline import FastAPIOffline
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from gateway import (
    binding,
    errors,
    log_redact,
    openapi,
    rest,
    rest_access,
    rest_catalog,
    rest_documents,
    rest_hub,
    rest_knowledge,
    rest_overview,
    rest_sessions,
    rest_settings,
    ws,
)
from gateway.auth import Principal, Tokens, load_secret
from gateway.bind_rounds import BindRounds
from gateway.body_guard import BodyGuard
from gateway.client_tools import ClientToolHub, GatewayToolHost
from gateway.clients import Clients
from gateway.http_metrics import RouteMetrics
from gateway.limits import MAX_REQUEST_HEAD_BYTES, WS_MAX_BYTES
from gateway.replica import Replica
from gateway.revocations import Authenticator
from gateway.webui import mount_webui
from gateway.ws_transport import GatewayWebSocketProtocol
from vance.background import Background
from vance.channels import Channels
from vance.config import Config, load_config
from vance.heap import settle_heap, trim_in
from vance.internal.v1 import tokens_internal_pb2 as tipb
from vance.internal.v1 import tool_pb2, tool_pb2_grpc
from vance.logsetup import setup_logging
from vance.observability import metrics
from vance.observability.setup import start_observability
from vance.observability.tracing import instrument_app
from vance.revocations import remote_source
from vance.server import GrpcHost
from vance.v1 import tokens_pb2_grpc

logger = logging.getLogger(__name__)


def create_app(config: Config) -> FastAPI:
    tokens = Tokens(load_secret(config), config.gateway.token_ttl_s)
    # grpc.aio channels belong to the loop that creates them: open them in the server's loop.
    channels = Channels(config)
    holder: dict[str, Clients] = {}

    def clients() -> Clients:
        if "clients" not in holder:
            holder["clients"] = Clients.from_channels(channels)
        return holder["clients"]

    def token_stub() -> tokens_pb2_grpc.TokenServiceAsyncStub:
        return tokens_pb2_grpc.TokenServiceStub(channels.get("session_service"))

    async def revocations_since(since_ms: int) -> tipb.ListTokenRevocationsSinceResponse:
        # The channel is made on the first call, in the server's loop (see above).
        return await remote_source(channels.get("session_service"))(since_ms)

    authenticator = Authenticator(
        tokens, token_stub, revocations_since, config.auth.revocation_refresh_s
    )

    replica = Replica(config.lifecycle.replica_lease_ms)
    bind_rounds = BindRounds()
    client_tools = ClientToolHub(channels)
    # The lease renewals (vance/background.py); a failed one shows on /healthz.
    background = Background("gateway")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tool_host = await _start_tool_host(config, client_tools)
        await authenticator.watch.refresh()  # the first snapshot before the first socket
        authenticator.watch.start()
        background.start("replica-lease", replica.renew_forever(clients()))
        trim_in(background)  # freed heap back to the OS (vance/heap.py)
        feed = clients().event_feed
        if feed is not None:
            background.start("event-feed", feed.run())
        steers = clients().steers
        if steers is not None:
            background.start("steer-streams", steers.run())
        background.start(
            "bind-rounds",
            bind_rounds.run_forever(replica.connections, clients()),
            forever=config.gateway.bind_lease_ms > 0,
        )
        background.start(
            "bind-leases",
            binding.renew_leases_forever(
                replica.connections, clients(), config.gateway.bind_lease_ms
            ),
            forever=config.gateway.bind_lease_ms > 0,
        )
        yield
        await background.stop()
        await authenticator.watch.stop()
        await replica.shutdown(clients())
        await tool_host.stop(grace=1.0)
        await channels.close()

    # /docs and /redoc load Swagger UI and ReDoc from files the fastapi-offline package ships
    # (no CDN); gateway/openapi.py makes the schema they show the one the routes honour.
    app = FastAPIOffline(
        title="Vancetope gateway", version="0.1.0", lifespan=lifespan, redoc_url=None
    )
    # What the REST routes reach through `request.app.state` (gateway/rest_deps.py).
    app.state.tokens = tokens
    app.state.authenticator = authenticator
    app.state.clients = clients
    errors.install(app)
    openapi.install(app)
    app.add_middleware(BodyGuard)
    app.add_middleware(RouteMetrics)  # outermost: a refused body is a request too
    app.include_router(rest_access.router)
    app.include_router(rest.router)
    app.include_router(rest_sessions.router)
    app.include_router(rest_settings.router)
    app.include_router(rest_hub.router)
    app.include_router(rest_catalog.router)
    app.include_router(rest_documents.router)
    app.include_router(rest_overview.router)
    app.include_router(rest_knowledge.router)
    instrument_app(app)

    @app.get("/metrics", include_in_schema=False)
    async def metrics_page() -> Response:
        """Prometheus scrapes the gateway on its own port (docs/operations.md, "Metrics")."""
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        checks: dict[str, str] = {}
        for service in ("session_service", "process_service"):
            try:
                resp = await health_pb2_grpc.HealthStub(channels.get(service)).Check(
                    health_pb2.HealthCheckRequest(), timeout=2
                )
                checks[service] = health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)
            except grpc.aio.AioRpcError as exc:
                checks[service] = exc.code().name
        ok = all(v == "SERVING" for v in checks.values()) and background.healthy
        return JSONResponse(
            {
                "status": "ok" if ok else "degraded",
                "services": checks,
                "background": dict(background.failures),
            },
            status_code=200 if ok else 503,
        )

    async def authenticate(token: str) -> Principal:
        return await authenticator.authenticate(token)

    deps = ws.SocketDeps(
        authenticate,
        authenticator.check,
        authenticator.revoke,
        clients,
        config.gateway.ping_interval_s,
        config.gateway.bind_lease_ms,
        replica,
        client_tools,
        bind_rounds,
    )

    async def socket(socket: WebSocket) -> None:
        with metrics.WS_CONNECTIONS.track_inprogress():
            await ws.serve(socket, socket.path_params["tenant"], deps)

    # Starlette's route, not FastAPI's `app.websocket`: the socket needs no dependency
    # injection, and FastAPI's wrapper (two AsyncExitStacks, the solved dependencies, their
    # coroutine frames) stays alive with every open socket, ~3 KB each.
    app.router.add_websocket_route("/brain/{tenant}/ws", socket)

    # Last, so the API routes above win over the app's catch-all.
    mount_webui(app)
    return app


async def _start_tool_host(config: Config, hub: ClientToolHub) -> GrpcHost:
    """The ToolHost tool_service calls for a client tool of one of this replica's sockets; its
    address goes with every registration, so whichever replica holds the socket is asked."""
    name = tool_pb2.DESCRIPTOR.services_by_name["ToolHostService"].full_name
    host = GrpcHost([name], config)
    tool_pb2_grpc.add_ToolHostServiceServicer_to_server(GatewayToolHost(hub), host.server)
    port = host.bind(config.grpc_host, config.gateway.tool_host_port)
    await host.start()
    hub.address = config.gateway.tool_host_address or f"{config.grpc_host}:{port}"
    logger.info("client tool host listening on %s", hub.address)
    return host


def _return_freed_memory_to_the_os() -> None:
    """glibc raises its mmap threshold after a large block is freed, so later large frames
    are served from the heap, which rarely shrinks: after a burst of big frames the gateway's
    memory would stay up. A fixed threshold keeps every block above 128 KiB in its own mapping,
    released as soon as the frame is dropped."""
    name = ctypes.util.find_library("c")
    if not name:
        return
    try:
        libc = ctypes.CDLL(name)
        m_mmap_threshold = -3
        libc.mallopt(m_mmap_threshold, 128 * 1024)
    except (OSError, AttributeError) as exc:  # not glibc: nothing to tune
        logger.info("malloc not tuned: %s", exc)


def main() -> None:
    config = load_config()
    setup_logging(config.logging, "gateway")
    start_observability(config, "gateway")
    log_redact.install()
    _return_freed_memory_to_the_os()
    app = create_app(config)
    settle_heap()
    uvicorn.run(
        app,
        host=config.gateway.host,
        port=config.gateway.port,
        loop="uvloop",
        # h11, as before httptools was installed for the model calls (vance/llm_wire.py):
        # uvicorn's "auto" would take httptools then, and the request-head limit below is h11's.
        http="h11",
        log_level=config.logging.level.lower(),
        log_config=None,  # uvicorn logs through the root handler, with its token filter
        access_log=False,
        ws=GatewayWebSocketProtocol,  # uvicorn's, with fewer writes and less deflate
        ws_ping_interval=None,
        ws_max_size=WS_MAX_BYTES,
        # Room for a request line with a 100 KB id, so such a request reaches the app and gets
        # its JSON 400 rather than the HTTP parser's plain-text one.
        h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES,
    )
