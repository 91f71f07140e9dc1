"""Bind leases: how long a gateway may treat a connection's bind as held without asking.

A heartbeat that asks for a lease (`HeartbeatRequest.lease_ms`) is granted at most
MAX_LEASE_MS; the grant is stamped on the session (`Session.bind_lease_until_ms`, wall-clock
ms, the latest of every holder's and participant's grant). The gateway counts its lease from
when it sent the request, so its trust ends before the stamp does. Whatever takes a bind away
or ends the session (a takeover, a close, an archive, a forced unbind or a stale-bind sweep)
writes first and answers only after the stamp has passed (`outlast`): once that call has
returned, the old connection's next frame asks again and learns the bind is gone. The holder
itself giving the bind back waits for nothing: its own gateway drops the lease.

The stamp is wall-clock time, not the service clock (tests move that by hand): the lease is
real time on the gateway. Replicas on different hosts compare their wall clocks, so a skew up
to SKEW_MARGIN_MS is tolerated."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from session_service.domain.models import DEAD, SessionFields

MAX_LEASE_MS = 5_000
SKEW_MARGIN_MS = 50


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def grant(requested_ms: int) -> int:
    return max(0, min(requested_ms, MAX_LEASE_MS))


def ends_binds(fields: SessionFields) -> bool:
    """Whether a session write with these fields takes its bind away or ends the session."""
    unbinds = "bound_connection_id" in fields and fields["bound_connection_id"] is None
    return unbinds or fields.get("status") in DEAD


async def outlast(leases: Iterable[int]) -> None:
    """Returns once every given lease stamp has passed (plus the skew margin); at once when
    they all have, as for any connection that sent no frame in the last few seconds."""
    latest = max(leases, default=0)
    if latest <= 0:
        return
    wait_ms = latest + SKEW_MARGIN_MS - wall_ms()
    if wait_ms > 0:
        await asyncio.sleep(wait_ms / 1000)
