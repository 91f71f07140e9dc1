"""Prometheus metrics of every process, in one place so their names are documented once
(docs/operations.md, "Metrics"). Counters and histograms are bumped where things happen;
gauges of in-memory state (queues, leases) are read at scrape time by a collector, so they
cost nothing on the turn path."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from prometheus_client import Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import REGISTRY, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from pymongo import monitoring

from vance.observability.red import Family

logger = logging.getLogger(__name__)

_FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
_SLOW = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

TURNS = Counter(
    "vance_turns", "Turns run by this worker, by engine and outcome", ["engine", "outcome"]
)
TURN_SECONDS = Histogram(
    "vance_turn_duration_seconds", "Wall time of a turn on a worker", ["engine"], buckets=_SLOW
)
QUEUED = Counter(
    "vance_turns_queued", "Turns that waited in the queue for a worker slot", ["engine"]
)
DISPATCHED = Counter("vance_turns_dispatched", "Turns handed to a worker", ["engine"])
LEASES_LOST = Counter("vance_lane_leases_lost", "Running turns whose lane lease was lost", ["why"])
REDOS = Counter("vance_turn_redos", "Turns handed out again after a loss or failure")
MODEL_SECONDS = Histogram(
    "vance_model_call_duration_seconds",
    "Model calls, start to last chunk, by model and tier (vance/llm.py)",
    ["model", "tier"],
    buckets=_SLOW,
)
MODEL_RETRIES = Counter(
    "vance_model_call_retries",
    "Model calls tried again after the provider refused them as overloaded (vance/llm_limits.py)",
    ["model", "status"],
)
MODEL_ERRORS = Counter("vance_model_call_errors", "Model calls that failed", ["model", "error"])
STORE_SECONDS = Histogram(
    "vance_store_command_duration_seconds", "Store commands", ["command"], buckets=_FAST
)
STORE_ERRORS = Counter("vance_store_command_errors", "Store commands that failed", ["command"])
# RED of every gRPC method (vance/rpc_calls.py) and HTTP route (gateway/http_metrics.py), as
# cheap series (red.py). A stream's duration is its whole life: long subscriptions land in the
# top buckets.
_CALL_BUCKETS = (*_FAST, 2.5, 5.0, 10.0, 60.0, 600.0)
GRPC = Family(
    ("vance_grpc_server_handled", "gRPC calls this server finished, by method and status code"),
    (
        "vance_grpc_server_handling_seconds",
        "Time from a call's start to its end on this server (a stream: its whole life)",
    ),
    ["service", "method"],
    "code",
    _CALL_BUCKETS,
)
HTTP = Family(
    ("vance_http_requests", "HTTP requests the gateway answered, by route template and status"),
    ("vance_http_request_duration_seconds", "Time to answer an HTTP request on the gateway"),
    ["method", "route"],
    "status",
    _CALL_BUCKETS,
)
REGISTRY.register(GRPC)
REGISTRY.register(HTTP)
WS_CONNECTIONS = Gauge("vance_ws_connections", "Open client WebSockets on this gateway")
STEERS = Counter("vance_steers", "Steer requests by delivery outcome", ["outcome"])


class _StateCollector(Collector):
    """Gauges read from a process's in-memory state when /metrics is scraped."""

    def __init__(self) -> None:
        self.queue_depth: Callable[[], Iterable[tuple[str, int]]] | None = None
        self.leases_held: Callable[[], int] | None = None
        # (worker id, busy slots, free slots) of every connected worker (process_service).
        self.worker_slots: Callable[[], Iterable[tuple[str, int, int]]] | None = None

    def collect(self) -> Iterator[Metric]:
        if self.queue_depth is not None:
            depth = GaugeMetricFamily(
                "vance_queue_depth",
                "Processes waiting for a worker slot, by engine",
                labels=["engine"],
            )
            for engine, n in self.queue_depth():
                depth.add_metric([engine], n)
            yield depth
        if self.leases_held is not None:
            yield GaugeMetricFamily(
                "vance_lane_leases_held",
                "Running turns holding a lane lease",
                value=self.leases_held(),
            )
        if self.worker_slots is not None:
            slots = GaugeMetricFamily(
                "vance_worker_slots",
                "Turn slots of the connected engine workers: busy, and free to take a turn "
                "(free shrinks when a worker reports its event loop or memory saturated)",
                labels=["worker", "state"],
            )
            for worker, busy, free in self.worker_slots():
                slots.add_metric([worker, "busy"], busy)
                slots.add_metric([worker, "free"], free)
            yield slots


STATE = _StateCollector()
REGISTRY.register(STATE)


@contextmanager
def timed_model_call(model: str, tier: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    except BaseException as exc:
        MODEL_ERRORS.labels(model, type(exc).__name__).inc()
        raise
    finally:
        MODEL_SECONDS.labels(model, tier).observe(time.perf_counter() - start)


class StoreCommandTimer(monitoring.CommandListener):
    def started(self, event: monitoring.CommandStartedEvent) -> None:
        return None

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        self.observed(event.command_name, "", event.duration_micros / 1e6, False)

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        self.observed(event.command_name, "", event.duration_micros / 1e6, True)

    def observed(self, name: str, collection: str, seconds: float, failed: bool) -> None:
        """A command sent by vance/store_wire.py (or, through the events above, by PyMongo)."""
        STORE_SECONDS.labels(name).observe(seconds)
        if failed:
            STORE_ERRORS.labels(name).inc()


def store_listeners(metrics_port: int) -> list[StoreCommandTimer]:
    """The store timer, only where metrics are served (a listener costs on every command)."""
    return [StoreCommandTimer()] if metrics_port else []


def serve_metrics(port: int) -> None:
    """`/metrics` on `port` in a daemon thread (prometheus_client's own server); 0: off."""
    if not port:
        return
    start_http_server(port)
    logger.info("metrics on port %d", port)
