"""The gateway's freed heap handed back to the OS every second (glibc's `malloc_trim`).

glibc returns to the OS only the free memory at the top of a heap; what is freed in its middle
stays resident. When many turns start at once (200 clients steering together at realpace200:
200 `Steer` calls in flight with their tasks, gRPC call buffers and protobuf messages), the
gateway's heap grows by a few MB for a moment, and that memory, freed a second later, stayed
resident for good (issue 28: +5.4-5.8 MiB over the same sessions open and idle, while the
objects alive under load were within ~2,000 of the idle count). `malloc_trim(0)` gives those
pages back (madvise) in 0.1-1 ms of CPU a call, about 0.03% of a core at once a second; the
peak went to +3.9-4.0 MiB (docs/operations.md, "Gateway CPU"). Python's own small-object
arenas are not glibc's: what stays there is not trimmed."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
from collections.abc import Callable

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
    """Until cancelled (a background task of the gateway, gateway/app.py)."""
    while True:
        await asyncio.sleep(every_s)
        trim()
