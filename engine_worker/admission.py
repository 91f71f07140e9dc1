"""How many turns this worker takes at once, bounded by what actually runs out.

A turn waiting on a hosted model costs a socket and a few KB, not a core, so a worker's slots
(`worker.slots`) are many. What can run out is the event loop (every streamed chunk, every
report, every tool call of every turn runs on it) and memory. This watches both: when the loop
lags more than `worker.max_loop_lag_ms` (smoothed) or the RSS passes `worker.max_rss_mb`, the
worker tells process_service to give it no more turns than it runs now (a `WorkerCapacity`
message); when the lag has fallen below half the bound and memory is back under it, the full
slots again. process_service then queues the turns (fairly, process_service/runtime/fair_queue.py) or
gives them to another worker, instead of every turn on this one getting slower. The provider's
own limits are the model client's (vance/llm_limits.py)."""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)

_INTERVAL_S = 0.1
_SMOOTHING = 0.3  # weight of the newest lag sample


def rss_mb() -> float:
    """This process's resident set, from /proc (the peak from getrusage elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
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
    ) -> None:
        self.slots = slots
        self.capacity = slots  # what process_service was last told
        self._max_lag_s = max_loop_lag_ms / 1000
        self._max_rss_mb = max_rss_mb
        self._running = running
        self._announce = announce
        self._rss = measure_rss
        self.lag_s = 0.0  # smoothed
        self._ticks = 0

    def reset(self) -> None:
        """A new stream: process_service knows only the hello's slots."""
        self.capacity = self.slots

    async def run(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(_INTERVAL_S)
            late = max(0.0, time.perf_counter() - start - _INTERVAL_S)
            self.observe(late)

    def observe(self, late_s: float) -> None:
        """One sample of how late the loop woke us; decides and announces a change."""
        self.lag_s = (1 - _SMOOTHING) * self.lag_s + _SMOOTHING * late_s
        self._ticks += 1
        # RSS costs a file read: once a second is enough for memory that grows per turn.
        high_memory = (
            bool(self._max_rss_mb) and self._ticks % 10 == 0 and (self._rss() > self._max_rss_mb)
        )
        saturated = (self._max_lag_s > 0 and self.lag_s > self._max_lag_s) or high_memory
        if saturated:
            limit = max(1, min(self.capacity, self._running()))
            if limit < self.capacity:
                why = (
                    f"memory above {self._max_rss_mb:.0f} MB"
                    if high_memory
                    else f"event loop lag {1000 * self.lag_s:.0f} ms"
                )
                self._set(limit, why)
        elif self.capacity < self.slots and self.lag_s < self._max_lag_s / 2:
            if not self._max_rss_mb or self._rss() <= self._max_rss_mb:
                self._set(self.slots, "recovered")

    def _set(self, capacity: int, reason: str) -> None:
        logger.info("taking %d turns at once (was %d): %s", capacity, self.capacity, reason)
        self.capacity = capacity
        self._announce(capacity, reason)
