"""What an operator sees of a running system (docs/operations.md, "Observability"): /metrics
with RED figures of every gRPC method and HTTP route, the worker slot and queue gauges and
model call latency by tier; spans exported where the standard OTEL_* variables point; JSON log
lines that carry the trace and span ids of those spans; a Grafana dashboard that only asks for
metrics the system really has.

One system of its own (metrics, JSON logs and OTLP export on), with an OTLP/HTTP receiver in
this test's event loop standing in for a collector."""

from __future__ import annotations

import gzip
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.parser import text_string_to_metric_families

from tests.harness import System, eventually, running_system
from vance.observability.setup import METRICS_PORT_OFFSETS
from vance.testing.ports import free_port_block
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm
from vance.v1 import process_pb2 as ppb

DASHBOARD = Path(__file__).resolve().parent.parent / "deploy" / "grafana" / "vance-dashboard.json"


@dataclass
class Collector:
    """Spans received over OTLP/HTTP (protobuf), with their resource attributes."""

    spans: list[tuple[dict[str, str], str, str]] = field(default_factory=list)  # attrs, trace, name

    async def receive(self, request: web.Request) -> web.Response:
        body = await request.read()
        if request.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        export = ExportTraceServiceRequest.FromString(body)
        for rs in export.resource_spans:
            attrs = {a.key: a.value.string_value for a in rs.resource.attributes}
            for ss in rs.scope_spans:
                for span in ss.spans:
                    self.spans.append((attrs, span.trace_id.hex(), span.name))
        return web.Response(status=200, content_type="application/x-protobuf")


@dataclass
class Observed:
    system: System
    collector: Collector
    metrics_base: int
    logs: Path


@pytest.fixture(scope="module")
async def observed(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[Observed]:
    collector = Collector()
    app = web.Application()
    app.router.add_post("/v1/traces", collector.receive)
    runner = web.AppRunner(app)
    await runner.setup()
    receiver_port = free_port_block(1)
    site = web.TCPSite(runner, "127.0.0.1", receiver_port)
    await site.start()
    metrics_base = free_port_block(8)
    tmp = tmp_path_factory.mktemp("observed")
    logs = tmp / "logs"
    env = {
        "VANCE_METRICS_PORT": str(metrics_base),
        "VANCE_LOG_JSON": "true",
        # The standard variables only: no VANCE_OTLP_ENDPOINT.
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{receiver_port}/v1/traces",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=otel-test",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    try:
        async with running_system(tmp, llm, logs=logs, extra_env=env) as system:
            yield Observed(system, collector, metrics_base, logs)
    finally:
        await runner.cleanup()


async def _scrape(url: str) -> dict[str, list[tuple[str, dict[str, str], float]]]:
    """Metric family name -> samples (sample name, labels, value)."""
    async with httpx.AsyncClient() as http:
        r = await http.get(url, timeout=10)
        r.raise_for_status()
    return {
        f.name: [(s.name, dict(s.labels), s.value) for s in f.samples]
        for f in text_string_to_metric_families(r.text)
    }


async def _chat(system: System, m: str) -> None:
    system.script(
        Rule(
            match_last=f"metrics {m}",
            tool_calls=[
                {
                    "name": "respond",
                    "arguments": {"message": f"counted {m}", "awaiting_user_input": False},
                }
            ],
        )
    )
    client = await system.connect()
    try:
        await client.ok("session-create", {"projectId": "demo"})
        await client.ok("process-steer", {"processName": "chat", "content": f"metrics {m}"})
        await client.wait_for(
            lambda f: f["type"] == "chat-message-appended" and f"counted {m}" in str(f["data"]),
            timeout=60,
            what="the scripted answer",
        )
    finally:
        await client.close()


async def test_metrics_show_red_per_method_and_route_and_the_slot_gauges(
    observed: Observed,
) -> None:
    system = observed.system
    m = uuid.uuid4().hex[:8]
    await _chat(system, m)
    async with httpx.AsyncClient() as http:  # a refused REST call: a 401 by route template
        r = await http.get(f"http://{system.gateway}/brain/default/sessions")
        assert r.status_code == 401

    read = system.processes.SubscribeSessionBatches(
        ppb.SubscribeSessionRequest(session_id=f"s-{m}", replay_only=True)
    )
    assert [b async for b in read] == []
    process_url = (
        f"http://127.0.0.1:{observed.metrics_base + METRICS_PORT_OFFSETS['process_service']}"
    )
    families = await _scrape(process_url)
    handled = families["vance_grpc_server_handled"]
    steers = [
        s
        for s in handled
        if s[1]["method"] == "Steer" and s[1]["code"] == "OK" and s[0].endswith("_total")
    ]
    assert steers and steers[0][2] >= 1, handled
    seconds = families["vance_grpc_server_handling_seconds"]
    steer_buckets = [s for s in seconds if s[0].endswith("_bucket") and s[1]["method"] == "Steer"]
    assert steer_buckets and steer_buckets[-1][2] >= 1  # the +Inf bucket counts every call
    # The streaming methods are measured too (WorkerConnect and the gateway's FollowSessions:
    # open while the worker or gateway runs, so they show in the counter once they end; a
    # replay-only read of a session's events ends at once).
    assert any(s[1]["method"] == "SubscribeSessionBatches" for s in handled), handled
    slots = families["vance_worker_slots"]
    assert {s[1]["state"] for s in slots} == {"busy", "free"}
    assert sum(s[2] for s in slots if s[1]["state"] == "free") > 0
    assert "vance_queue_depth" in families

    # The gateway: per-route RED, keyed by the route template, never the ids in the path.
    gateway = await _scrape(f"http://{system.gateway}/metrics")
    requests = gateway["vance_http_requests"]
    assert any(
        s[1] == {"method": "GET", "route": "/brain/{tenant}/sessions", "status": "401"}
        for s in requests
    ), requests
    assert any(s[1]["route"] == "/brain/{tenant}/access/{username}" for s in requests)
    assert "vance_http_request_duration_seconds" in gateway

    # A worker: the model call's latency by tier.
    workers = [await _scrape(f"http://127.0.0.1:{observed.metrics_base + 4 + i}") for i in range(2)]
    model = [s for w in workers for s in w.get("vance_model_call_duration_seconds", [])]
    assert any(s[0].endswith("_count") and s[1].get("tier") and s[2] >= 1 for s in model), model


async def test_the_dashboard_asks_only_for_metrics_the_system_exports(observed: Observed) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    assert exprs
    # Families by name (a labelled counter nothing has bumped yet has no samples, only its
    # family): vance_x_total, _bucket, _count and _sum all belong to vance_x.
    wanted = {
        re.sub(r"_(total|bucket|count|sum)$", "", name)
        for e in exprs
        for name in re.findall(r"\b(vance_[a-z_]+)", e)
    }
    await _chat(observed.system, uuid.uuid4().hex[:8])
    base = observed.metrics_base
    urls = [f"http://{observed.system.gateway}/metrics"] + [
        f"http://127.0.0.1:{base + offset}" for offset in range(6)
    ]
    exported: set[str] = set()
    for url in urls:
        for family in await _scrape(url):
            exported.add(family)
    assert wanted <= exported, wanted - exported


async def test_otel_variables_are_honoured_and_logs_carry_the_trace_ids(
    observed: Observed,
) -> None:
    system = observed.system
    m = uuid.uuid4().hex[:8]
    await _chat(system, m)
    spans = await eventually(
        lambda: [s for s in observed.collector.spans if s[0].get("service.name") == "gateway"],
        timeout=30,
        what="the gateway's spans at the OTLP endpoint",
    )
    # OTEL_RESOURCE_ATTRIBUTES reached the resource, beside our own service name.
    assert spans[0][0].get("deployment.environment") == "otel-test"
    services = {s[0].get("service.name") for s in observed.collector.spans}
    assert {"gateway", "session_service", "process_service"} <= services, services

    def traced_lines() -> list[dict[str, str]]:
        found = []
        for path in observed.logs.glob("*.log"):
            for line in path.read_text(errors="replace").splitlines():
                if line.startswith("{") and '"trace_id"' in line:
                    found.append(json.loads(line))
        return found

    lines = await eventually(traced_lines, timeout=30, what="a JSON log line with a trace id")
    exported = {s[1] for s in observed.collector.spans}
    record = next((r for r in lines if r["trace_id"] in exported), None)
    assert record is not None, lines[:3]
    assert re.fullmatch(r"[0-9a-f]{32}", record["trace_id"])
    assert re.fullmatch(r"[0-9a-f]{16}", record["span_id"])
