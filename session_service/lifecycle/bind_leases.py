"""Bind leases: how long a gateway may treat a connection's bind as held without asking.

A heartbeat that asks for a lease (`HeartbeatRequest.lease_ms`) is granted at most
MAX_LEASE_MS; the grant is stamped on the session (`Session.bind_lease_until_ms`, wall-clock
ms, the latest of every holder's and participant's grant). The gateway counts its lease from
when it sent the request, so its trust ends before the stamp does. Whatever takes a bind away
or ends the session (a takeover, a close, an archive, a forced unbind or a stale-bind sweep)
writes first and answers only once the holder's gateway replica has dropped its trust
(bind_drops.py) or the stamp has passed (`outlast`): once that call has returned, the old
connection's next frame asks again and learns the bind is gone. The holder itself giving the
bind back waits for nothing: its own gateway drops the lease.

The lease is long (a minute at most; the gateway asks for 30 s) because the drops, not its
end, are what make a takeover quick: a busy session's document is written about once per
lease, not once per frame.

The stamp is wall-clock time, not the service clock (tests move that by hand): the lease is
real time on the gateway. Replicas on different hosts compare their wall clocks, so a skew up
to SKEW_MARGIN_MS is tolerated."""

from __future__ import annotations

from collections.abc import Iterable

from session_service.domain.models import DEAD, SessionFields
from session_service.lifecycle.bind_drops import SKEW_MARGIN_MS, BindDrops, wall_ms
from session_service.store.bind_drop_store import BindDropStore

__all__ = ["MAX_LEASE_MS", "SKEW_MARGIN_MS", "ends_binds", "grant", "outlast", "wall_ms"]

MAX_LEASE_MS = 60_000


def grant(requested_ms: int) -> int:
    return max(0, min(requested_ms, MAX_LEASE_MS))


def ends_binds(fields: SessionFields) -> bool:
    """Whether a session write with these fields takes its bind away or ends the session."""
    unbinds = "bound_connection_id" in fields and fields["bound_connection_id"] is None
    return unbinds or fields.get("status") in DEAD


async def outlast(drops: BindDropStore, leases: Iterable[tuple[str, int]]) -> None:
    """Returns once the binds of the given sessions (session id, lease stamp) are no longer
    trusted by any gateway replica (bind_drops.py), or their stamps have passed (plus the skew
    margin); at once when they all have, as for any connection that sent no frame within its
    lease. `drops` is the session store's (SessionStore.bind_drops)."""
    await BindDrops(drops).revoke(leases)
