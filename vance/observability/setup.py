"""What every process starts once, after its logging: the /metrics endpoint and tracing."""

from __future__ import annotations

import os

from vance.config import Config
from vance.observability.metrics import serve_metrics
from vance.observability.tracing import setup_tracing


def start_observability(config: Config, service: str) -> None:
    serve_metrics(config.observability.metrics_port)
    # The standard OTEL_* variables are read here, at the entry point, as the SDK reads them.
    setup_tracing(config.observability, service, os.environ)


# Under `vance run` (vance/supervisor.py), with `observability.metrics_port` = P, each child
# serves /metrics on its own port: P + this offset (the gateway serves it on its HTTP port).
METRICS_PORT_OFFSETS = {
    "session_service": 0,
    "process_service": 1,
    "tool_service": 2,
    "recipe_service": 3,
}
FIRST_WORKER_OFFSET = 4  # worker-1: P+4, worker-2: P+5, ...


def metrics_port_for(base: int, child: str) -> int:
    if not base or child in ("gateway", "store"):
        return 0
    if child.startswith("worker-"):
        return base + FIRST_WORKER_OFFSET + int(child.split("-")[1]) - 1
    return base + METRICS_PORT_OFFSETS[child]
