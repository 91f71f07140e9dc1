"""The garbage collector's settings for a long-running service (docs/operations.md, "CPU per
turn: the garbage collector").

A service builds most of its objects at start-up (modules, protobuf descriptors, the wiring)
and then serves turns whose objects die by reference count. CPython's defaults run a young
collection every 700 container allocations, and every full collection walks everything
start-up built (40-70 ms of CPU each on a 2-core machine); under `make bench`'s throughput
round process_service ran about 80 young collections in a 15 s window and found little.
"""

from __future__ import annotations

import gc

# Container allocations between young collections (CPython's default: 700).
GC_YOUNG_THRESHOLD = 20_000


def settle_heap() -> None:
    """Moves what start-up built out of the collector's sight and collects less often. Call
    it once, after the service's wiring and before it serves: objects made later are
    collected as usual, only less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 20, 20)
