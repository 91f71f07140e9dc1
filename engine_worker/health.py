"""The worker's gRPC health endpoint, for compose healthchecks and Kubernetes probes.

A worker serves no API, so this server holds only `grpc.health.v1.Health`: the overall status
(service "") is SERVING while the process runs (liveness), and `vance.v1.EngineWorker` is
SERVING only while the worker's stream to process_service is up (readiness: the `welcome` of
engine_worker/worker.py has arrived and the stream has not been lost since). Off unless
`worker.health_port` (VANCE_WORKER_HEALTH_PORT) is set; `make run` leaves it off, its workers
share a host.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

logger = logging.getLogger(__name__)

READINESS_SERVICE = "vance.v1.EngineWorker"
_SERVING = health_pb2.HealthCheckResponse.SERVING
_NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class Connected(Protocol):
    """What the health endpoint needs of the worker: its connected flag."""

    @property
    def connected(self) -> asyncio.Event: ...


class WorkerHealth:
    """Serves health on host:port while `run()` runs; follows the worker's connected flag."""

    def __init__(self, worker: Connected, host: str, port: int, *, poll_s: float = 0.5) -> None:
        self._worker = worker
        self._poll_s = poll_s
        self._server = grpc.aio.server()
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        self.port = self._server.add_insecure_port(f"{host}:{port}")
        if self.port == 0:
            raise OSError(f"cannot listen on {host}:{port} for the worker's health")

    async def run(self) -> None:
        """Until cancelled (the worker's TaskGroup owns it); then NOT_SERVING and stop."""
        await self._server.start()
        await self._health.set("", _SERVING)
        logger.info("worker health on port %d", self.port)
        ready: bool | None = None
        try:
            while True:
                now = self._worker.connected.is_set()
                if now != ready:
                    ready = now
                    await self._health.set(READINESS_SERVICE, _SERVING if now else _NOT_SERVING)
                await asyncio.sleep(self._poll_s)
        finally:
            await self._health.enter_graceful_shutdown()
            await self._server.stop(1.0)
