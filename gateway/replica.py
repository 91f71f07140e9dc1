"""This gateway replica's ownership of its sessions (session_service/ownership.py).

The replica renews a lease every third of it and sends the sessions its sockets hold. When the
replica stops, the server closes every socket with 1012 (going away); those sockets keep their
binds (no onDisconnect: the client did not leave, the replica did) and the replica hands their
sessions to ShutdownReplica, which suspends them FORCED. A replica that dies without this is
taken over by session_service's sweep once its lease has run out."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import grpc

from gateway.clients import Clients
from vance.ids import new_id
from vance.internal.v1 import session_internal_pb2 as sipb

if TYPE_CHECKING:
    from gateway.connection import Connection

logger = logging.getLogger(__name__)

LEASE_MS = 30_000  # session_service/ownership.py DEFAULT_LEASE_MS
GOING_AWAY = 1012  # the close code a stopping server gives its sockets


class Replica:
    def __init__(self) -> None:
        self.replica_id = new_id("gw")
        self._connections: set[Connection] = set()
        self._leaving: dict[str, str] = {}

    def add(self, conn: Connection) -> None:
        self._connections.add(conn)

    def remove(self, conn: Connection, *, going_away: bool) -> None:
        """A socket ended; one closed because this replica stops keeps its session listed."""
        self._connections.discard(conn)
        if going_away and conn.session_id and not conn.monitor:
            self._leaving[conn.session_id] = conn.connection_id

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
        while True:
            try:
                await clients.sessions_internal.RenewReplica(
                    sipb.ReplicaRequest(replica_id=self.replica_id, sessions=self.held()),
                    timeout=LEASE_MS / 3000,
                )
            except grpc.aio.AioRpcError as exc:
                logger.warning("renewing replica lease failed: %s", exc.code().name)
            await asyncio.sleep(LEASE_MS / 3000)

    async def shutdown(self, clients: Clients) -> None:
        try:
            done = await clients.sessions_internal.ShutdownReplica(
                sipb.ReplicaRequest(replica_id=self.replica_id, sessions=self.held()), timeout=10
            )
            logger.info("replica %s: %d sessions suspended FORCED", self.replica_id, done.suspended)
        except grpc.aio.AioRpcError as exc:
            # The lease runs out instead and another replica takes the sessions over.
            logger.warning("shutting the replica down failed: %s", exc.code().name)
