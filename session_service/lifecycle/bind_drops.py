"""Bind drops: how a gateway replica learns that a bind its connections trust was taken away.

A connection's bind lease (bind_leases.py) is long, so that a busy socket's frames cost no
store write: its session document is written about once per lease, not once per frame. What
takes a bind away (a takeover, a close, an archive, a forced unbind, a stale-bind sweep) does
not wait that lease out. It writes a drop (the session id and when; store/bind_drop_store.py
keeps them), and every gateway replica reads the drops in its bind round (BindRound, a few
times a second: one upsert of its round document and one read of the drops since its last
round, whatever its load). The replica stops trusting the binds of the dropped sessions, so
their next frame asks with Heartbeat and learns the bind is gone. The taking call answers
once every live replica has applied the drop (`applied_ms` on its round document) or once
the bind's own lease has run out, whichever comes first.

A replica trusts its connections' leases only while it holds a round lease (`until_ms`): one
that cannot reach session_service stops trusting within that lease (3 s), and a round document
whose lease has ended (the replica died or was cut off) is not waited for.

Times are wall-clock ms (bind_leases.wall_ms): replicas on different hosts compare them, so
SKEW_MARGIN_MS is added where one replica's time is compared with another's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass

from session_service.store.bind_drop_store import BindDrop, BindDropStore, BindRoundState
from vance.errors import InvalidArgumentError

SKEW_MARGIN_MS = 50
MAX_ROUND_LEASE_MS = 5_000
# A drop is read by every replica within a round or two; older ones only cost reads.
_KEEP_DROPS_MS = 60_000
_POLL_S = 0.02
_swept_ms = 0  # when this process last swept old drops (_sweep)


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Round:
    lease_ms: int
    drops: list[BindDrop]
    read_at_ms: int


class BindDrops:
    def __init__(self, store: BindDropStore) -> None:
        self._store = store

    async def round(self, replica_id: str, lease_ms: int, since_ms: int, applied_ms: int) -> Round:
        """A replica's bind round: its round lease and what it applied first, then the drops
        written since `since_ms` (none on a replica's first round: it trusts no bind yet)."""
        if not replica_id:
            raise InvalidArgumentError("replica_id is required", reason="replica_id_required")
        granted = max(0, min(lease_ms, MAX_ROUND_LEASE_MS))
        await self._store.put_round(BindRoundState(replica_id, wall_ms() + granted, applied_ms))
        # Taken before the read: a drop whose insert had returned by then is in it.
        read_at = wall_ms()
        drops = await self._store.drops_since(since_ms) if since_ms > 0 else []
        return Round(lease_ms=granted, drops=drops, read_at_ms=read_at)

    async def revoke(self, leases: Iterable[tuple[str, int]]) -> None:
        """The binds of these sessions (session id, its lease stamp) were just taken away or
        ended: tells the gateway replicas and returns once each live one has applied it, or
        once every stamp has passed (at once when they all have, as for any connection that
        sent no frame within its lease)."""
        now = wall_ms()
        live = {sid: stamp for sid, stamp in leases if stamp + SKEW_MARGIN_MS > now}
        if not live:
            return
        at = wall_ms()
        await self._store.add_drops(live, at)
        # A round whose read began after this had seen the drops.
        written = wall_ms() + SKEW_MARGIN_MS
        deadline = max(live.values()) + SKEW_MARGIN_MS
        await self._sweep(at)
        while wall_ms() < deadline:
            if not await self._store.count_behind(wall_ms() - SKEW_MARGIN_MS, written):
                return
            await asyncio.sleep(min(_POLL_S, max(0.0, (deadline - wall_ms()) / 1000)))

    async def _sweep(self, now: int) -> None:
        """Drops older than a minute and round documents a minute past their lease, at most
        once every ten seconds (a revoke's side job: revokes are rare, rounds are not)."""
        global _swept_ms
        if now - _swept_ms < _KEEP_DROPS_MS // 6:
            return
        _swept_ms = now
        await self._store.sweep(now - _KEEP_DROPS_MS)
