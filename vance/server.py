"""The lifecycle every gRPC service shares: health, reflection, signals, graceful stop."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from vance.auth import Verifier
from vance.authz import AuthInterceptor
from vance.background import Background
from vance.channels import Channels
from vance.config import Config
from vance.observability import tracing
from vance.policy import Owners
from vance.revocations import RevocationSnapshot, RevocationWatch, Source, remote_source
from vance.rpc_calls import ServerCalls

logger = logging.getLogger(__name__)

Cleanup = Callable[[], Awaitable[None]]

SERVER_OPTIONS = [
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.so_reuseport", 0),
]


class GrpcHost:
    """A grpc.aio server with health and reflection, plus the cleanups to run when it stops.
    Every other method needs credentials (vance/authz.py); `owners` answers whose a session is
    for the methods a user token may call on this service. Revoked user tokens are refused from
    a snapshot kept fresh while the server runs, read from `revocations` (session_service: its
    own store) or else from session_service's TokenService (vance/revocations.py)."""

    def __init__(
        self,
        full_names: Sequence[str],
        config: Config,
        *,
        owners: Owners | None = None,
        revocations: Source | None = None,
    ) -> None:
        snapshot = RevocationSnapshot()
        self._channels: Channels | None = None
        if revocations is None:
            self._channels = Channels(config)
            revocations = remote_source(self._channels.get("session_service"))
        self.revocations = RevocationWatch(revocations, snapshot, config.auth.revocation_refresh_s)
        verifier = Verifier.from_config(config, is_revoked=snapshot.is_revoked)
        auth = AuthInterceptor(verifier, owners)
        # The same checks for the calls a stream carries (process_service's SteerStream).
        self.admission = auth.admission
        self.server = grpc.aio.server(
            options=SERVER_OPTIONS,
            # Auth first; then one error mapping and the RED metrics for every method.
            interceptors=[
                *tracing.server_interceptors(),
                auth,
                ServerCalls(),
            ],
        )
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflection.enable_server_reflection(
            [
                *full_names,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
            ],
            self.server,
        )
        self._full_names = list(full_names)
        self._cleanups: list[Cleanup] = []
        self._serving = False
        # The service's long-running tasks (vance/background.py): one that fails turns this
        # server's health NOT_SERVING, so a balancer or the supervisor sees the loss.
        self.background = Background(self._full_names[0], on_failure=self._task_failed)
        self.port = 0

    def bind(self, host: str, port: int) -> int:
        self.port = self.server.add_insecure_port(f"{host}:{port}")
        if self.port == 0:
            raise OSError(f"cannot listen on {host}:{port}")
        return self.port

    def on_stop(self, cleanup: Cleanup) -> None:
        self._cleanups.append(cleanup)

    async def start(self) -> None:
        await self.server.start()
        self.revocations.start()
        self._serving = self.background.healthy
        await self._set_health()

    async def _task_failed(self, name: str, reason: str) -> None:
        self._serving = False
        await self._set_health()

    async def _set_health(self) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if self._serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ["", *self._full_names]:
            await self.health.set(name, status)

    async def stop(self, grace: float = 5.0) -> None:
        """NOT_SERVING first so balancers drain us, then stop with a grace period, then stop the
        background tasks, then clean up (the cleanups close what those tasks used)."""
        self._serving = False
        await self._set_health()
        await self.server.stop(grace)
        await self.background.stop()
        await self.revocations.stop()
        if self._channels is not None:
            await self._channels.close()
        for cleanup in reversed(self._cleanups):
            try:
                await cleanup()
            except Exception:
                logger.exception("cleanup failed")


async def wait_for_signal() -> None:
    """Returns on SIGTERM or SIGINT."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


async def serve_until_signal(host: GrpcHost, name: str) -> None:
    await host.start()
    logger.info("%s listening on port %d", name, host.port)
    await wait_for_signal()
    logger.info("%s stopping", name)
    await host.stop()


def run_main(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Runs an entry point under uvloop."""
    import uvloop

    uvloop.run(main())
