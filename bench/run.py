"""Runs every measurement against one system (adding workers between the throughput runs),
prints the Markdown results and writes them to bench/results.md; stops everything."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import shutil
import statistics
import sys
import time
import traceback
from pathlib import Path

import uvloop

from bench.delegate import measure_delegate
from bench.errors import BenchError
from bench.hubturn import hub_turns
from bench.knowledge import measure_knowledge
from bench.peer import run_peer
from bench.procstat import load_average
from bench.realpace import STREAM_MS, TTFT_MS, real_pace
from bench.replicas import replica_throughput
from bench.report import Results, render
from bench.scenarios import memory, steer_latency, throughput
from bench.search import run_search_bench
from bench.soak import soak, soak_seconds
from bench.sweeps import measure_sweeps
from bench.system import SLOTS, BenchSystem, make_tmp

TOTAL_BUDGET_S = 600.0
ROUNDS = (
    "throughput1",
    "latency",
    "throughput2",
    "throughput4",
    "memory",
    "search",
    "sweeps",
    "delegate",
    "hubturn",
    "knowledge",
    "peer",
    "realpace20",
    "realpace200",
    "realpace800",
    "zeropace200",
    "zerorate200",
    "peer_realpace",
    "replicas",
    "soak",
)
REAL_PACE_BUDGET_S = 420.0
REPLICAS_BUDGET_S = 420.0  # per replica count: start, 19 s of load, drain, stop (loaded machine)
# The rounds measured on the one system that _measure starts; the real-pace rounds start their
# own (the shipped defaults), and the peers run alone.
MAIN_ROUNDS = set(ROUNDS) - {
    "peer",
    "realpace20",
    "realpace200",
    "realpace800",
    "zeropace200",
    "zerorate200",
    "peer_realpace",
    "replicas",
    "soak",
}
REPO = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results.md"
_T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[bench {time.monotonic() - _T0:6.1f}s] {msg}", file=sys.stderr, flush=True)


async def _measure(
    system: BenchSystem, results: Results, deadline: float, rounds: set[str]
) -> None:
    log("starting the scripted model and the system with 1 engine worker")
    await system.start()
    log(f"system up (logs in {system.logs})")
    if "throughput1" in rounds:
        log("(b) throughput with 1 worker")
        results.throughput[1] = await throughput(system, workers=1)
        log(f"    {results.throughput[1].turns_per_s:.1f} turns/s")
    await system.add_workers(2)
    if "latency" in rounds:
        log("(a) steer -> turn start latency with 2 workers")
        results.latency = await steer_latency(system)
    if "throughput2" in rounds:
        log("(b)+(c) throughput and CPU with 2 workers")
        results.throughput[2] = await throughput(system, workers=2)
        log(f"    {results.throughput[2].turns_per_s:.1f} turns/s")
    if "throughput4" in rounds:
        await system.add_workers(4)
        log("(b) throughput with 4 workers")
        results.throughput[4] = await throughput(system, workers=4)
        log(f"    {results.throughput[4].turns_per_s:.1f} turns/s")
    if "memory" in rounds:
        # Creating stops early rather than overrun the whole benchmark's budget.
        budget_s = max(30.0, min(150.0, deadline - time.monotonic() - 40.0))
        log(f"(d) process_service memory with 10,000 idle processes (at most {budget_s:.0f}s)")
        results.memory = m = await memory(system, budget_s=budget_s)
        if m.created < m.requested:
            log(f"    only {m.created} of {m.requested} processes created in {budget_s:.0f}s")
    if "search" in rounds:
        log("(e) session search at 100,000 messages")
        results.search = s = await run_search_bench(system.cfg, messages=100_000, sessions=1_000)
        log(f"    user p50 {s['user']['p50_ms']} ms, p99 {s['user']['p99_ms']} ms")
    if "sweeps" in rounds:
        log("(f) lifecycle sweeps at 10,000 sessions")
        results.sweeps = w = await measure_sweeps(system, 10_000)
        log(f"    nothing due: {w['quiet']['median_ms']} ms")
    if "delegate" in rounds:
        log("(g) process_create_delegate added latency (MATCH)")
        results.delegate = d = await measure_delegate(system)
        log(f"    +{d['added_p50_ms']} ms at the median")
    if "hubturn" in rounds:
        log("(j) a hub turn with one tool call (Eddie, scratchpad_read, answer)")
        results.hubturn = h = await hub_turns(system)
        log(f"    {h.turns_per_s:.1f} hub turns/s, {h.server_cpu_ms_per_turn():.1f} ms CPU each")
        peer = ", ".join(f"{k} {v:.2f}" for k, v in h.peer_work_per_turn().items())
        log(f"    store commands per hub turn for the hubs' shared activity: {peer}")
    if "knowledge" in rounds:
        log("(k) memory recall and RAG auto-inject per turn; RAG query over 10,000 chunks")
        results.knowledge = k = await measure_knowledge(system, log)
        log(
            f"    memory {k['added_memory']:+} and RAG {k['added_rag']:+} store commands per "
            f"turn; RAG query p99 {k['query']['p99_ms']} ms"
        )


async def _real_pace(results: Results, rounds: set[str], tmp: Path) -> None:
    """Round (i): each load on a system of its own with the shipped defaults, then the peer at
    the same pace with its run limit set to the client count."""
    # 20 clients: the system well below its ceiling (the first-chunk lag without queueing).
    for clients in (20, 200, 800):
        if f"realpace{clients}" not in rounds:
            continue
        log(f"(i) real pace ({TTFT_MS}+{STREAM_MS} ms model), {clients} clients, shipped defaults")
        try:
            async with asyncio.timeout(REAL_PACE_BUDGET_S):
                r = await real_pace(tmp / f"realpace{clients}", clients=clients)
        except (BenchError, TimeoutError) as exc:
            results.failure = f"real pace, {clients} clients: {exc!r}"
            return
        results.realpace[clients] = r
        log(f"    {r.turns_per_s:.1f} turns/s of {r.ceiling:.0f}")
    if "zeropace200" in rounds:
        # The same load and script with a zero-latency model: the denominator of "CPU per turn
        # at real pace / at zero latency" (issue 28), so the two differ only in the pace.
        log("(i) the same 200 clients with a zero-latency model")
        try:
            async with asyncio.timeout(REAL_PACE_BUDGET_S):
                results.zeropace[200] = await real_pace(
                    tmp / "zeropace200", clients=200, ttft_ms=0, stream_ms=0
                )
        except (BenchError, TimeoutError) as exc:
            results.failure = f"zero pace, 200 clients: {exc!r}"
            return
    if "zerorate200" in rounds:
        # The zero-latency model again, each client starting a turn as often as it did at real
        # pace (its mean turn time): the same turn rate as realpace200, (almost) nothing in flight.
        # Full speed batches more per step (store inserts combined, stream messages shared), so
        # this is the pair that tells whether a turn costs anything per second in flight.
        real = results.realpace.get(200)
        every_s = (
            statistics.fmean(real.latencies)
            if real and real.latencies
            else TTFT_MS / 1000 + STREAM_MS / 1000
        )
        log(
            f"(i) the same 200 clients, zero-latency model, {every_s * 1000:.0f} ms from turn to turn"
        )
        try:
            async with asyncio.timeout(REAL_PACE_BUDGET_S):
                results.zerorate[200] = await real_pace(
                    tmp / "zerorate200", clients=200, ttft_ms=0, stream_ms=0, every_s=every_s
                )
        except (BenchError, TimeoutError) as exc:
            results.failure = f"zero latency at the real pace's rate, 200 clients: {exc!r}"
            return
    if "peer_realpace" in rounds:
        for clients in (200,):
            log(f"(i) the LangGraph peer at real pace, {clients} clients, run limit {clients}")
            results.peer_realpace[clients] = peer = await run_peer(
                REPO,
                clients=clients,
                duration_s=30,
                log=tmp / "logs" / f"peer-realpace{clients}.log",
                env={
                    "MODEL_TTFT_MS": str(TTFT_MS),
                    "MODEL_STREAM_MS": str(STREAM_MS),
                    "N_JOBS_PER_WORKER": str(clients),
                },
            )
            log(f"    {peer.skipped or peer.figures}")


async def _replicas(results: Results, tmp: Path) -> None:
    """Round (k): turns/s with 1 and 2 process_service replicas, a system of its own each."""
    for n in (1, 2):
        log(f"(k) throughput with {n} process_service replica(s), 2 workers")
        try:
            async with asyncio.timeout(REPLICAS_BUDGET_S):
                r = await replica_throughput(
                    tmp / f"replicas{n}",
                    n,
                    clients=int(os.environ.get("BENCH_REPLICA_CLIENTS", "32")),
                    duration_s=float(os.environ.get("BENCH_REPLICA_SECONDS", "15")),
                )
        except (BenchError, TimeoutError) as exc:
            results.failure = f"replicas, {n}: {exc!r}"
            return
        results.replicas[n] = r
        log(f"    {r.turns_per_s:.1f} turns/s")


async def _soak(results: Results, tmp: Path) -> None:
    """Round (k): on a system of its own, after the rest (it takes BENCH_SOAK_S, 10 minutes)."""
    duration = soak_seconds()
    log(f"(k) soak: {duration:.0f} s of chat with sessions coming and going, RSS sampled")
    try:
        async with asyncio.timeout(duration + 180):
            results.soak = r = await soak(tmp / "soak", duration_s=duration)
    except (BenchError, TimeoutError) as exc:
        results.failure = f"soak: {exc!r}"
        return
    growth = ", ".join(f"{k} {v:+.0%}" for k, v in sorted(r.growth().items()))
    log(f"    {r.turns} turns; growth after warm-up: {growth}")
    for failure in r.failures():
        log(f"    soak check failed: {failure}")


async def bench(rounds: set[str]) -> Results:
    tmp = make_tmp()
    system = BenchSystem(tmp, workers=1)
    results = Results(
        setup={
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{os.cpu_count()} cores, Python {platform.python_version()}, "
            f"load average at start {load_average()}",
            "system": f"vance.supervisor.Supervisor: FerretDB store, 4 gRPC services, gateway, "
            f"engine workers with {SLOTS} slots each, log level INFO",
            "model": "scripted OpenAI-compatible server in its own process, echo reply "
            "(zero latency), streamed in 3 chunks",
        }
    )
    budget = asyncio.timeout(TOTAL_BUDGET_S)
    try:
        async with budget:
            if rounds & MAIN_ROUNDS:
                await _measure(system, results, time.monotonic() + TOTAL_BUDGET_S, rounds)
    except TimeoutError as exc:
        if budget.expired():
            results.failure = f"the benchmark did not finish in {TOTAL_BUDGET_S:.0f}s"
        else:
            traceback.print_exc()
            results.failure = f"timed out: {exc!r}"
    except BenchError as exc:
        results.failure = str(exc)
    except Exception as exc:
        traceback.print_exc()
        results.failure = f"unexpected {type(exc).__name__}: {exc}"
    finally:
        log("stopping the system")
        try:
            await asyncio.wait_for(system.stop(), 90)
        except TimeoutError:
            results.failure = results.failure or "the system did not stop within 90s"
    if "peer" in rounds and not results.failure:
        log("(h) the LangGraph peer, same work, 32 clients (installs it on first use)")
        results.peer = peer = await run_peer(
            REPO, clients=32, duration_s=15, log=tmp / "logs" / "peer.log"
        )
        log(f"    {peer.skipped or peer.figures}")
    if not results.failure:
        await _real_pace(results, rounds, tmp)
    if "replicas" in rounds and not results.failure:
        await _replicas(results, tmp)
    if "soak" in rounds and not results.failure:
        await _soak(results, tmp)
    if results.failure or os.environ.get("BENCH_KEEP"):
        log(f"kept the data and logs in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    results.elapsed_s = time.monotonic() - _T0
    return results


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--rounds",
        default=",".join(ROUNDS),
        help=f"comma-separated rounds to run (default all): {', '.join(ROUNDS)}",
    )
    parser.add_argument(
        "--out", type=Path, default=RESULTS, help="where to write the Markdown results"
    )
    args = parser.parse_args()
    unknown = set(args.rounds.split(",")) - set(ROUNDS)
    if unknown:
        parser.error(f"unknown rounds: {', '.join(sorted(unknown))}")
    return args


def main() -> None:
    args = _args()
    try:
        results = uvloop.run(bench(set(args.rounds.split(","))))
    except KeyboardInterrupt:
        log("interrupted")
        sys.exit(130)
    text = render(results)
    print(text)
    args.out.write_text(text)
    log(f"wrote {args.out}")
    if results.failure:
        log(f"FAILED: {results.failure}")
        sys.exit(1)
