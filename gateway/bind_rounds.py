"""This gateway replica's bind rounds (session_service/lifecycle/bind_drops.py).

A few times a second the replica calls BindRound: it renews its round lease and learns which
sessions' binds were taken away or ended since its last round; their connections stop
trusting their bind leases, so their next frame asks with Heartbeat (gateway/binding.py) and
learns why. A connection trusts its bind lease only while the replica holds a round lease:
whatever takes a bind away answers once every replica with a round lease has applied the
drop, so a replica that cannot reach session_service must stop trusting within its own.

One call per round for the whole replica, whatever its number of sockets: this is what lets
the bind leases be long, so that a busy socket's frames cost no store write."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import grpc

from gateway.clients import Clients
from vance.ids import new_id
from vance.internal.v1 import session_internal_pb2 as sipb

if TYPE_CHECKING:
    from gateway.connection import Connection

logger = logging.getLogger(__name__)

# How often; a takeover waits for about one to two rounds (at most about the former 1 s lease).
# Each round is two store commands (its upsert and its read), whatever the replica's sockets:
# at 0.2 s that was 3 commands per turn of a system doing 3 turns a second.
ROUND_S = 0.5
# The round lease asked for. A round late by up to this much (a loaded session_service) keeps
# the trust; a takeover waits this long only for a replica that stopped applying drops.
ROUND_LEASE_MS = 3_000
# A drop comes again in the rounds that overlap its time (since_ms is taken back by this much,
# for wall clocks that differ between session_service replicas); applied ones are remembered.
_OVERLAP_MS = 2_000
_REMEMBERED_MS = 4 * _OVERLAP_MS


class BindRounds:
    def __init__(self) -> None:
        self.replica_id = new_id("gwb")
        self.trusted_until = 0.0  # time.monotonic(): until when bind leases may be trusted
        self._since_ms = 0
        self._applied_ms = 0
        self._seen: dict[str, int] = {}  # drop id -> its round's read_at_ms

    def trusts(self, now: float) -> bool:
        return now < self.trusted_until

    async def run_forever(
        self, connections: Callable[[], Iterable[Connection]], clients: Clients
    ) -> None:
        while True:
            try:
                await self.round(connections, clients)
            except grpc.aio.AioRpcError as exc:
                # The round lease lapses; frames ask with Heartbeat until a round gets through.
                logger.warning("bind round failed: %s", exc.code().name)
            except Exception:
                # A bug here must not end the rounds for the replica's life.
                logger.exception("a bind round failed")
            await asyncio.sleep(ROUND_S)

    async def round(self, connections: Callable[[], Iterable[Connection]], clients: Clients) -> int:
        """One round; how many connections stopped trusting their bind."""
        sent = time.monotonic()
        reply = await clients.sessions_internal.BindRound(
            sipb.BindRoundRequest(
                replica_id=self.replica_id,
                lease_ms=ROUND_LEASE_MS,
                since_ms=self._since_ms,
                applied_ms=self._applied_ms,
            ),
            timeout=ROUND_LEASE_MS / 1000,
        )
        dropped = self.apply(connections(), reply)
        self.trusted_until = sent + reply.lease_ms / 1000
        return dropped

    def apply(self, connections: Iterable[Connection], reply: sipb.BindRoundResponse) -> int:
        """Drops the trust of the connections of the sessions in the reply; the next round
        tells session_service that they are applied."""
        fresh = {d.session_id for d in reply.drops if d.drop_id not in self._seen}
        for d in reply.drops:
            self._seen.setdefault(d.drop_id, reply.read_at_ms)
        dropped = 0
        if fresh:
            now = time.monotonic()
            for conn in connections:
                if conn.session_id in fresh:
                    # A heartbeat sent before now may have been answered before the takeover
                    # and arrive after this: it must not restore the trust (binding.py).
                    conn.bind_trusted_until = 0.0
                    conn.bind_dropped_at = now
                    dropped += 1
        self._applied_ms = reply.read_at_ms
        self._since_ms = reply.read_at_ms - _OVERLAP_MS
        old = reply.read_at_ms - _REMEMBERED_MS
        if self._seen and min(self._seen.values()) < old:
            self._seen = {k: v for k, v in self._seen.items() if v >= old}
        return dropped
