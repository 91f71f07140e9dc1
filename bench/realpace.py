"""Round (i): the system at a hosted model's pace, as `make run` ships it.

The scripted model waits `MODEL_TTFT_MS` before its first chunk and spreads `MODEL_STREAM_MS`
over the rest, and answers through `respond` with its message streamed in pieces (as real models
answer our engines). Many clients chat at once, each in a session of its own, one turn after the
other. What a user meets: turns/s against the ceiling (clients / the model's own time), the turn
time above the model's own, how soon the streamed answer's first chunk follows the model's first
chunk, how many chunk frames an answer arrives in; what it costs: CPU per turn and the servers'
RSS per turn in flight. The LangGraph peer runs the same pace afterwards with its run limit set
to the client count (`shared/peers/langgraph/README.md`)."""

from __future__ import annotations

import asyncio
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.errors import BenchError
from bench.procstat import rss_bytes
from bench.scenarios import (
    BENCH_CLIENT,
    NOT_SERVER,
    SCRIPTED_MODEL,
    _until_idle,
    cpu_delta,
    cpu_snapshot,
    open_sessions,
    run_all,
    server_cpu,
    steer,
    store_calls_per_turn,
    store_delta,
    store_snapshot,
)
from bench.system import BenchSystem
from bench.wsclient import Client

TTFT_MS = 1200
STREAM_MS = 300
# The pieces the model's answer comes in (8 over STREAM_MS: about three chunk frames after the
# gateway's coalescing). BENCH_REALPACE_CHUNKS=1 sends it whole, which prices the chunk path:
# the same round without chunks in between.
CHUNKS = int(os.environ.get("BENCH_REALPACE_CHUNKS") or 8)
# Sessions' first turns run before the load, this many started a second (`_first_turns`): at
# real pace about 30 in flight, few against the load's, and a store command rate below it.
FIRST_TURNS_PER_S = 20


@dataclass
class RealPaceResult:
    clients: int
    ttft_ms: int
    stream_ms: int
    duration_s: float
    answers: int = 0
    latencies: list[float] = field(default_factory=list)  # steer -> answer, s
    chunk_lags: list[float] = field(default_factory=list)  # model's first chunk -> client's, s
    chunk_frames: list[int] = field(default_factory=list)  # per answered turn
    outcomes: dict[str, int] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)  # CPU s in the window, by process
    drain_cpu: dict[str, float] = field(default_factory=dict)
    drain_turns: int = 0
    # The sockets' close after the drain (onDisconnect, bind release): session work, not turn
    # work, so it is reported beside the per-turn figures rather than inside them.
    close_cpu: dict[str, float] = field(default_factory=dict)
    # Store commands from the window's start until the system is idle again, by process.
    store_calls: dict[str, dict[str, int]] = field(default_factory=dict)
    rss_idle: dict[str, int] = field(default_factory=dict)  # before the sessions, by process
    # With every session open and bound but no turn running: what the sessions themselves hold
    # (sockets, binds, subscriptions), so that a turn in flight is measured over it.
    # Each session has had its first turn then (`_first_turns`): what is done once per session
    # or once per process is in it, not in the load's growth.
    rss_open: dict[str, int] = field(default_factory=dict)
    rss_busy: dict[str, int] = field(default_factory=dict)  # peak in the window, by process
    # After the load, every turn done and the sessions still open: what the load left held
    # (caches filled by the turns done, freed heap the allocators kept) though no turn runs.
    rss_after: dict[str, int] = field(default_factory=dict)
    in_flight: float = 0.0  # turns in flight, averaged over the window's samples
    slots: int = 0  # the workers' slots, as shipped
    # Completions the scripted model answered in the window (its CPU is counted per call).
    model_calls: int = 0
    # Each client starts a turn this often (it waits out the rest after its answer): the
    # zero-latency run paced to the real pace's turn rate (the mean turn time there), so the two
    # differ in the time a turn is in flight and not in the rate. 0: back to back.
    every_s: float = 0.0

    @property
    def model_s(self) -> float:
        return (self.ttft_ms + self.stream_ms) / 1000

    @property
    def turns_per_s(self) -> float:
        return self.answers / self.duration_s

    @property
    def ceiling(self) -> float:
        """Turns/s if every client's turn took exactly the model's own time."""
        return self.clients / self.model_s if self.model_s else float("inf")

    def server_cpu_ms_per_turn(self) -> float:
        spent = {k: v + self.drain_cpu.get(k, 0.0) for k, v in self.cpu.items()}
        return 1000 * server_cpu(spent) / max(1, self.answers + self.drain_turns)

    def cpu_ms_per_turn_by_process(self) -> dict[str, float]:
        turns = max(1, self.answers + self.drain_turns)
        return {
            k: 1000 * (v + self.drain_cpu.get(k, 0.0)) / turns
            for k, v in sorted(self.cpu.items())
            if k not in NOT_SERVER
        }

    def store_calls_per_turn(self) -> dict[str, float]:
        return store_calls_per_turn(self.store_calls, self.answers + self.drain_turns)

    def model_cpu_ms_per_call(self) -> float:
        """The scripted model process's CPU per completion it answered in the window: a load
        generator's cost, which a hosted model would bear on machines of its own."""
        return 1000 * self.cpu.get(SCRIPTED_MODEL, 0.0) / max(1, self.model_calls)

    def client_cpu_ms_per_turn(self) -> float:
        """The bench process's CPU (its 200 WebSocket clients and its sampling) per turn
        answered in the window: the other load generator."""
        return 1000 * self.cpu.get(BENCH_CLIENT, 0.0) / max(1, self.answers)

    def rss_grown(self) -> dict[str, int]:
        """Bytes by process: the busy peak over the same sessions open and idle."""
        base = self.rss_open or self.rss_idle
        return {k: v - base.get(k, 0) for k, v in sorted(self.rss_busy.items())}

    def rss_per_in_flight(self) -> float:
        """Bytes of server RSS per turn in flight: all the growth under load over the same
        sessions open and idle (what a session costs with no turn running is
        `rss_per_session`), divided by the turns in flight. It counts what grows with the load
        whatever the turns in flight (the store's Go heap goal following the command rate,
        caches filling as turns are done, freed heap an allocator keeps) as if each turn held
        it; `rss_slope` prices only what grows with the turns in flight."""
        return sum(self.rss_grown().values()) / max(1.0, self.in_flight)

    def rss_per_session(self) -> float:
        """Bytes of server RSS per open, idle session: sessions open over the system before."""
        if not self.rss_open:
            return math.nan
        return (sum(self.rss_open.values()) - sum(self.rss_idle.values())) / max(1, self.clients)


def rss_slope(fewer: RealPaceResult, more: RealPaceResult) -> dict[str, float]:
    """Bytes of RSS per added turn in flight, by process: how much more the busy peak grew
    (over the sessions open and idle) in the run with more turns in flight, per turn it had
    more. What both runs grow alike drops out: with the same turn rate (the zero-latency run at
    the real pace's rate) that is everything the rate drives; between 200 and 800 clients (a
    rate ~20% apart, the system CPU-bound) nearly so. Empty when the runs' turns in flight are
    not apart by at least half the larger count (on a machine too busy for the zero-latency run
    to keep few turns in flight, the difference would be noise over a few turns)."""
    added = more.in_flight - fewer.in_flight
    if added < max(1.0, more.in_flight / 2):
        return {}
    lo = fewer.rss_grown()
    return {k: (v - lo.get(k, 0)) / added for k, v in more.rss_grown().items()}


def _server_rss(system: BenchSystem) -> dict[str, int]:
    return {name: rss_bytes(pid) or 0 for name, pid in system.pids().items()}


async def _model_calls(system: BenchSystem, http: httpx.AsyncClient) -> int:
    """Completions the scripted model has answered since it started."""
    assert system.model is not None
    r = await http.get(f"http://127.0.0.1:{system.model.port}/_requests")
    r.raise_for_status()
    return int(r.json()["calls"])


async def _stamps(system: BenchSystem) -> dict[str, float]:
    assert system.model is not None
    async with httpx.AsyncClient(timeout=10) as http:
        r = await http.get(f"http://127.0.0.1:{system.model.port}/_stamps")
    r.raise_for_status()
    return {str(k): float(v) for k, v in r.json()["stamps"].items()}


async def real_pace(
    tmp: Path,
    *,
    clients: int,
    ttft_ms: int = TTFT_MS,
    stream_ms: int = STREAM_MS,
    warmup_s: float = 6.0,
    duration_s: float = 20.0,
    turn_timeout_s: float = 60.0,
    every_s: float = 0.0,
    log: object = print,
) -> RealPaceResult:
    """Starts a system of its own with the shipped defaults and measures one load."""
    tmp.mkdir(parents=True, exist_ok=True)
    system = BenchSystem(
        tmp,
        workers=2,
        shipped_defaults=True,
        model_env={
            "MODEL_TTFT_MS": str(ttft_ms),
            "MODEL_STREAM_MS": str(stream_ms),
            "MODEL_ANSWER_TOOL": "respond",
            "MODEL_CHUNKS": str(CHUNKS),
        },
    )
    result = RealPaceResult(clients, ttft_ms, stream_ms, duration_s, every_s=every_s)
    try:
        await system.start()
        result.slots = sum(w.slots for w in await system.list_workers())
        result.rss_idle = _server_rss(system)
        sessions = await open_sessions(system, clients, f"rp{clients}", concurrency=16)
        await _first_turns(sessions, turn_timeout_s)
        await _stamps(system)  # the session starts' calls and first turns are not measured
        await system.wait_quiet(timeout_s=120)
        await _until_idle(system)
        result.rss_open = _server_rss(system)
        await _drive(system, sessions, result, warmup_s, turn_timeout_s)
    finally:
        await system.stop()
    return result


async def _first_turns(sessions: list[tuple[Client, str]], turn_timeout_s: float) -> None:
    """Each session's first turn, started FIRST_TURNS_PER_S a second whatever the model's pace,
    before the sessions' RSS is read: a session's first turn does work done once per session
    (its engine's settings resolved, its title suggested from the first question and answer,
    the worker's first hold of its chat) and the first turns of a process fill what it fills
    once (imports done on first use, caches of settings and recipes). Left to the measured
    load, all of them in flight together set each process's peak (the allocators keep what
    that burst took) and were charged to the turns in flight; at a steady rate below the
    load's they are part of the sessions' cost (`rss_per_session`) and the load's growth over
    it is what the load holds (docs/operations.md "Memory per turn in flight"). A rate, not a
    count at once: the store's heap goal follows its command rate, so the runs compared
    (`rss_slope`) leave it the same."""

    async def first(i: int, client: Client, pid: str) -> None:
        # A load generator's pacing, not a wait for the system.
        await asyncio.sleep(i / FIRST_TURNS_PER_S)
        await steer(client, pid, f"{client.name} turn 0", turn_timeout_s, wait_idle=True)

    await run_all([first(i, c, pid) for i, (c, pid) in enumerate(sessions)])


async def _drive(
    system: BenchSystem,
    sessions: list[tuple[Client, str]],
    result: RealPaceResult,
    warmup_s: float,
    turn_timeout_s: float,
) -> None:
    start = time.perf_counter()
    # The window opens after warmup_s and once every client has had its first answer of the
    # load (sessions' first turns ran before it, `_first_turns`; at 800 clients the load's first
    # answers alone took longer than the warm-up, and a time-only window measured mostly the
    # ramp). Until it opens, its end is open too (the clients keep chatting).
    window = [start + warmup_s, math.inf]
    firsts = 0
    all_first = asyncio.Event()
    first_chunks: dict[str, tuple[float, int]] = {}  # content -> (client's first chunk, frames)
    answered: list[tuple[float, float, str]] = []  # (answer time, latency, content)
    snapshots: list[dict[str, float]] = []
    calls: list[int] = []  # the model's completions so far, at the window's edges
    stores: list[dict[str, dict[str, int]]] = []
    in_flight = 0
    samples: list[int] = []

    async def chat(client: Client, pid: str, offset_s: float) -> None:
        nonlocal in_flight, firsts
        # A paced run's clients start spread over one period, as they go on: started together,
        # their first turns would all be in flight at once, and that burst's peak (the
        # allocators keep what it took) would stand in this run's peak RSS for the few turns
        # in flight it is meant to price (docs/operations.md "Memory per turn in flight").
        # A load generator's pacing, not a wait for the system.
        slot = time.perf_counter() + offset_s
        await asyncio.sleep(offset_s)
        n = 0
        while time.perf_counter() < window[1]:
            n += 1
            content = f"{client.name} turn {n}"
            frames_before = client.chunk_frames
            in_flight += 1
            try:
                times = await steer(client, pid, content, turn_timeout_s, wait_idle=False)
            finally:
                in_flight -= 1
            if n == 1:
                firsts += 1
                if firsts == len(sessions):
                    all_first.set()
            outcome = str(times["outcome"])
            result.outcomes[outcome] = result.outcomes.get(outcome, 0) + 1
            t0, answer = float(times["t0"]), float(times["answer"])
            answered.append((t0 + answer, answer, content))
            # NaN when no chunk came before the answer.
            first_chunks[content] = (
                t0 + float(times["chunk"]),
                client.chunk_frames - frames_before,
            )
            if result.every_s:
                # A load generator's pacing (the zero-latency run at the real pace's rate),
                # not a wait for the system: the client's next slot on its own grid, a slot
                # missed by a late answer skipped, so that clients one slow moment held back
                # do not go on in step (their turns in flight together).
                now = time.perf_counter()
                slot += result.every_s * max(1, math.ceil((now - slot) / result.every_s))
                await asyncio.sleep(slot - now)

    async def sample() -> None:
        # Made before the window: a client's making (its TLS context) is not the bench's turn work.
        async with httpx.AsyncClient(timeout=10) as http:
            await asyncio.sleep(max(0.0, window[0] - time.perf_counter()))
            await all_first.wait()
            window[0] = max(window[0], time.perf_counter())
            window[1] = window[0] + result.duration_s
            for edge in window:
                await asyncio.sleep(max(0.0, edge - time.perf_counter()))
                system.check_alive()
                snapshots.append(cpu_snapshot(system))
                stores.append(store_snapshot(system))
                calls.append(await _model_calls(system, http))

    async def watch_memory() -> None:
        while time.perf_counter() < window[1]:
            if window[1] < math.inf and time.perf_counter() >= window[0]:
                samples.append(in_flight)
                for name, rss in _server_rss(system).items():
                    result.rss_busy[name] = max(result.rss_busy.get(name, 0), rss)
            await asyncio.sleep(0.5)

    closed = False
    try:
        spread = result.every_s / len(sessions)
        await run_all(
            [
                *(chat(c, pid, i * spread) for i, (c, pid) in enumerate(sessions)),
                sample(),
                watch_memory(),
            ]
        )
        # Every client has its last answer; the sockets stay open until the work the turns
        # left behind is done, so the drain holds turn work only.
        await system.wait_quiet(timeout_s=120)
        await _until_idle(system)
        drained = cpu_snapshot(system)
        result.rss_after = _server_rss(system)
        result.cpu = cpu_delta(snapshots[0], snapshots[1])
        result.model_calls = calls[1] - calls[0]
        result.drain_cpu = cpu_delta(snapshots[1], drained)
        result.store_calls = store_delta(stores[0], store_snapshot(system))
        await asyncio.gather(*(c.close() for c, _ in sessions), return_exceptions=True)
        closed = True
        await _until_idle(system)
        result.close_cpu = cpu_delta(drained, cpu_snapshot(system))
    finally:
        if not closed:
            await asyncio.gather(*(c.close() for c, _ in sessions), return_exceptions=True)
    result.in_flight = sum(samples) / max(1, len(samples))
    stamps = await _stamps(system)
    for at, latency, content in answered:
        if window[0] <= at < window[1]:
            result.answers += 1
            result.latencies.append(latency)
            seen, frames = first_chunks.get(content, (math.nan, 0))
            result.chunk_frames.append(frames)
            model_first = stamps.get(content)
            if model_first is not None and not math.isnan(seen):
                result.chunk_lags.append(seen - model_first)
        elif at >= window[1]:
            result.drain_turns += 1
    if not result.answers:
        raise BenchError(f"real pace, {result.clients} clients: no turn answered in the window")
