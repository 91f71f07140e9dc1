"""The headline table (figure | before | target | this run) and the ratio to the LangGraph peer.

"before" is the measurement the turn-path work started from (`make bench` on a fresh clone,
2 cores, 2026-11-30); the targets are the ones that work set itself."""

from __future__ import annotations

import math
from typing import Any

from bench.markdown import table
from bench.peer import PeerResult
from bench.scenarios import BENCH_CLIENT, MACHINE, SCRIPTED_MODEL, LatencyResult, ThroughputResult
from bench.stats import Summary

SUMMARY_WORKERS = 4  # the throughput run the headline figures come from


def _server_ms_per_turn(r: ThroughputResult) -> float:
    cost = r.cost_cpu()
    server = sum(v for k, v in cost.items() if k not in (SCRIPTED_MODEL, BENCH_CLIENT, MACHINE))
    return server / max(1, r.cost_turns) * 1000


def _worker_ms_per_turn(r: ThroughputResult) -> float:
    # One model call per turn in round (b): the workers' CPU per turn is per model call.
    workers = sum(v for k, v in r.cost_cpu().items() if k.startswith("worker-"))
    return workers / max(1, r.cost_turns) * 1000


def _commands_per_turn(r: ThroughputResult) -> float:
    return sum(sum(c.values()) for c in r.cost_store_calls().values()) / max(1, r.cost_turns)


def _f(v: float, digits: int = 1) -> str:
    return "n/a" if math.isnan(v) else f"{v:.{digits}f}"


def summary_section(
    latency: LatencyResult | None,
    throughput: dict[int, ThroughputResult],
    search: dict[str, Any] | None,
    sweeps: dict[str, Any] | None,
    peer: PeerResult | None,
) -> list[str]:
    tp = throughput.get(SUMMARY_WORKERS)
    rows: list[list[str]] = []

    def row(figure: str, before: str, target: str, now: str) -> None:
        rows.append([figure, before, target, now])

    row(
        "server CPU per turn, all services incl. store and model call (ms)",
        "39",
        "<= 12",
        _f(_server_ms_per_turn(tp)) if tp else "not run",
    )
    row(
        f"full turns/s, 32 clients, {SUMMARY_WORKERS} workers",
        "54.7",
        ">= 150",
        _f(tp.turns_per_s) if tp else "not run",
    )
    if latency is not None:
        running = Summary.of(latency.running)
        answer = Summary.of(latency.answer)
        row(
            "steer -> RUNNING p50 / p99 (ms)",
            "9.3 / 28.6",
            "<= 4 / 15",
            f"{_f(running.p50_ms)} / {_f(running.p99_ms)}",
        )
        row("steer -> answer p50, sequential (ms)", "40.5", "<= 15", _f(answer.p50_ms))
    else:
        row("steer -> RUNNING p50 / p99 (ms)", "9.3 / 28.6", "<= 4 / 15", "not run")
        row("steer -> answer p50, sequential (ms)", "40.5", "<= 15", "not run")
    row(
        "store commands per turn",
        "12.0",
        "<= 6",
        _f(_commands_per_turn(tp), 2) if tp and tp.store_calls else "not run",
    )
    row(
        "worker CPU per model call, OpenAI-compatible endpoint (ms)",
        "~15",
        "<= 3",
        _f(_worker_ms_per_turn(tp)) if tp else "not run",
    )
    if search is not None:
        now = f"{search['user']['p99_ms']} / {search['admin']['p99_ms']}"
    else:
        now = "not run"
    row("search p99 at 100,000 messages, user / admin (ms)", "63 / 56", "<= 30", now)
    if sweeps is not None:
        now = f"{sweeps['idle_due']['median_ms'] / 1000:.2f}"
    else:
        now = "not run"
    row("1% of 10,000 sessions suspended by one sweep (s)", "1.26", "<= 0.2", now)
    lines = [
        "## Summary",
        "",
        f"Headline figures (the throughput ones from the {SUMMARY_WORKERS}-worker run of (b)); "
        "'before' is where the turn-path work started.",
        "",
        *table(["figure", "before", "target", "this run"], rows),
        "",
    ]
    lines += _peer_lines(tp, peer)
    return lines


def _peer_lines(tp: ThroughputResult | None, peer: PeerResult | None) -> list[str]:
    if peer is None:
        return ["LangGraph peer: not run (round `peer`).", ""]
    if peer.skipped:
        return [f"LangGraph peer: skipped — {peer.skipped}.", ""]
    f = peer.figures
    lines = [
        "### Beside the LangGraph agent server (same sitting, after our system stopped)",
        "",
        f"`langgraph dev` (in memory, not durable; one process): {f.get('clients')} clients, "
        f"{f.get('turns')} turns in {f.get('seconds')} s, {f.get('wrong_answers')} wrong; "
        f"p50 {f.get('p50_ms')} ms, p99 {f.get('p99_ms')} ms.",
        "",
    ]
    if tp is None:
        return lines
    ours_tps, ours_cpu = tp.turns_per_s, _server_ms_per_turn(tp)
    rows = [
        [
            "turns/s",
            _f(ours_tps),
            _f(peer.turns_per_s),
            f"**{ours_tps / peer.turns_per_s:.2f}x**" if peer.turns_per_s else "n/a",
            ">= 1.5x",
        ],
        [
            "server CPU per turn (ms)",
            _f(ours_cpu),
            _f(peer.cpu_ms_per_turn),
            f"**{ours_cpu / peer.cpu_ms_per_turn:.2f}x**" if peer.cpu_ms_per_turn else "n/a",
            "<= 0.5x",
        ],
    ]
    lines += table(["figure", "ours", "LangGraph", "ours / LangGraph", "goal"], rows)
    return [*lines, ""]
