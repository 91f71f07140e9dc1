"""The four measurements: steer latency, turn throughput, server CPU per turn, memory."""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
from collections import Counter
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc

from bench.errors import BenchError
from bench.procstat import cpu_seconds, machine_busy_seconds, rss_bytes, trees_cpu_seconds
from bench.system import BenchSystem
from bench.wsclient import Client, assistant_says, first_chunk, reply_data, status_is
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.v1 import process_pb2 as ppb

SCRIPTED_MODEL = "scripted model (not server)"
BENCH_CLIENT = "bench client (not server)"
MACHINE = "machine (all processes)"
NOT_SERVER = (SCRIPTED_MODEL, BENCH_CLIENT, MACHINE)


def server_cpu(cpu: dict[str, float]) -> float:
    """CPU seconds of the server's processes: everything but the model, the client, the machine."""
    return sum(v for k, v in cpu.items() if k not in NOT_SERVER)


def store_calls_per_turn(calls: dict[str, dict[str, int]], turns: int) -> dict[str, float]:
    """Store commands per turn by "process command collection", most first."""
    out = {
        f"{name} {key}": n / max(1, turns)
        for name, counts in calls.items()
        for key, n in counts.items()
        if n
    }
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


async def run_all(coros: list[Coroutine[Any, Any, None]]) -> None:
    """Runs coroutines together; the first failure cancels the rest and is raised as is."""
    try:
        async with asyncio.TaskGroup() as tg:
            for coro in coros:
                tg.create_task(coro)
    except BaseExceptionGroup as group:
        first: BaseException = group
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        if isinstance(first, BenchError):
            raise first from None
        raise BenchError(f"{type(first).__name__}: {first}") from first


def cpu_snapshot(system: BenchSystem) -> dict[str, float]:
    """CPU seconds so far of every supervisor child (with its descendants), the scripted
    model server and this process."""
    pids = system.pids()
    if system.model is not None and system.model.pid is not None:
        pids[SCRIPTED_MODEL] = system.model.pid
    out = trees_cpu_seconds(pids)
    out[BENCH_CLIENT] = cpu_seconds(os.getpid()) or 0.0
    out[MACHINE] = machine_busy_seconds()
    return out


def store_snapshot(system: BenchSystem) -> dict[str, dict[str, int]]:
    """Store commands so far of every supervisor child, from the files vance/store_trace.py
    writes once a second (so a snapshot lags by up to a second at both ends of a window)."""
    out: dict[str, dict[str, int]] = {}
    for name, pid in system.pids().items():
        path = system.store_trace_dir / f"{pid}.json"
        if path.exists():
            try:
                out[name] = dict(json.loads(path.read_text())["counts"])
            except (ValueError, KeyError):
                out[name] = {}
    return out


def store_delta(
    before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]
) -> dict[str, dict[str, int]]:
    return {
        name: {k: v - before.get(name, {}).get(k, 0) for k, v in counts.items()}
        for name, counts in after.items()
    }


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {name: after[name] - before[name] for name in after if name in before}


async def steer(
    client: Client, pid: str, content: str, timeout_s: float, *, wait_idle: bool
) -> dict[str, float | str]:
    """One steer of the chat process; the times (seconds from t0, just before the send) at
    which the reply, the RUNNING frame, the assistant answer and (optionally) IDLE arrived.
    Frames come in seq order, so a RUNNING frame that has not come by the answer is missing:
    its time is then NaN (a turn redone after a lost lease publishes no RUNNING)."""
    fid = client.new_id()
    reply = client.expect_reply(fid, "process-steer")
    running = client.expect(status_is(pid, "RUNNING"), f"RUNNING after {content!r}")
    answer = client.expect(
        assistant_says(pid, f"You said: {content}"), f"assistant answer to {content!r}"
    )
    chunk = client.expect(first_chunk(pid), f"first stream chunk after {content!r}")
    idle = client.expect(status_is(pid, "IDLE"), f"IDLE after {content!r}") if wait_idle else None
    out: dict[str, float | str] = {}
    try:
        t0 = out["t0"] = time.perf_counter()
        await client.send(fid, "process-steer", {"processName": "chat", "content": content})
        frame, at = await client.wait(reply, timeout_s)
        out["reply"] = at - t0
        data = reply_data(client.name, "process-steer", frame)
        out["outcome"] = str(data.get("outcome"))
        if out["outcome"] not in ("STARTED", "QUEUED"):
            raise BenchError(f"{client.name}: steer {content!r} was answered with {data}")
        _, at = await client.wait(answer, timeout_s)
        out["answer"] = at - t0
        out["running"] = running.future.result()[1] - t0 if running.future.done() else math.nan
        out["chunk"] = chunk.future.result()[1] - t0 if chunk.future.done() else math.nan
        if idle is not None:
            _, at = await client.wait(idle, timeout_s)
            out["idle"] = at - t0
    finally:
        for waiter in (reply, running, chunk, answer, idle):
            if waiter is not None:
                client.forget(waiter)
    return out


# ---- (a) steer -> turn start latency ----


@dataclass
class LatencyResult:
    warmup: int
    running: list[float] = field(default_factory=list)
    chunk: list[float] = field(default_factory=list)
    reply: list[float] = field(default_factory=list)
    answer: list[float] = field(default_factory=list)
    idle: list[float] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    running_before_reply: int = 0
    missing_running: int = 0  # answered turns whose RUNNING frame never came


async def steer_latency(
    system: BenchSystem,
    *,
    warmup: int = 20,
    samples: int = 200,
    timeout_s: float = 15.0,
    budget_s: float = 120.0,
) -> LatencyResult:
    client = await system.client("latency")
    result = LatencyResult(warmup)
    try:
        pid = await system.chat_session(client)
        deadline = time.monotonic() + budget_s
        for i in range(warmup + samples):
            if time.monotonic() > deadline:
                raise BenchError(
                    f"steer latency: only {i} of {warmup + samples} steers in {budget_s:.0f}s"
                )
            times = await steer(client, pid, f"latency probe {i}", timeout_s, wait_idle=True)
            if i < warmup:
                continue
            result.outcomes[str(times["outcome"])] += 1
            result.reply.append(float(times["reply"]))
            if math.isnan(float(times["running"])):
                result.missing_running += 1
            else:
                result.running.append(float(times["running"]))
            if not math.isnan(float(times["chunk"])):
                result.chunk.append(float(times["chunk"]))
            result.answer.append(float(times["answer"]))
            result.idle.append(float(times["idle"]))
            if float(times["running"]) < float(times["reply"]):
                result.running_before_reply += 1
    finally:
        await client.close()
    return result


# ---- (b) + (c) throughput and CPU per turn ----


@dataclass
class ThroughputResult:
    workers: int
    clients: int
    duration_s: float
    answers: int
    latencies: list[float]
    outcomes: Counter[str]
    missing_running: int = 0  # answered turns (whole run) whose RUNNING frame never came
    cpu: dict[str, float] = field(default_factory=dict)  # CPU s in the window, by process
    # Store commands in the window: process -> "command collection" -> count (vance/store_trace.py)
    store_calls: dict[str, dict[str, int]] = field(default_factory=dict)
    # From the window's end until the system is idle again: the turns still in flight then and
    # the work turns leave behind (search indexing, roll-up). The per-turn costs include them.
    drain_cpu: dict[str, float] = field(default_factory=dict)
    drain_store_calls: dict[str, dict[str, int]] = field(default_factory=dict)
    drain_turns: int = 0
    drain_s: float = 0.0

    @property
    def turns_per_s(self) -> float:
        return self.answers / self.duration_s

    @property
    def cost_turns(self) -> int:
        """The turns the per-turn costs cover: answered in the window or during the drain."""
        return self.answers + self.drain_turns

    def cost_cpu(self) -> dict[str, float]:
        return {k: v + self.drain_cpu.get(k, 0.0) for k, v in self.cpu.items()}

    def cost_store_calls(self) -> dict[str, dict[str, int]]:
        out = {name: dict(calls) for name, calls in self.store_calls.items()}
        for name, calls in self.drain_store_calls.items():
            mine = out.setdefault(name, {})
            for key, n in calls.items():
                mine[key] = mine.get(key, 0) + n
        return out


async def open_sessions(
    system: BenchSystem, count: int, tag: str, concurrency: int = 8
) -> list[tuple[Client, str]]:
    sem = asyncio.Semaphore(concurrency)
    out: list[tuple[Client, str]] = []

    async def one(i: int) -> None:
        async with sem:
            client = await system.client(f"{tag}c{i}")
            try:
                out.append((client, await system.chat_session(client)))
            except BaseException:
                await client.close()
                raise

    try:
        await run_all([one(i) for i in range(count)])
    except BaseException:
        await asyncio.gather(*(c.close() for c, _ in out), return_exceptions=True)
        raise
    return out


async def throughput(
    system: BenchSystem,
    *,
    workers: int,
    clients: int = 32,
    warmup_s: float = 4.0,
    duration_s: float = 15.0,
    turn_timeout_s: float = 30.0,
) -> ThroughputResult:
    sessions = await open_sessions(system, clients, f"w{workers}")
    answers: list[tuple[float, float]] = []
    outcomes: Counter[str] = Counter()
    missing = 0
    snapshots: list[dict[str, float]] = []
    store_snapshots: list[dict[str, dict[str, int]]] = []
    start = time.perf_counter()
    window = (start + warmup_s, start + warmup_s + duration_s)

    async def chat(client: Client, pid: str) -> None:
        nonlocal missing
        n = 0
        while time.perf_counter() < window[1]:
            n += 1
            times = await steer(
                client, pid, f"{client.name} turn {n}", turn_timeout_s, wait_idle=False
            )
            outcomes[str(times["outcome"])] += 1
            missing += math.isnan(float(times["running"]))
            answer = float(times["answer"])
            answers.append((float(times["t0"]) + answer, answer))

    async def sample() -> None:
        for edge in window:
            await asyncio.sleep(max(0.0, edge - time.perf_counter()))
            system.check_alive()
            snapshots.append(cpu_snapshot(system))
            store_snapshots.append(store_snapshot(system))

    try:
        await run_all([*(chat(c, pid) for c, pid in sessions), sample()])
    finally:
        await asyncio.gather(*(c.close() for c, _ in sessions), return_exceptions=True)
    await system.wait_quiet()
    drained = await _until_idle(system)
    in_window = [lat for at, lat in answers if window[0] <= at < window[1]]
    return ThroughputResult(
        workers,
        clients,
        duration_s,
        len(in_window),
        in_window,
        outcomes,
        missing,
        cpu_delta(snapshots[0], snapshots[1]),
        store_delta(store_snapshots[0], store_snapshots[1]),
        drain_cpu=cpu_delta(snapshots[1], cpu_snapshot(system)),
        drain_store_calls=store_delta(store_snapshots[1], store_snapshot(system)),
        drain_turns=sum(1 for at, _ in answers if at >= window[1]),
        drain_s=drained,
    )


async def _until_idle(system: BenchSystem, timeout_s: float = 30.0) -> float:
    """Waits until the server processes together use under a tenth of a core over half a
    second (the work turns left behind is done), then one more second for the store-command
    files (written once a second). Returns how long it waited."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        before = cpu_snapshot(system)
        await asyncio.sleep(0.5)
        spent = cpu_delta(before, cpu_snapshot(system))
        server = server_cpu(spent)
        if server < 0.05:
            break
    await asyncio.sleep(1.2)
    return time.monotonic() - start


# ---- (d) process_service memory with idle processes ----


@dataclass
class MemoryResult:
    requested: int
    created: int
    create_s: float
    budget_s: float  # creation stops here even if fewer than requested were created
    first_rate: float  # creates/s over the first 2,000
    last_rate: float  # creates/s over the last 2,000
    rss_before: int
    rss_after: int
    rss_peak: int
    rss_settled: int
    store_rss_before: int
    store_rss_after: int
    window_s: float
    idle_cpu_before: float
    idle_cpu_after: float
    store_idle_cpu_before: float
    store_idle_cpu_after: float

    @property
    def delta_per_process(self) -> float:
        return (self.rss_after - self.rss_before) / max(1, self.created)


def _rate(start: float, stamps: list[float]) -> float:
    return len(stamps) / (stamps[-1] - start) if stamps and stamps[-1] > start else 0.0


async def _idle_window(pid: int, store: int, window_s: float) -> tuple[float, float, int]:
    """CPU seconds of pid and of the store over a window in which nobody calls them, and the
    peak RSS of pid meanwhile."""
    before, store_before = cpu_seconds(pid) or 0.0, cpu_seconds(store) or 0.0
    peak = rss_bytes(pid) or 0
    end = time.monotonic() + window_s
    while time.monotonic() < end:
        await asyncio.sleep(min(0.25, max(0.0, end - time.monotonic())))
        peak = max(peak, rss_bytes(pid) or 0)
    return ((cpu_seconds(pid) or 0.0) - before, (cpu_seconds(store) or 0.0) - store_before, peak)


async def memory(
    system: BenchSystem,
    *,
    sessions: int = 100,
    per_session: int = 100,
    concurrency: int = 16,
    budget_s: float = 150.0,
    window_s: float = 6.0,
) -> MemoryResult:
    pids = system.pids()
    ps, store = pids["process_service"], pids["store"]
    stub = system.processes_internal
    idle_before, store_idle_before, _ = await _idle_window(ps, store, window_s)
    rss_before = rss_bytes(ps) or 0
    store_before = rss_bytes(store) or 0
    items: Iterator[tuple[int, int]] = ((s, p) for s in range(sessions) for p in range(per_session))
    created = 0
    done_at: list[float] = []
    deadline = time.monotonic() + budget_s

    async def creator() -> None:
        nonlocal created
        for s, p in items:
            if time.monotonic() > deadline:
                return  # measured with what was created; the report flags the shortfall
            request = pipb.CreateProcessRequest(
                tenant_id="default",
                project_id="demo",
                session_id=f"bench-mem-{s:03d}",
                name=f"p{p}",
                title=f"idle {p}",
                goal="stay idle",
                engine="ford",
                owner_user_id="dev",
                start=False,
            )
            try:
                await stub.CreateProcess(request, timeout=30)
            except grpc.aio.AioRpcError as exc:
                raise BenchError(
                    f"CreateProcess {request.session_id}/{request.name} failed: "
                    f"{exc.code().name} {exc.details()}"
                ) from exc
            created += 1
            done_at.append(time.perf_counter())

    t0 = time.perf_counter()
    await run_all([creator() for _ in range(concurrency)])
    create_s = time.perf_counter() - t0
    rss_after = rss_bytes(ps) or 0
    store_after = rss_bytes(store) or 0
    listed = await system.processes.ListProcesses(
        ppb.ListProcessesRequest(session_id="bench-mem-000"), timeout=30
    )
    if len(listed.processes) != per_session:
        raise BenchError(
            f"memory: session bench-mem-000 lists {len(listed.processes)} "
            f"processes, not {per_session}"
        )
    idle_after, store_idle_after, peak = await _idle_window(ps, store, window_s)
    system.check_alive()
    return MemoryResult(
        requested=sessions * per_session,
        created=created,
        create_s=create_s,
        budget_s=budget_s,
        first_rate=_rate(t0, done_at[:2000]),
        last_rate=_rate(done_at[-2001], done_at[-2000:]) if len(done_at) > 2000 else 0.0,
        rss_before=rss_before,
        rss_after=rss_after,
        rss_peak=max(peak, rss_after),
        rss_settled=rss_bytes(ps) or 0,
        store_rss_before=store_before,
        store_rss_after=store_after,
        window_s=window_s,
        idle_cpu_before=idle_before,
        idle_cpu_after=idle_after,
        store_idle_cpu_before=store_idle_before,
        store_idle_cpu_after=store_idle_after,
    )
