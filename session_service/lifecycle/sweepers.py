"""The lifecycle sweeps: idle, suspend and stale-bind, run by one
replica at a time, plus the auto-restart pass for FORCED-suspended sessions.

Each sweep reads its sweep set (session_service/lifecycle/sweep_sets.py), so a tick costs the
buckets of
the set that are due plus their sessions, not a scan of every session. Time is a parameter:
production ticks pass the clock's now; tests call RunSweeps with any now they like.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from session_service.domain.models import OPEN, Session, SessionStatus
from session_service.lifecycle import bind_leases
from session_service.lifecycle.abandoned import AbandonedEvaluator
from session_service.lifecycle.batch_transitions import Batches
from session_service.lifecycle.rules import engine_busy
from session_service.lifecycle.sweep_sets import BOUND, FORCED, IDLE, SUSPENDED, Read
from session_service.lifecycle.transitions import Transitions
from session_service.store.raw import Db
from vance.clock import Clock
from vance.config import LifecycleConfig
from vance.domain import CloseReason, OnIdle, OnSuspend, SuspendCause
from vance.store import is_duplicate_key

logger = logging.getLogger(__name__)

LEASE = "session-sweeps"


@dataclass
class SweepReport:
    looked_at: int = 0
    idle_suspended: int = 0
    archived: int = 0
    auto_closed: int = 0
    abandoned: int = 0
    unbound: int = 0
    resumed: int = 0
    skipped: list[str] = field(default_factory=list)
    duration_us: int = 0


class Sweepers:
    def __init__(
        self,
        db: Db,
        transitions: Transitions,
        batches: Batches,
        evaluator: AbandonedEvaluator,
        config: LifecycleConfig,
        *,
        replica_id: str,
    ) -> None:
        self._leases = db["sweep_leases"]
        self.c = transitions
        self.batches = batches
        self.evaluator = evaluator
        self.config = config
        self.replica_id = replica_id
        # The stale-bind sweep's initial delay counts from here, on the service clock.
        self.started_ms = transitions.clock.now_ms()

    # ---- the lease: one replica sweeps per round ----

    async def take_lease(self) -> bool:
        """Compare-and-set on the lease document: free, expired, or already ours. Held for
        most of an interval, so the other replicas' ticks of the same round find it taken.
        Lease times use the service clock, not the sweep's now, so a test that sweeps at a
        far-away now does not lock other replicas out."""
        now = self.c.clock.now_ms()
        until = now + max(1_000, self.config.sweep_interval_ms * 4 // 5)
        try:
            await self._leases.find_one_and_update(
                {"_id": LEASE, "$or": [{"holder": self.replica_id}, {"until_ms": {"$lt": now}}]},
                {"$set": {"holder": self.replica_id, "until_ms": until}},
                upsert=True,
            )
        except Exception as exc:
            if is_duplicate_key(exc):
                return False  # held by another replica: the upsert could not insert it
            raise
        return True

    async def release_lease(self) -> None:
        """On shutdown: another replica may take over at its next tick."""
        await self._leases.update_one(
            {"_id": LEASE, "holder": self.replica_id}, {"$set": {"until_ms": 0}}
        )

    async def backfill_once(self) -> int:
        """Once per store (marker documents make later starts skip it): entries of the earlier
        sweep-set layout move into the time buckets, and sessions stored before the sweep sets
        existed are indexed. The only full scan of `sessions`, and it runs once."""
        converted = 0
        if await self._leases.find_one({"_id": "sweep-sets-v2"}) is None:
            # Marked after the move, which is idempotent: a start that died halfway (or two
            # replicas starting at once) moves what is left again.
            converted = await self.c.sets.convert_v1()
            await self._mark("sweep-sets-v2")
            if converted:
                logger.info("moved %d sweep entries of the earlier layout into buckets", converted)
        if not await self._mark("backfill-v1"):
            return converted
        idle: dict[str, int] = {}
        bound: dict[str, int] = {}
        suspended: dict[str, int] = {}
        async for session in self.c.store.live_sessions():
            if session.status is SessionStatus.SUSPENDED and session.transition_at_ms is not None:
                suspended[session.session_id] = session.transition_at_ms
            elif session.status in OPEN and session.lifecycle.on_idle is OnIdle.SUSPEND:
                idle[session.session_id] = self.c.idle_due(session)
            if session.bound_connection_id:
                bound[session.session_id] = (
                    session.last_activity_at_ms + self.config.bind_stale_after_ms
                )
        await self.c.sets.put_many(IDLE, idle)
        await self.c.sets.put_many(BOUND, bound)
        await self.c.sets.put_many(SUSPENDED, suspended)
        count = len(idle) + len(bound) + len(suspended)
        logger.info("indexed %d sweep entries of sessions stored before the sweep sets", count)
        return converted + count

    async def _mark(self, marker: str) -> bool:
        """Inserts a one-time marker; False when some replica did already."""
        try:
            await self._leases.insert_one({"_id": marker, "by": self.replica_id})
        except Exception as exc:
            if is_duplicate_key(exc):
                return False
            raise
        return True

    # ---- one round ----

    async def run_all(self, now_ms: int, only: frozenset[str] | None = None) -> SweepReport:
        report = SweepReport()
        started = time.perf_counter()
        if not await self.take_lease():
            report.skipped = ["stale-bind", "suspend", "idle"]
            return report
        # Suspend before idle: a session moves one step per round, so one that the idle sweep
        # parks with an immediate transitionAt (onSuspend=CLOSE) closes on the next round.
        if self.c.clock.now_ms() >= self.started_ms + self.config.stale_bind_initial_delay_ms:
            await self.stale_binds(now_ms, only, report)
        else:
            report.skipped = ["stale-bind"]  # still within its initial delay
        await self.suspended(now_ms, only, report)
        await self.idle(now_ms, only, report)
        report.duration_us = int((time.perf_counter() - started) * 1_000_000)
        return report

    async def _due(
        self, name: str, now: int, only: frozenset[str] | None, report: SweepReport
    ) -> tuple[Read, dict[str, Session]]:
        read = await self.c.sets.due(name, now, only)
        found = {s.session_id: s for s in await self.c.store.sessions_by_ids(read.due)}
        report.looked_at += len(found)
        return read, found

    async def stale_binds(self, now: int, only: frozenset[str] | None, report: SweepReport) -> None:
        """binds without a frame for bind_stale_after_ms are cleared. lastActivityAt stays
        as it was: it tells when the connection effectively died."""
        stale = self.config.bind_stale_after_ms
        read, found = await self._due(BOUND, now, only, report)
        done, later = {s for s in read.due if s not in found}, {}
        clear: dict[str, tuple[str, int]] = {}  # session -> (holder, last frame) as read
        for sid, session in found.items():
            holder = session.bound_connection_id
            activity = session.last_activity_at_ms
            if not holder:
                done.add(sid)
            elif activity + stale > now:
                later[sid] = activity + stale
            else:
                clear[sid] = (holder, activity)
        if clear:
            unbound = await self.c.store.unbind_stale(clear)
            report.unbound += unbound
            # A bind without frames for minutes holds no live lease; this only waits when the
            # service clock runs ahead of the wall clock (a replica's clock moved by hand).
            await bind_leases.outlast(
                self.c.store.bind_drops,
                ((sid, found[sid].bind_lease_until_ms) for sid in clear),
            )
            if unbound == len(clear):
                done |= set(clear)
            else:
                for session in await self.c.store.sessions_by_ids(clear):
                    sid = session.session_id
                    if session.bound_connection_id == clear[sid][0]:
                        later[sid] = now + stale  # a frame arrived meanwhile: look again later
                    else:
                        # Cleared here, or bound anew since (that bind wrote its own entry,
                        # which the drop leaves alone).
                        done.add(sid)
        await self.c.sets.finish(read, done, later)

    async def idle(self, now: int, only: frozenset[str] | None, report: SweepReport) -> None:
        """open sessions with onIdle=SUSPEND, quiet for idleTimeoutMs (and at least the
        pre-filter), with no engine RUNNING, BLOCKED or PAUSED -> suspend, cause IDLE."""
        read, found = await self._due(IDLE, now, only, report)
        done, later = {s for s in read.due if s not in found}, {}
        quiet: list[Session] = []
        for sid, session in found.items():
            if session.status not in OPEN or session.lifecycle.on_idle is not OnIdle.SUSPEND:
                done.add(sid)
                continue
            when = self.c.idle_due(session)
            if when > now:
                later[sid] = when
            else:
                quiet.append(session)
        # The engine states of all quiet sessions in one call. Busy engines have no idle
        # deadline: such a session is looked at every tick.
        states = (
            await self.c.processes.engine_states([s.session_id for s in quiet]) if quiet else {}
        )
        idle = [
            s
            for s in quiet
            if not any(engine_busy(st, n) for st, n in states.get(s.session_id, []))
        ]
        suspended = await self.batches.suspend_many(idle, SuspendCause.IDLE, now)
        report.idle_suspended += len(suspended)
        # The busy ones keep their due entries: looked at again next tick.
        await self.c.sets.finish(read, done | set(suspended), later)

    async def suspended(self, now: int, only: frozenset[str] | None, report: SweepReport) -> None:
        """SUSPENDED sessions whose transitionAt passed: abandoned -> CLOSED/ABANDONED,
        else onSuspend KEEP -> ARCHIVED, CLOSE -> CLOSED/AUTO_CLOSE. No policy beyond that.
        Each outcome is one batch (session_service/lifecycle/batch_transitions.py)."""
        read, found = await self._due(SUSPENDED, now, only, report)
        done, later = {s for s in read.due if s not in found}, {}
        ready: list[Session] = []
        for sid, session in found.items():
            if session.status is not SessionStatus.SUSPENDED or session.transition_at_ms is None:
                done.add(sid)
            elif session.transition_at_ms > now:
                later[sid] = session.transition_at_ms
            else:
                ready.append(session)
        abandoned = await self.evaluator.abandoned_among(ready)
        outcomes: dict[str, list[Session]] = {"abandoned": [], "archived": [], "auto_closed": []}
        for session in ready:
            if session.session_id in abandoned:
                outcomes["abandoned"].append(session)
            elif session.lifecycle.on_suspend is OnSuspend.KEEP:
                outcomes["archived"].append(session)
            else:
                outcomes["auto_closed"].append(session)
        b = self.batches
        acts: dict[str, Callable[[list[Session]], Awaitable[list[str]]]] = {
            "abandoned": lambda ss: b.close_many(ss, CloseReason.ABANDONED, now),
            "archived": lambda ss: b.archive_many(ss, now),
            "auto_closed": lambda ss: b.close_many(ss, CloseReason.AUTO_CLOSE, now),
        }
        for outcome, act in acts.items():
            if not outcomes[outcome]:
                continue
            try:
                moved = await act(outcomes[outcome])
            except Exception:
                # Those sessions stay SUSPENDED with their entries: the next round retries.
                logger.exception("%s: %d sessions failed", outcome, len(outcomes[outcome]))
                continue
            setattr(report, outcome, getattr(report, outcome) + len(moved))
            done.update(moved)
        await self.c.sets.finish(read, done, later)

    # ---- auto-restart of FORCED-suspended sessions ----

    async def restart_forced(
        self, *, max_concurrent: int, delay_between_ms: int, only: frozenset[str] | None = None
    ) -> SweepReport:
        """Resumes every FORCED-suspended session: at most max_concurrent resumes at a time,
        delay_between_ms between starting them (no thundering herd on boot)."""
        report = SweepReport()
        started = time.perf_counter()
        read = await self.c.sets.due(FORCED, 2**62, only)  # the whole set
        candidates = [
            s
            for s in await self.c.store.sessions_by_ids(read.due)
            if s.status is SessionStatus.SUSPENDED and s.suspend_cause is SuspendCause.FORCED
        ]
        report.looked_at = len(candidates)
        # Resumed ones drop their own entries (Transitions.resume); a failed resume keeps its.
        await self.c.sets.finish(read, set(read.due) - {c.session_id for c in candidates}, {})
        report.resumed = await resume_paced(
            candidates,
            self.c.resume,
            max_concurrent=max_concurrent,
            delay_between_ms=delay_between_ms,
        )
        report.duration_us = int((time.perf_counter() - started) * 1_000_000)
        logger.info("auto-restart resumed %d FORCED-suspended sessions", report.resumed)
        return report

    # ---- the periodic tick ----

    async def run_forever(
        self, clock: Clock, on_round: Callable[[SweepReport], Awaitable[None]] | None = None
    ) -> None:
        interval = self.config.sweep_interval_ms / 1000
        while True:
            await asyncio.sleep(interval)
            try:
                report = await self.run_all(clock.now_ms())
                if on_round is not None:
                    await on_round(report)
            except Exception:
                logger.exception("lifecycle sweep failed")


async def resume_paced(
    sessions: list[Session],
    resume: Callable[[Session], Awaitable[Session]],
    *,
    max_concurrent: int,
    delay_between_ms: int,
) -> int:
    """At most max_concurrent resumes in flight, delay_between_ms between starting two; a
    failed resume is logged and the rest go on. Returns how many succeeded."""
    gate = asyncio.Semaphore(max(1, max_concurrent))
    resumed = 0

    async def one(session: Session) -> None:
        nonlocal resumed
        try:
            await resume(session)
            resumed += 1
        except Exception:
            logger.exception("auto-restart of %s failed", session.session_id)
        finally:
            gate.release()

    async with asyncio.TaskGroup() as tg:
        for i, session in enumerate(sessions):
            await gate.acquire()
            if i and delay_between_ms > 0:
                await asyncio.sleep(delay_between_ms / 1000)
            tg.create_task(one(session))
    return resumed
