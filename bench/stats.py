"""Small statistics over latency samples (seconds in, milliseconds out)."""

from __future__ import annotations

import math
from dataclasses import dataclass


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class Summary:
    count: int
    p50_ms: float
    p99_ms: float
    mean_ms: float
    max_ms: float

    @classmethod
    def of(cls, seconds: list[float]) -> Summary:
        if not seconds:
            return cls(0, math.nan, math.nan, math.nan, math.nan)
        return cls(
            len(seconds),
            percentile(seconds, 50) * 1000,
            percentile(seconds, 99) * 1000,
            sum(seconds) / len(seconds) * 1000,
            max(seconds) * 1000,
        )
