"""The gateway application: login, health, and the client WebSocket."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import uvicorn
from fastapi import FastAPI, HTTPException, WebSocket
from fastapi.responses import JSONResponse
from grpc_health.v1 import health_pb2, health_pb2_grpc
from pydantic import BaseModel

from gateway import rest, rest_sessions, rest_settings
from gateway.auth import Principal, Tokens, bearer, load_secret
from gateway.clients import Clients
from gateway.replica import Replica
from gateway.ws import Connection
from vance.channels import Channels
from vance.config import Config, load_config
from vance.domain import PROFILE_PATTERN
from vance.errors import UnauthenticatedError, http_status_for, reason_of
from vance.logsetup import setup_logging
from vance.v1 import session_pb2 as spb

logger = logging.getLogger(__name__)


class LoginBody(BaseModel):
    password: str


def create_app(config: Config) -> FastAPI:
    tokens = Tokens(load_secret(config), config.gateway.token_ttl_s)
    # grpc.aio channels belong to the loop that creates them: open them in the server's loop.
    channels = Channels(config)
    holder: dict[str, Clients] = {}

    def clients() -> Clients:
        if "clients" not in holder:
            holder["clients"] = Clients.from_channels(channels)
        return holder["clients"]

    replica = Replica()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        renew = asyncio.ensure_future(replica.renew_forever(clients()))
        yield
        renew.cancel()
        await asyncio.gather(renew, return_exceptions=True)
        await replica.shutdown(clients())
        await channels.close()

    app = FastAPI(title="Vancetope gateway", version="0.1.0", lifespan=lifespan)
    # What gateway/rest.py's routes reach through `request.app.state`.
    app.state.tokens = tokens
    app.state.clients = clients
    app.include_router(rest.router)
    app.include_router(rest_sessions.router)
    app.include_router(rest_settings.router)

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
        ok = all(v == "SERVING" for v in checks.values())
        return JSONResponse(
            {"status": "ok" if ok else "degraded", "services": checks},
            status_code=200 if ok else 503,
        )

    @app.post("/brain/{tenant}/access/{username}")
    async def login(tenant: str, username: str, body: LoginBody) -> dict[str, Any]:
        try:
            user = await clients().sessions.Authenticate(
                spb.AuthenticateRequest(tenant_id=tenant, username=username, password=body.password)
            )
        except grpc.aio.AioRpcError as exc:
            raise HTTPException(
                http_status_for(exc.code()),
                {"errorMessage": exc.details(), "reason": reason_of(exc)},
            ) from exc
        token = tokens.issue(Principal(user.tenant_id, user.username, tuple(user.roles)))
        return {"token": token, "userId": user.username, "tenantId": user.tenant_id}

    @app.websocket("/brain/{tenant}/ws")
    async def socket(ws: WebSocket, tenant: str) -> None:
        # Accept first, then refuse with a close code and reason a client can read.
        await ws.accept()
        try:
            principal = tokens.verify(
                bearer(ws.headers.get("authorization"), ws.query_params.get("token"))
            )
        except UnauthenticatedError as exc:
            await ws.close(code=4401, reason=exc.reason)
            return
        if principal.tenant_id != tenant:
            await ws.close(code=4403, reason="tenant_mismatch")
            return
        profile = ws.headers.get("x-vance-profile") or ws.query_params.get("profile") or "default"
        if not re.match(PROFILE_PATTERN, profile):
            await ws.close(code=4400, reason="bad_profile")
            return
        conn = Connection(
            ws,
            principal,
            clients(),
            profile=profile,
            ping_interval_s=config.gateway.ping_interval_s,
            replica=replica,
        )
        await conn.run()

    return app


def main() -> None:
    config = load_config()
    setup_logging(config.logging, "gateway")
    uvicorn.run(
        create_app(config),
        host=config.gateway.host,
        port=config.gateway.port,
        loop="uvloop",
        log_level=config.logging.level.lower(),
        access_log=False,
        ws_ping_interval=None,
    )
