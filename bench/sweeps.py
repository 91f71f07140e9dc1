"""Lifecycle sweep duration at 10,000 sessions (seed 002 §7-§9).

Starts the whole system (bench/system.py), loads N sessions straight into the store in the
shape session_service writes them (documents plus their sweep-set entries: every session open,
bound and idle-sweepable), then times SessionService.RunSweeps over gRPC with a controlled now:

- `quiet`: nothing is due (the steady state of a healthy system);
- `idle_due`: 1% of the sessions went quiet: they are checked and suspended (one engine check
  and one suspend cascade call for all of them, session_service/lifecycle/batch_transitions.py);
- `stale_binds`: 1% of the binds went silent and are released;
- `transitions`: 1% of the sessions are SUSPENDED past transitionAt and are archived (abandoned
  evaluation, engine cascade, lifecycle hooks; each one batch);
- `full_scan`: for comparison, one filter over `sessions` that a sweep without the sweep sets
  would need per tick (the embedded store scans every document for it).

`python -m bench.sweeps [sessions]`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from typing import Any

from bench.system import BenchSystem, make_tmp
from session_service.domain.models import LifecycleProps, Session, SessionStatus
from session_service.lifecycle.sweep_sets import BOUND, IDLE, SUSPENDED, SweepSets
from vance.auth import ServiceCredential
from vance.authclient import authed_channel
from vance.ids import new_id
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.internal.v1 import session_internal_pb2_grpc
from vance.store import connect

MIN = 60_000
IDLE_TIMEOUT = 30 * MIN
STALE_AFTER = 2 * MIN
_BATCH = 1_000


def _session(i: int, now: int) -> dict[str, Any]:
    s = Session(
        session_id=f"bench_{i:06d}_{new_id('s')}",
        tenant_id="default",
        project_id="demo",
        owner_user_id="dev",
        status=SessionStatus.IDLE,
        created_at_ms=now,
        last_activity_at_ms=now,
        lifecycle=LifecycleProps(idle_timeout_ms=IDLE_TIMEOUT),
        bound_connection_id=f"conn_bench_{i:06d}",
    )
    return {"_id": s.session_id, **s.model_dump(mode="json")}


async def _seed(db: Any, n: int, now: int) -> list[str]:
    sets = SweepSets(db)
    ids: list[str] = []
    for start in range(0, n, _BATCH):
        docs = [_session(i, now) for i in range(start, min(n, start + _BATCH))]
        await db["sessions"].insert_many(docs, ordered=False)
        batch = [str(d["_id"]) for d in docs]
        await sets.put_many(IDLE, {sid: now + IDLE_TIMEOUT for sid in batch})
        await sets.put_many(BOUND, {sid: now + STALE_AFTER for sid in batch})
        ids.extend(batch)
    return ids


async def _tick(
    stub: session_internal_pb2_grpc.SessionInternalServiceAsyncStub, at: int
) -> tuple[float, Any]:
    started = time.perf_counter()
    report = await stub.RunSweeps(sipb.RunSweepsRequest(now_ms=at), timeout=600)
    return (time.perf_counter() - started) * 1000, report


def _summary(samples: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(samples), 1),
        "max_ms": round(max(samples), 1),
        "runs": len(samples),
    }


async def run_sweep_bench(
    sessions: int = 10_000, *, rounds: int = 5, due_fraction: float = 0.01
) -> dict[str, Any]:
    """Times sweep rounds at `sessions` sessions on a system of its own."""
    tmp = make_tmp()
    system = BenchSystem(tmp, workers=1)
    try:
        await system.start()
        return await measure_sweeps(system, sessions, rounds=rounds, due_fraction=due_fraction)
    finally:
        await system.stop()


async def measure_sweeps(
    system: BenchSystem, sessions: int = 10_000, *, rounds: int = 5, due_fraction: float = 0.01
) -> dict[str, Any]:
    """Times sweep rounds on a running system whose periodic sweeps are off (BenchSystem
    sets VANCE_SWEEP_INTERVAL_MS to a day), so only the measured RunSweeps calls sweep."""
    client, db = connect(system.cfg)
    channel = authed_channel(
        system.cfg.address("session_service"), ServiceCredential.from_config(system.cfg, "bench")
    )
    stub = session_internal_pb2_grpc.SessionInternalServiceStub(channel)
    try:
        return await _measure(db, stub, sessions, rounds, due_fraction)
    finally:
        await channel.close()
        await client.close()


async def _measure(
    db: Any,
    stub: session_internal_pb2_grpc.SessionInternalServiceAsyncStub,
    n: int,
    rounds: int,
    fraction: float,
) -> dict[str, Any]:
    t0 = time.time_ns() // 1_000_000
    started = time.perf_counter()
    ids = await _seed(db, n, t0)
    seeded_s = time.perf_counter() - started
    sets = SweepSets(db)
    per_round = max(1, int(n * fraction))
    at = t0 + MIN  # nothing is due yet at this time
    quiet = [(await _tick(stub, at))[0] for _ in range(rounds)]
    idle_due, stale, transitions = [], [], []
    acted: dict[str, int] = {"idle_suspended": 0, "unbound": 0, "archived": 0, "abandoned": 0}
    for r in range(rounds):
        chosen = ids[r * per_round : (r + 1) * per_round]
        # These went quiet an hour ago (and so did their binds).
        await db["sessions"].update_many(
            {"_id": {"$in": chosen}}, {"$set": {"last_activity_at_ms": t0 - 60 * MIN}}
        )
        await sets.put_many(IDLE, {sid: t0 - 30 * MIN for sid in chosen})
        ms, report = await _tick(stub, at)
        idle_due.append(ms)
        acted["idle_suspended"] += report.idle_suspended
        acted["unbound"] += report.unbound
    for r in range(rounds, 2 * rounds):
        chosen = ids[r * per_round : (r + 1) * per_round]
        await db["sessions"].update_many(
            {"_id": {"$in": chosen}}, {"$set": {"last_activity_at_ms": t0 - 10 * MIN}}
        )
        await sets.put_many(BOUND, {sid: t0 - 8 * MIN for sid in chosen})
        ms, report = await _tick(stub, at)
        stale.append(ms)
        acted["unbound"] += report.unbound
    for r in range(2 * rounds, 3 * rounds):
        chosen = ids[r * per_round : (r + 1) * per_round]
        await db["sessions"].update_many(
            {"_id": {"$in": chosen}},
            {
                "$set": {
                    "status": SessionStatus.SUSPENDED.value,
                    "suspend_cause": "IDLE",
                    "suspended_at_ms": t0 - 25 * 3600_000,
                    "transition_at_ms": t0 - 3600_000,
                    "bound_connection_id": None,
                }
            },
        )
        await sets.put_many(SUSPENDED, {sid: t0 - 3600_000 for sid in chosen})
        ms, report = await _tick(stub, at)
        transitions.append(ms)
        acted["archived"] += report.archived
        acted["abandoned"] += report.abandoned
    scans = []
    for _ in range(rounds):
        begun = time.perf_counter()
        await (
            db["sessions"]
            .find(
                {
                    "status": {"$in": ["RUNNING", "IDLE"]},
                    "lifecycle.on_idle": "SUSPEND",
                    "last_activity_at_ms": {"$lt": at - 30_000},
                },
                {"_id": 1},
            )
            .to_list(None)
        )
        scans.append((time.perf_counter() - begun) * 1000)
    return {
        "sessions": n,
        "due_per_round": per_round,
        "seed_s": round(seeded_s, 1),
        "quiet": _summary(quiet),
        "idle_due": _summary(idle_due),
        "stale_binds": _summary(stale),
        "transitions": _summary(transitions),
        "full_scan": _summary(scans),
        "acted": acted,
    }


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    result = asyncio.run(run_sweep_bench(n))
    for key, value in result.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
