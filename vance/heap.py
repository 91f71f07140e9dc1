"""The garbage collector's settings for a long-running service (docs/operations.md, "CPU per
turn: the garbage collector"), and the freed heap handed back to the OS (below).

A service builds most of its objects at start-up (modules, protobuf descriptors, the wiring)
and then serves turns whose objects die by reference count. CPython's defaults run a young
collection every 700 container allocations, and every full collection walks everything
start-up built (40-70 ms of CPU each on a 2-core machine); under `make bench`'s throughput
round process_service ran about 80 young collections in a 15 s window and found little.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vance.background import Background

# Container allocations between young collections (CPython's default: 700).
GC_YOUNG_THRESHOLD = 20_000


def settle_heap() -> None:
    """Moves what start-up built out of the collector's sight and collects less often. Call
    it once, after the service's wiring and before it serves: objects made later are
    collected as usual, only less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 20, 20)


# ---- freed heap handed back to the OS ----
#
# A service's freed heap handed back to the OS every second (glibc's `malloc_trim`; the gateway
# and session_service run it: gateway/app.py, `trim_in` below).
#
# glibc returns to the OS only the free memory at the top of a heap; what is freed in its middle
# stays resident. When many turns start at once (200 clients steering together at realpace200:
# 200 `Steer` calls in flight with their tasks, gRPC call buffers and protobuf messages), the
# gateway's heap grows by a few MB for a moment, and that memory, freed a second later, stayed
# resident for good (issue 28: +5.4-5.8 MiB over the same sessions open and idle, while the
# objects alive under load were within ~2,000 of the idle count). `malloc_trim(0)` gives those
# pages back (madvise) in 0.1-1 ms of CPU a call, about 0.03% of a core at once a second; the
# peak went to +3.9-4.0 MiB (docs/operations.md, "Gateway CPU"). Python's own small-object
# arenas are not glibc's: what stays there is not trimmed.
#
# session_service's start-up leaves ~16 MiB freed at the top of its heap that glibc keeps (its
# trim threshold rose with the large blocks start-up freed) until load happens to shrink it: with
# the trim, realpace200 (A/B, December 2026) saw it with the sessions open at 88 MiB instead of
# 105, and its peak under load at 93-95 MiB instead of 97-98. process_service gained nothing
# measurable (peak 101.9/103.3 MiB without, 102.3/100.8 with: its free heap lies in pieces
# smaller than a page between live blocks, which a trim cannot give back), so it runs none.

TRIM_EVERY_S = 1.0


def trimmer() -> Callable[[], int] | None:
    """glibc's `malloc_trim`, or None where the C library has none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: int(trim(0))


async def trim_forever(trim: Callable[[], int], every_s: float = TRIM_EVERY_S) -> None:
    """Until cancelled (a background task: `trim_in`)."""
    while True:
        await asyncio.sleep(every_s)
        trim()


def trim_in(background: Background) -> None:
    """Runs `trim_forever` among a service's background tasks, where the C
    library has `malloc_trim`. Its first trim, a second after the start, also gives back what
    start-up freed (session_service kept 16 MiB of it at the top of its heap until load
    happened to release it)."""
    trim = trimmer()
    if trim is not None:
        background.start("heap-trim", trim_forever(trim))
