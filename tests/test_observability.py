"""Metrics and traces of a running system (vance/observability/): /metrics of the services,
the workers and the gateway move with turns; one steer is one trace across the gateway,
process_service and the worker, down to the model call."""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from prometheus_client.parser import text_string_to_metric_families

from tests.harness import System, WsClient, eventually, running_system
from vance.config import LoggingConfig
from vance.logsetup import setup_logging
from vance.observability import logcontext
from vance.observability.setup import FIRST_WORKER_OFFSET
from vance.testing.ports import free_port_block
from vance.testing.scripted_llm import ThreadedScriptedLlm


@pytest.fixture(scope="module")
async def observed(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[tuple[System, int, Path]]:
    """A system of its own with /metrics on and spans written to files."""
    tmp = tmp_path_factory.mktemp("observed")
    metrics_base = free_port_block(FIRST_WORKER_OFFSET + 2)
    spans = tmp / "spans"
    env = {"VANCE_METRICS_PORT": str(metrics_base), "VANCE_TRACE_DIR": str(spans)}
    async with running_system(tmp, llm, extra_env=env) as system:
        yield system, metrics_base, spans


async def _scrape(url: str) -> dict[str, float]:
    """Every sample of a /metrics page, summed over the labels named in the key."""
    async with httpx.AsyncClient() as http:
        r = await http.get(url)
    r.raise_for_status()
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(r.text):
        out.setdefault(f"# {family.name}", 0.0)  # the family is exported, samples or not
        for sample in family.samples:
            out[sample.name] = out.get(sample.name, 0.0) + sample.value
            for key, value in sample.labels.items():
                name = f"{sample.name}{{{key}={value}}}"
                out[name] = out.get(name, 0.0) + sample.value
    return out


async def _workers_total(base: int, name: str) -> float:
    total = 0.0
    for i in range(2):
        page = await _scrape(f"http://127.0.0.1:{base + FIRST_WORKER_OFFSET + i}/metrics")
        total += page.get(name, 0.0)
    return total


async def _chat(client: WsClient, pid: str, text: str) -> None:
    await client.ok("process-steer", {"processId": pid, "content": text})
    await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["role"] == "assistant"
            and text in f["data"]["content"]
        ),
        what=f"the answer to {text!r}",
    )


async def test_metrics_move_with_turns(observed: tuple[System, int, Path]) -> None:
    system, base, _ = observed
    process_url = f"http://127.0.0.1:{base + 1}/metrics"
    gateway_url = f"http://{system.gateway}/metrics"
    turns_before = await _workers_total(base, "vance_turns_total{outcome=done}")
    model_before = await _workers_total(base, "vance_model_call_duration_seconds_count")
    before = await _scrape(process_url)
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    gateway = await _scrape(gateway_url)
    assert gateway["vance_ws_connections"] >= 1
    for n in range(3):
        await _chat(client, created["chatProcessId"], f"metrics turn {n}")

    async def moved() -> bool:
        turns = await _workers_total(base, "vance_turns_total{outcome=done}")
        return turns >= turns_before + 3

    await eventually(moved, what="the workers' turn counters")
    assert await _workers_total(base, "vance_model_call_duration_seconds_count") >= model_before + 3
    assert await _workers_total(base, "vance_turn_duration_seconds_count") >= turns_before + 3
    after = await _scrape(process_url)
    assert (
        after["vance_turns_dispatched_total"] >= before.get("vance_turns_dispatched_total", 0) + 3
    )
    assert after["vance_steers_total"] >= before.get("vance_steers_total", 0) + 3
    assert after["vance_steers_total{outcome=STARTED}"] >= 1
    assert "# vance_queue_depth" in after and "# vance_lane_leases_held" in after
    assert after["vance_store_command_duration_seconds_count"] > before.get(
        "vance_store_command_duration_seconds_count", 0
    )
    await client.close()


def _spans(directory: Path) -> list[dict[str, Any]]:
    spans = []
    for path in directory.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            if line.strip():
                spans.append(json.loads(line))
    return spans


def _service(span: dict[str, Any]) -> str:
    return str(span["resource"]["attributes"]["service.name"])


async def test_one_steer_is_one_trace_across_the_processes(
    observed: tuple[System, int, Path],
) -> None:
    system, _, directory = observed
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    pid, sid = created["chatProcessId"], created["sessionId"]
    await _chat(client, pid, "trace this steer")

    def the_trace() -> list[dict[str, Any]] | None:
        spans = _spans(directory)
        steers = [
            s
            for s in spans
            if s["name"] == "frame process-steer" and s["attributes"].get("vance.session_id") == sid
        ]
        if not steers:
            return None
        trace_id = steers[0]["context"]["trace_id"]
        in_trace = [s for s in spans if s["context"]["trace_id"] == trace_id]
        names = {(_service(s), s["name"]) for s in in_trace}
        if ("engine_worker", "model call") not in names:
            return None
        return in_trace

    in_trace = await eventually(the_trace, what="the steer's trace with the model call")
    services = {_service(s) for s in in_trace}
    assert {"gateway", "process_service", "engine_worker"} <= services
    steer = [s for s in in_trace if s["name"] == "/vance.v1.ProcessService/Steer"]
    assert {_service(s) for s in steer} == {"gateway", "process_service"}  # client and server
    turn = next(s for s in in_trace if s["name"] == "turn")
    assert turn["attributes"]["vance.session_id"] == sid
    assert turn["attributes"]["vance.process_id"] == pid
    served = next(s for s in steer if _service(s) == "process_service")
    assert served["attributes"]["vance.process_id"] == pid
    await client.close()


def test_json_logs_carry_service_time_and_ids(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    try:
        setup_logging(LoggingConfig(json_format=True), "engine_worker")

        def in_turn() -> None:
            logcontext.for_turn("sess_1", "proc_1", "turn_1")
            logging.getLogger("engine_worker").warning("turn %s slow", "turn_1")

        contextvars.copy_context().run(in_turn)
        logging.getLogger("engine_worker").warning("outside")
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    turn, outside = lines[-2], lines[-1]
    assert turn["service"] == "engine_worker" and turn["msg"] == "turn turn_1 slow"
    assert (turn["session_id"], turn["process_id"], turn["turn_id"]) == (
        "sess_1",
        "proc_1",
        "turn_1",
    )
    stamp = datetime.fromisoformat(turn["ts"])
    assert stamp.tzinfo is not None and len(turn["ts"].split(".")[1]) == len("123+00:00")
    assert "session_id" not in outside


async def test_traces_keep_no_token(observed: tuple[System, int, Path]) -> None:
    """A socket that brings its token in the query string: the spans name the URL without it."""
    system, _, directory = observed
    token = await system.login()
    async with websockets.connect(f"ws://{system.gateway}/brain/default/ws?token={token}") as ws:
        assert json.loads(await ws.recv())["type"] == "welcome"

    def redacted() -> bool:
        return any("token=REDACTED" in json.dumps(s) for s in _spans(directory))

    await eventually(redacted, what="the socket's span")
    for path in directory.glob("*.jsonl"):
        assert token not in path.read_text(), path.name
