"""This gateway replica's ownership of its sessions (session_service/lifecycle/replica_takeover.py).

The replica renews a lease every third of it and sends the sessions its sockets hold. When the
replica stops, the server closes every socket with 1012 (going away); those sockets keep their
binds (no onDisconnect: the client did not leave, the replica did) and the replica hands their
sessions to ShutdownReplica, which leaves them running: their clients reconnect through another
replica (or this one, restarted) and resume, and only a session no client has bound again
within `lifecycle.reconnect_grace_ms` is suspended FORCED. A replica that dies without this is
handled the same way once its lease has run out.

A replica that could not renew for a whole lease has lost it (another replica may take its
sessions over at any moment): it stops acting for them at once (closes their sockets with 1012,
keeping their binds for the clients to resume elsewhere or here) and re-joins under a new id
with an empty list."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING

import grpc

from gateway.clients import Clients
from vance.ids import new_id
from vance.internal.v1 import session_internal_pb2 as sipb

if TYPE_CHECKING:
    from gateway.connection import Connection

logger = logging.getLogger(__name__)

# lifecycle.replica_lease_ms; session_service/lifecycle/replica_takeover.py uses the same
LEASE_MS = 30_000
GOING_AWAY = 1012  # the close code a stopping server gives its sockets
# A failed renewal is tried again after this, doubling up to a sixth of the lease.
_RETRY_MIN_S = 0.25


class Replica:
    def __init__(self, lease_ms: int = LEASE_MS) -> None:
        self.replica_id = new_id("gw")
        self.lease_ms = lease_ms
        self._connections: set[Connection] = set()
        self._leaving: dict[str, str] = {}
        self._dropped: set[Connection] = set()  # closed because the lease was lost
        self.leases_lost = 0

    def add(self, conn: Connection) -> None:
        self._connections.add(conn)

    def remove(self, conn: Connection, *, going_away: bool) -> bool:
        """A socket ended; one closed because this replica stops keeps its session listed.
        True: its bind stays (the replica went away or lost its lease, not the client)."""
        self._connections.discard(conn)
        if conn in self._dropped:
            self._dropped.discard(conn)
            return True
        if going_away and conn.session_id and not conn.monitor:
            self._leaving[conn.session_id] = conn.connection_id
        return going_away

    def connections(self) -> list[Connection]:
        return list(self._connections)

    def held(self) -> dict[str, str]:
        held = {
            c.session_id: c.connection_id
            for c in self._connections
            if c.session_id and not c.monitor
        }
        return {**self._leaving, **held}

    async def renew_forever(self, clients: Clients) -> None:
        """Renews every third of the lease; a renewal that failed is tried again soon, not a
        third of a lease later. A session_service that is slow for a moment (a store stall at
        800 clients, a restart) would otherwise cost the lease after two misses, and the lease
        takes every socket of this replica with it (lease_lost)."""
        period_s = self.lease_ms / 3000
        renewed: float | None = None  # when the last renewal that got through was sent
        retry_s = _RETRY_MIN_S
        while True:
            now = time.monotonic()
            if renewed is not None and now - renewed > self.lease_ms / 1000:
                await self.lease_lost()
                renewed = None
            # A renewal answered after the lease ran out is no use: wait no longer than that.
            left_s = period_s if renewed is None else renewed + self.lease_ms / 1000 - now
            sent = now
            try:
                await clients.sessions_internal.RenewReplica(
                    sipb.ReplicaRequest(replica_id=self.replica_id, sessions=self.held()),
                    timeout=max(_RETRY_MIN_S, min(period_s, left_s)),
                )
                renewed, retry_s = sent, _RETRY_MIN_S
                await asyncio.sleep(period_s)
                continue
            except grpc.aio.AioRpcError as exc:
                logger.warning("renewing replica lease failed: %s", exc.code().name)
            except Exception:
                # Anything else (a bug in building the request, a closed channel) must not
                # end the renewals: the lease would lapse and session_service's sweep would
                # take this live replica's sessions over.
                logger.exception("renewing replica lease failed")
            await asyncio.sleep(retry_s)
            retry_s = min(retry_s * 2, period_s / 2)

    async def lease_lost(self) -> None:
        """Stops acting for the sessions of the lost lease and re-joins under a new id."""
        self.leases_lost += 1
        old, self.replica_id = self.replica_id, new_id("gw")
        self._leaving.clear()
        bound = [c for c in self._connections if c.session_id and not c.monitor]
        logger.warning(
            "replica %s lost its lease: closing the %d sockets of its sessions; re-joining as %s",
            old,
            len(bound),
            self.replica_id,
        )
        for conn in bound:
            self._dropped.add(conn)
            with contextlib.suppress(Exception):  # a socket that is closing already
                await conn.close(GOING_AWAY, "replica_lease_lost")

    async def shutdown(self, clients: Clients) -> None:
        try:
            done = await clients.sessions_internal.ShutdownReplica(
                sipb.ReplicaRequest(replica_id=self.replica_id, sessions=self.held()), timeout=10
            )
            logger.info(
                "replica %s stopped: %d sessions wait for their clients (%d suspended FORCED)",
                self.replica_id,
                done.sessions,
                done.suspended,
            )
        except grpc.aio.AioRpcError as exc:
            # The lease runs out instead and another replica takes the sessions over.
            logger.warning("shutting the replica down failed: %s", exc.code().name)
