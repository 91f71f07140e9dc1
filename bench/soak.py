"""Round (k): memory under a steady chat with sessions coming and going (issue 24, part 6).

32 clients chat with the zero-latency scripted model for `BENCH_SOAK_S` seconds (default 600).
Every 50 turns a client leaves its session and opens a new one on the same socket; the session
it left is archived, or every other time deleted, over REST, as a user who is done would. Every
process's RSS is sampled every `SAMPLE_S`. The checks (docs/operations.md "Memory"): after the
warm-up (the first fifth of the run, at least a minute) no process grows by more than 10% over
its size at the end of the warm-up, and the store stays under 300 MB throughout.

`BENCH_SOAK_S=120 python -m bench --rounds soak` is a quick look for growth."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.errors import BenchError
from bench.procstat import rss_bytes
from bench.scenarios import run_all, steer
from bench.system import BenchSystem
from bench.wsclient import Client, status_of_name

CLIENTS = 32
TURNS_PER_SESSION = 50
SAMPLE_S = 10.0
GROWTH_LIMIT = 0.10
STORE_LIMIT = 300 * 1024 * 1024


@dataclass
class SoakResult:
    duration_s: float
    warmup_s: float
    clients: int = CLIENTS
    turns: int = 0
    sessions_left: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    # (seconds since the start, process name -> RSS bytes)
    samples: list[tuple[float, dict[str, int]]] = field(default_factory=list)

    def baseline(self) -> dict[str, int]:
        """Each process's RSS at the end of the warm-up (the first sample at or after it)."""
        for at, rss in self.samples:
            if at >= self.warmup_s:
                return rss
        return self.samples[-1][1] if self.samples else {}

    def growth(self) -> dict[str, float]:
        """Per process: the largest RSS after the warm-up over its baseline, minus one."""
        base = self.baseline()
        out: dict[str, float] = {}
        for name, before in base.items():
            later = [rss[name] for at, rss in self.samples if at >= self.warmup_s and name in rss]
            if later and before:
                out[name] = max(later) / before - 1
        return out

    def store_peak(self) -> int:
        return max((rss.get("store", 0) for _, rss in self.samples), default=0)

    def failures(self) -> list[str]:
        out = [
            f"{name} grew {g:.0%} after the warm-up (limit {GROWTH_LIMIT:.0%})"
            for name, g in self.growth().items()
            if g > GROWTH_LIMIT
        ]
        if self.store_peak() >= STORE_LIMIT:
            out.append(f"the store reached {self.store_peak() / 2**20:.0f} MiB (limit 300 MB)")
        if self.errors:
            out.append(f"errors: {dict(self.errors)}")
        return out


def soak_seconds() -> float:
    return float(os.environ.get("BENCH_SOAK_S", "600"))


async def soak(tmp: Path, *, duration_s: float) -> SoakResult:
    """Starts a system of its own (2 workers) and runs the soak on it."""
    tmp.mkdir(parents=True, exist_ok=True)
    system = BenchSystem(tmp, workers=2)
    result = SoakResult(duration_s, warmup_s=max(60.0, duration_s / 5))
    try:
        await system.start()
        await _drive(system, result)
    finally:
        await system.stop()
    return result


def _sample(system: BenchSystem) -> dict[str, int]:
    return {name: rss for name, pid in system.pids().items() if (rss := rss_bytes(pid))}


async def _drive(system: BenchSystem, result: SoakResult) -> None:
    clients: list[Client] = []
    sessions: list[tuple[Client, tuple[str, str]]] = []
    rest = httpx.AsyncClient(
        base_url=f"http://{system.gateway}/brain/default",
        headers={"Authorization": f"Bearer {system.token}"},
        # A delete removes the session's chat, events and index entries: under this load it
        # waits its turn at the store for a while.
        timeout=120,
    )
    start = end = 0.0

    async def chat(i: int, client: Client, session: tuple[str, str]) -> None:
        # Staggered: the clients' first sessions end at different turns, so sessions come and
        # go all along rather than all 32 at once every 50 turns.
        n = i * TURNS_PER_SESSION // CLIENTS
        while time.monotonic() < end:
            n += 1
            await steer(client, session[1], f"{client.name} turn {n}", 60.0, wait_idle=False)
            result.turns += 1
            if n % TURNS_PER_SESSION:
                continue
            left = session[0]
            session = await _new_session(client)
            result.sessions_left += 1
            # The session just left goes as a user's would: archived, or deleted.
            if result.sessions_left % 2:
                r = await rest.post(f"/session/{left}/archive")
            else:
                r = await rest.delete(f"/session/{left}")
            if r.status_code >= 300:
                result.errors[f"REST {r.status_code}"] += 1

    async def sample() -> None:
        while time.monotonic() < end:
            system.check_alive()
            result.samples.append((time.monotonic() - start, _sample(system)))
            await asyncio.sleep(min(SAMPLE_S, max(0.0, end - time.monotonic())))
        result.samples.append((time.monotonic() - start, _sample(system)))

    try:
        for i in range(CLIENTS):
            clients.append(await system.client(f"soak{i}"))
            sessions.append((clients[-1], await _new_session(clients[-1])))
        start = time.monotonic()  # the run, and its warm-up, count from the first turn
        end = start + result.duration_s
        await run_all([*(chat(i, c, ids) for i, (c, ids) in enumerate(sessions)), sample()])
    finally:
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
        await rest.aclose()


async def _new_session(client: Client, timeout_s: float = 60.0) -> tuple[str, str]:
    """Creates a session on the socket (the socket leaves its previous one); its id and its
    chat process's, once the start turn ended and the chat is IDLE."""
    idle = client.expect(status_of_name("chat", "IDLE"), "chat IDLE after session-create")
    try:
        created = await client.request("session-create", {"projectId": "demo"}, timeout_s)
        await client.wait(idle, timeout_s)
    finally:
        client.forget(idle)
    sid, pid = str(created.get("sessionId") or ""), str(created.get("chatProcessId") or "")
    if not sid or not pid:
        raise BenchError(f"{client.name}: session-create answered {created}")
    return sid, pid


def soak_section(r: SoakResult) -> list[str]:
    """The RSS table (MiB per process at each sampled minute) and the checks."""
    lines = [
        "## Soak: memory under chat with sessions coming and going",
        "",
        f"{r.clients} clients, zero-latency model, a new session every {TURNS_PER_SESSION} turns "
        f"(the one left archived or deleted), {r.duration_s:.0f} s, warm-up {r.warmup_s:.0f} s: "
        f"{r.turns} turns ({r.turns / max(1.0, r.duration_s):.1f}/s), "
        f"{r.sessions_left} sessions left.",
        "",
    ]
    names = sorted({n for _, rss in r.samples for n in rss})
    shown = _thinned(r.samples)
    lines.append("| process | " + " | ".join(f"{at:.0f} s" for at, _ in shown) + " | growth |")
    lines.append("|---" * (len(shown) + 2) + "|")
    growth = r.growth()
    for name in names:
        cells = [f"{rss[name] / 2**20:.0f}" if name in rss else "-" for _, rss in shown]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {growth.get(name, 0):+.1%} |")
    lines.append("")
    failures = r.failures()
    lines.append(
        "Checks: "
        + (
            "; ".join(failures)
            if failures
            else "every process within 10% after the "
            f"warm-up, store peak {r.store_peak() / 2**20:.0f} MiB (under 300 MB)"
        )
    )
    return [*lines, ""]


def _thinned(
    samples: list[tuple[float, dict[str, int]]], most: int = 12
) -> list[tuple[float, dict[str, int]]]:
    if len(samples) <= most:
        return samples
    step = (len(samples) - 1) / (most - 1)
    return [samples[round(i * step)] for i in range(most)]
