"""Round (k): throughput with 1 and 2 process_service replicas (docs/operations.md
"Replicas"). Each count gets a system of its own with 2 engine workers (each serving every
replica) and the same chat load as round (b); the clients' gateway spreads steers over the
replicas and follows each session on all of them."""

from __future__ import annotations

from pathlib import Path

from bench.scenarios import BENCH_CLIENT, MACHINE, SCRIPTED_MODEL, ThroughputResult, throughput
from bench.stats import percentile
from bench.system import BenchSystem

WORKERS = 2


async def replica_throughput(
    tmp: Path, replicas: int, *, clients: int = 32, duration_s: float = 15.0
) -> ThroughputResult:
    tmp.mkdir(parents=True, exist_ok=True)
    system = BenchSystem(
        tmp, workers=WORKERS, extra_env={"VANCE_PROCESS_SERVICE_REPLICAS": str(replicas)}
    )
    try:
        await system.start()
        return await throughput(system, workers=WORKERS, clients=clients, duration_s=duration_s)
    finally:
        await system.stop()


def replicas_section(results: dict[int, ThroughputResult]) -> list[str]:
    lines = [
        "## (k) Throughput with process_service replicas",
        "",
        f"A system of its own per count, {WORKERS} engine workers (each with one stream to every "
        "replica), the zero-latency load of round (b); the gateway spreads steers over the "
        "replicas (gRPC round_robin) and follows each session on all of them, merging by seq.",
        "",
        "| process_service replicas | clients | turns/s | p50 ms | p99 ms | server CPU ms/turn |",
        "|---|---|---|---|---|---|",
    ]
    for n, r in sorted(results.items()):
        server = sum(
            v for k, v in r.cpu.items() if k not in (BENCH_CLIENT, MACHINE, SCRIPTED_MODEL)
        )
        per_turn = 1000 * server / r.answers if r.answers else float("nan")
        lat = [x * 1000 for x in r.latencies]
        lines.append(
            f"| {n} | {r.clients} | {r.turns_per_s:.1f} | {percentile(lat, 50):.1f} | "
            f"{percentile(lat, 99):.1f} | {per_turn:.1f} |"
        )
    return [*lines, ""]
