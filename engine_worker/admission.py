"""How many turns this worker takes at once, bounded by what actually runs out.

A turn waiting on a hosted model costs a socket and a few KB, not a core, so a worker's slots
(`worker.slots`) are many. What can run out is the event loop (every streamed chunk, every
report, every tool call of every turn runs on it) and memory. This watches both: when the loop
lags more than `worker.max_loop_lag_ms` (smoothed) *while its own work keeps it busy*, or the
RSS passes `worker.max_rss_mb`, the worker tells process_service to give it no more turns than
it runs now (a `WorkerCapacity` message); once it has recovered, the full slots again.
process_service then queues the turns (fairly, process_service/runtime/fair_queue.py) or gives
them to another worker, instead of every turn on this one getting slower. The provider's own
limits are the model client's (vance/llm_limits.py).

Why lag alone is not enough: a loop also lags when the process waits for a core the machine's
other processes hold (a CPU-bound host: the store, process_service, the gateway on the same
cores). Then the loop is not what runs out, and a turn queued in process_service waits while the
work it would do still has to be done by the same cores: it only adds its wait to the user's
turn. At 200 clients and a 1.5 s model (`make bench`'s realpace200) the lag-only rule capped a
worker at 1-8 turns at once for a second at a time, a few times a run: ~100 turns per run
answered QUEUED and waited, with 512 slots configured and about 200 turns in flight. So the
loop counts as saturated only when its thread was on a core for most of the time
(`MIN_BUSY` of the wall time, from the thread's CPU clock): then this worker's own turns are
what the loop cannot keep up with, and another worker (or a later moment) serves a new turn
sooner than this loop would."""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

_INTERVAL_S = 0.1
_SMOOTHING = 0.3  # weight of the newest sample
# The share of the wall time the loop's thread must have spent on a core (smoothed) for its lag
# to count as its own; a loop that recovers below MIN_BUSY - _BUSY_HYSTERESIS takes turns again.
MIN_BUSY = 0.8
_BUSY_HYSTERESIS = 0.1
_RSS_EVERY = 10  # ticks between RSS reads: once a second is enough for memory that grows per turn
_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20 if hasattr(os, "sysconf") else 4096 / 2**20


def rss_mb() -> float:
    """This process's resident set in MiB, from /proc/self/statm (its second field, in pages).
    statm is one short line the kernel formats from counters; /proc/self/status, read before,
    formats some 50 fields and cost about 8x as much a read (0.3 ms against 0.04 ms on this
    2-core machine under load). Falls back to getrusage's peak where there is no /proc."""
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            return int(os.read(fd, 128).split()[1]) * _PAGE_MB
        finally:
            os.close(fd)
    except (OSError, IndexError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Admission:
    def __init__(
        self,
        *,
        slots: int,
        max_loop_lag_ms: float,
        max_rss_mb: float,
        running: Callable[[], int],
        announce: Callable[[int, str], None],
        measure_rss: Callable[[], float] = rss_mb,
        min_busy: float = MIN_BUSY,
    ) -> None:
        self.slots = slots
        self.capacity = slots  # what process_service was last told
        self._max_lag_s = max_loop_lag_ms / 1000
        self._max_rss_mb = max_rss_mb
        self._min_busy = min_busy
        self._running = running
        self._announce = announce
        self._rss = measure_rss
        self.lag_s = 0.0  # smoothed
        self.busy = 0.0  # smoothed share of the wall time the loop's thread was on a core
        self._ticks = 0

    def reset(self) -> None:
        """A new stream: process_service knows only the hello's slots."""
        self.capacity = self.slots

    async def run(self) -> None:
        """Samples until cancelled. A timer callback per tick rather than a task around
        asyncio.sleep: a callback costs no task step, no future and no get_running_loop (a
        getpid system call each on CPython 3.11) ten times a second."""
        loop = asyncio.get_running_loop()
        clock, cpu = loop.time, time.thread_time  # the loop's thread: this one
        handle: asyncio.TimerHandle | None = None

        def tick(due: float, started: float, cpu_started: float) -> None:
            nonlocal handle
            now, cpu_now = clock(), cpu()
            wall = now - started
            self.observe(max(0.0, now - due), (cpu_now - cpu_started) / wall if wall > 0 else 0.0)
            handle = loop.call_at(now + _INTERVAL_S, tick, now + _INTERVAL_S, now, cpu_now)

        now = clock()
        handle = loop.call_at(now + _INTERVAL_S, tick, now + _INTERVAL_S, now, cpu())
        try:
            await loop.create_future()  # never set: the sampling ends when the task is cancelled
        finally:
            handle.cancel()

    def observe(self, late_s: float, busy: float) -> None:
        """One sample: how late the loop woke us, and the share of the interval its thread was
        on a core; decides and announces a change."""
        self.lag_s = (1 - _SMOOTHING) * self.lag_s + _SMOOTHING * late_s
        self.busy = (1 - _SMOOTHING) * self.busy + _SMOOTHING * min(1.0, busy)
        self._ticks += 1
        high_memory = (
            bool(self._max_rss_mb)
            and self._ticks % _RSS_EVERY == 0
            and (self._rss() > self._max_rss_mb)
        )
        lagging = self._max_lag_s > 0 and self.lag_s > self._max_lag_s
        saturated = (lagging and self.busy >= self._min_busy) or high_memory
        if saturated:
            limit = max(1, min(self.capacity, self._running()))
            if limit < self.capacity:
                why = (
                    f"memory above {self._max_rss_mb:.0f} MB"
                    if high_memory
                    else f"event loop lag {1000 * self.lag_s:.0f} ms, "
                    f"loop busy {100 * self.busy:.0f}%"
                )
                self._set(limit, why)
        elif self.capacity < self.slots and (
            self.lag_s < self._max_lag_s / 2 or self.busy < self._min_busy - _BUSY_HYSTERESIS
        ):
            if not self._max_rss_mb or self._rss() <= self._max_rss_mb:
                self._set(self.slots, "recovered")

    def _set(self, capacity: int, reason: str) -> None:
        logger.info("taking %d turns at once (was %d): %s", capacity, self.capacity, reason)
        self.capacity = capacity
        self._announce(capacity, reason)
