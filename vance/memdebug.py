"""A debugging aid for memory growth (docs/operations.md "Memory"): with
`VANCE_DEBUG_TRACEMALLOC=<seconds>` a service traces its allocations and logs, every that many
seconds, the source lines whose held memory grew most since the previous report. Tracing costs
CPU and memory of its own: never on in production."""

from __future__ import annotations

import asyncio
import logging
import os
import tracemalloc

logger = logging.getLogger(__name__)

ENV = "VANCE_DEBUG_TRACEMALLOC"
TOP = 15


def interval_from_env() -> float:
    """The report interval the environment asks for; 0 when off."""
    try:
        return max(0.0, float(os.environ.get(ENV, "0")))
    except ValueError:
        return 0.0


async def report_growth(every_s: float) -> None:
    """Runs until cancelled (owned by the service's task group)."""
    tracemalloc.start(3)
    before = tracemalloc.take_snapshot()
    while True:
        await asyncio.sleep(every_s)
        now = tracemalloc.take_snapshot()
        stats = now.compare_to(before, "traceback")[:TOP]
        current, peak = tracemalloc.get_traced_memory()
        lines = [f"traced {current / 2**20:.1f} MiB (peak {peak / 2**20:.1f})"]
        for stat in stats:
            where = " <- ".join(f"{f.filename}:{f.lineno}" for f in stat.traceback)
            lines.append(f"{stat.size_diff / 1024:+.0f} KiB ({stat.count_diff:+d}) {where}")
        logger.warning("memory growth:\n  %s", "\n  ".join(lines))
        before = now
