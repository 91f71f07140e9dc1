"""The results as one Markdown document."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from bench.delegate import delegate_section
from bench.hubturn import HubTurnResult
from bench.knowledge import knowledge_section
from bench.markdown import table
from bench.peer import PeerResult
from bench.realpace import RealPaceResult
from bench.replicas import replicas_section
from bench.report_lifecycle import search_section, store_calls_section, sweeps_section
from bench.report_realpace import hubturn_section, realpace_section, zeropace_lines
from bench.report_summary import summary_section
from bench.scenarios import (
    BENCH_CLIENT,
    MACHINE,
    SCRIPTED_MODEL,
    LatencyResult,
    MemoryResult,
    ThroughputResult,
)
from bench.soak import SoakResult, soak_section
from bench.stats import Summary

CPU_WORKERS = 2  # the (b) run whose CPU is broken down per process


def _busy(r: ThroughputResult) -> tuple[float, float]:
    """Cores kept busy during the window: by the server, by the rest of the machine."""
    server = sum(v for k, v in r.cpu.items() if k not in (SCRIPTED_MODEL, BENCH_CLIENT, MACHINE))
    ours = server + r.cpu.get(SCRIPTED_MODEL, 0.0) + r.cpu.get(BENCH_CLIENT, 0.0)
    rest = max(0.0, r.cpu.get(MACHINE, ours) - ours)
    return server / r.duration_s, rest / r.duration_s


@dataclass
class Results:
    setup: dict[str, str] = field(default_factory=dict)
    latency: LatencyResult | None = None
    throughput: dict[int, ThroughputResult] = field(default_factory=dict)
    memory: MemoryResult | None = None
    search: dict[str, Any] | None = None
    sweeps: dict[str, Any] | None = None
    delegate: dict[str, Any] | None = None
    peer: PeerResult | None = None
    hubturn: HubTurnResult | None = None
    knowledge: dict[str, Any] | None = None
    realpace: dict[int, RealPaceResult] = field(default_factory=dict)
    # The real-pace load with a zero-latency model (same clients, same script).
    zeropace: dict[int, RealPaceResult] = field(default_factory=dict)
    zerorate: dict[int, RealPaceResult] = field(default_factory=dict)
    peer_realpace: dict[int, PeerResult] = field(default_factory=dict)
    replicas: dict[int, ThroughputResult] = field(default_factory=dict)
    soak: SoakResult | None = None
    failure: str = ""
    elapsed_s: float = 0.0


def _ms(v: float) -> str:
    return "n/a" if math.isnan(v) else f"{v:.1f}"


def _mib(v: int | float) -> str:
    return f"{v / 2**20:.1f} MiB"


def _latency(r: LatencyResult) -> list[str]:
    n = len(r.reply)
    lines = [
        "## (a) Steer → turn start latency",
        "",
        f"One WebSocket, one session, 2 engine workers; {n} samples after {r.warmup} warm-up "
        "steers. Each steer waits for the chat's IDLE before the next one. Times are from just "
        "before `process-steer` is sent to the arrival of the frame.",
        "",
    ]
    rows = []
    for label, values in (
        ("`process-progress` RUNNING (**turn start**)", r.running),
        ("steer reply frame", r.reply),
        ("first assistant `chat-message-stream-chunk`", r.chunk),
        ("assistant `chat-message-appended`", r.answer),
        ("`process-progress` IDLE (turn committed)", r.idle),
    ):
        s = Summary.of(values)
        rows.append([label, _ms(s.p50_ms), _ms(s.p99_ms), _ms(s.mean_ms), _ms(s.max_ms)])
    lines += table(["frame", "p50 ms", "p99 ms", "mean ms", "max ms"], rows)
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(r.outcomes.items()))
    k = min(50, len(r.answer) // 2)
    if k:
        first, last = Summary.of(r.answer[:k]), Summary.of(r.answer[-k:])
        lines += [
            "",
            "The session's chat grows by two messages per steer and the chat engine reads its "
            f"history every turn: the answer p50 is {_ms(first.p50_ms)} ms over the first {k} "
            f"samples and {_ms(last.p50_ms)} ms over the last {k}.",
        ]
    lines += [
        "",
        f"Steer outcomes: {outcomes}. The RUNNING frame came before the steer reply "
        f"in {r.running_before_reply} of {n} steers; {r.missing_running} answered steers "
        "had no RUNNING frame at all.",
        "",
    ]
    return lines


def _throughput(results: dict[int, ThroughputResult]) -> list[str]:
    any_r = next(iter(results.values()))
    lines = [
        "## (b) Full turns per second",
        "",
        f"{any_r.clients} WebSocket clients, each with its own session, each doing sequential "
        "steer → wait for the assistant `chat-message-appended` (fresh sessions for each run, so "
        "chat histories stay short); answers counted in a "
        f"{any_r.duration_s:.0f} s window after warm-up. Turn latency = steer sent → answer.",
        "",
    ]
    rows = []
    for workers, r in sorted(results.items()):
        s = Summary.of(r.latencies)
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(r.outcomes.items()))
        rows.append(
            [
                str(workers),
                str(r.answers),
                f"**{r.turns_per_s:.1f}**",
                _ms(s.p50_ms),
                _ms(s.p99_ms),
                outcomes,
                str(r.missing_running),
                "{:.2f} / {:.2f}".format(*_busy(r)),
            ]
        )
    lines += table(
        [
            "engine workers",
            "answers",
            "turns/s",
            "turn p50 ms",
            "turn p99 ms",
            "steer outcomes (whole run)",
            "answers without RUNNING frame",
            "cores busy: server / rest of machine",
        ],
        rows,
    )
    return [*lines, ""]


def _cpu(r: ThroughputResult) -> list[str]:
    lines = [
        f"## (c) Server CPU per turn ({r.workers} engine workers)",
        "",
        f"CPU time (user+sys from /proc/<pid>/stat, including descendants) of each supervisor "
        f"child over the (b) window at {r.workers} workers ({r.duration_s:.0f} s, "
        f"{r.answers} turns), and after it until the processes were idle again "
        f"({r.drain_s:.1f} s: the {r.drain_turns} turns still in flight and the work turns leave "
        f"behind, such as search indexing). Per turn: window and drain together, over "
        f"{r.cost_turns} turns.",
        "",
    ]
    cost = r.cost_cpu()
    turns = max(1, r.cost_turns)
    skip = (SCRIPTED_MODEL, BENCH_CLIENT, MACHINE)
    server = {k: v for k, v in r.cpu.items() if k not in skip}

    def row(name: str, bold: bool = False) -> list[str]:
        window = sum(server.values()) if name == "**server total**" else r.cpu.get(name, 0.0)
        drain = (
            sum(r.drain_cpu.get(k, 0.0) for k in server)
            if name == "**server total**"
            else r.drain_cpu.get(name, 0.0)
        )
        total = window + drain
        cells = [
            f"{window:.2f}",
            f"{drain:.2f}",
            f"{total / turns * 1000:.2f}",
            f"{window / r.duration_s:.2f}",
        ]
        return [name, *(f"**{c}**" for c in cells)] if bold else [name, *cells]

    rows = [row(name) for name in sorted(server, key=lambda k: -cost.get(k, 0.0))]
    rows.append(row("**server total**", bold=True))
    for name in (SCRIPTED_MODEL, BENCH_CLIENT):
        if name in r.cpu:
            rows.append(row(name))
    if MACHINE in r.cpu:
        other = max(0.0, r.cpu[MACHINE] - sum(r.cpu.get(k, 0.0) for k in r.cpu if k != MACHINE))
        rows.append(
            [
                "rest of the machine (other processes, kernel)",
                f"{other:.2f}",
                "",
                "",
                f"{other / r.duration_s:.2f}",
            ]
        )
    lines += table(
        ["process", "CPU s (window)", "CPU s (drain)", "ms CPU / turn", "cores busy (window)"],
        rows,
    )
    return [*lines, ""]


def _memory(m: MemoryResult) -> list[str]:
    lines = [
        f"## (d) process_service memory with {m.requested:,} idle processes",
        "",
        "Processes created over gRPC `ProcessService.CreateProcess` (engine ford, start=False), "
        "100 per session, 16 calls in flight. RSS is VmRSS from /proc/<pid>/status.",
        "",
    ]
    rows = [
        [
            "processes created",
            f"{m.created:,} in {m.create_s:.1f} s ({m.created / max(m.create_s, 1e-9):.0f}/s)"
            + (
                f" — **only {m.created:,} of {m.requested:,}: creation stopped at its "
                f"{m.budget_s:.0f} s budget**"
                if m.created < m.requested
                else ""
            ),
        ],
        [
            "create rate over the first / last 2,000",
            f"{m.first_rate:.0f}/s / {m.last_rate:.0f}/s",
        ],
        ["process_service RSS before", _mib(m.rss_before)],
        ["process_service RSS after", _mib(m.rss_after)],
        ["**delta per process**", f"**{m.delta_per_process / 1024:.2f} KiB**"],
        [
            f"process_service RSS peak over the next {m.window_s:.0f} s (recovery sweep)",
            _mib(m.rss_peak),
        ],
        [f"process_service RSS after those {m.window_s:.0f} s", _mib(m.rss_settled)],
        [
            f"process_service CPU over {m.window_s:.0f} s idle, before / after",
            f"{m.idle_cpu_before * 1000:.0f} ms / {m.idle_cpu_after * 1000:.0f} ms",
        ],
        [
            f"store CPU over the same {m.window_s:.0f} s windows, before / after",
            f"{m.store_idle_cpu_before * 1000:.0f} ms / {m.store_idle_cpu_after * 1000:.0f} ms",
        ],
        [
            "store (FerretDB) RSS before / after",
            f"{_mib(m.store_rss_before)} / {_mib(m.store_rss_after)}",
        ],
    ]
    lines += table(["metric", "value"], rows)
    return [*lines, ""]


def render(r: Results) -> str:
    lines = ["# Vancetope benchmark", ""]
    lines += [f"- {k}: {v}" for k, v in r.setup.items()]
    lines += [f"- total run time: {r.elapsed_s:.0f} s", ""]
    if r.failure:
        lines += [f"**FAILED:** {r.failure}", "", "Results measured before the failure:", ""]
    lines += summary_section(r.latency, r.throughput, r.search, r.sweeps, r.peer)
    if r.latency is not None:
        lines += _latency(r.latency)
    if r.throughput:
        lines += _throughput(r.throughput)
        # The CPU breakdown of the 2-worker run, or of the run there is when it was skipped.
        shown = CPU_WORKERS if CPU_WORKERS in r.throughput else max(r.throughput)
        lines += _cpu(r.throughput[shown])
        lines += store_calls_section(r.throughput[shown])
        # The 4-worker run's too (the LangGraph comparison's), when it ran beside it.
        if shown != 4 and 4 in r.throughput:
            lines += _cpu(r.throughput[4])
            lines += store_calls_section(r.throughput[4])
    if r.memory is not None:
        lines += _memory(r.memory)
    if r.search is not None:
        lines += search_section(r.search)
    if r.sweeps is not None:
        lines += sweeps_section(r.sweeps)
    if r.delegate is not None:
        lines += delegate_section(r.delegate)
    if r.hubturn is not None:
        lines += hubturn_section(r.hubturn)
    if r.knowledge is not None:
        lines += knowledge_section(r.knowledge)
    if r.realpace:
        lines += realpace_section(r.realpace, r.peer_realpace, r.zeropace, r.zerorate)
    elif r.zeropace:
        # Round zeropace200 without realpace200, the figure it is the denominator of.
        lines += zeropace_lines(r.zeropace)
    if r.replicas:
        lines += replicas_section(r.replicas)
    if r.soak is not None:
        lines += soak_section(r.soak)
    return "\n".join(lines).rstrip() + "\n"
