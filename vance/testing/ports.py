"""Free loopback ports for a test or benchmark system, outside the kernel's ephemeral range.

A port picked inside that range can be taken between the pick and the service's bind by any
outgoing connection on the machine (the services' own connections to the store included), and
then the service cannot listen. Below the range only another explicit bind can take it."""

from __future__ import annotations

import socket
import time
from itertools import chain
from pathlib import Path

_LOWEST = 10000
_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_range() -> tuple[int, int]:
    try:
        low, high = _RANGE_FILE.read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_port_block(count: int) -> int:
    """A base port such that base..base+count-1 are free on 127.0.0.1 now, all of them below
    the ephemeral range (or above it, where the range starts too low to leave room)."""
    low, high = ephemeral_range()
    spans = [(_LOWEST, low - count), (high + 1, 65535 - count)]
    step = count + 7
    for start, end in spans:
        if end - start < step:
            continue
        # Start somewhere different each time so parallel runs rarely probe the same ports.
        offset = (time.time_ns() // 1000) % (end - start)
        for base in chain(range(start + offset, end, step), range(start, start + offset, step)):
            if _all_free(base, count):
                return base
    raise RuntimeError("no block of free ports on 127.0.0.1 outside the ephemeral range")


def _all_free(base: int, count: int) -> bool:
    socks: list[socket.socket] = []
    try:
        for port in range(base, base + count):
            s = socket.socket()
            socks.append(s)
            s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        for s in socks:
            s.close()
