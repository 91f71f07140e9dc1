"""Identifiers: short, URL-safe, sortable by creation time within one process."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(n: int, width: int) -> str:
    out = []
    for _ in range(width):
        n, r = divmod(n, 36)
        out.append(_ALPHABET[r])
    return "".join(reversed(out))


def new_id(prefix: str) -> str:
    """`<prefix>_<time><random>`: the time part keeps ids roughly ordered in indexes."""
    ms = time.time_ns() // 1_000_000
    rnd = int.from_bytes(os.urandom(8), "big")
    return f"{prefix}_{_base36(ms, 9)}{_base36(rnd, 10)}"
