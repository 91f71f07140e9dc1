"""Gateway replica ownership of sessions (seed 002 §9, §10.1, §13).

A gateway replica holds the sockets of the sessions bound through it. It renews a lease
(RenewReplica, every third of the lease) and sends with it the sessions it holds (session id ->
bound connection id); session_service keeps both in `replica_leases/<replica id>`
(`lease_until_ms`, `sessions`). A session bound less than one renewal before a crash is not
in the list yet; the stale-bind sweep still frees it. Then:

- a replica shutting down (ShutdownReplica) ends its lease now and records the sessions it
  held: their turns go on (the workers do not depend on the gateway) and their clients
  reconnect through another replica and resume, which moves the bind;
- once a replica's lease has ended (shut down, or it died and stopped renewing) and
  `lifecycle.reconnect_grace_ms` has passed, the sweep of any session_service replica takes
  it over (TakeOverReplicas, one winner by a compare-and-set delete of the lease document):
  the sessions still bound to the recorded connections (no client came back) are suspended
  FORCED, work having been cut off, so the FORCED floor and the auto-restart rules apply, not
  the session's onDisconnect (a daemon session is kept, not closed); their dead binds are
  cleared and, when `lifecycle.auto_restart_forced.enabled`, the auto-restart pass runs for
  exactly those sessions. A grace of 0 suspends a stopping replica's sessions at once.

Only sessions still bound to the connection recorded at bind time are touched: a session that
moved to another connection (or replica) meanwhile is not this replica's any more. The lease
documents are few (one per gateway replica), so the takeover scan reads them all.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import grpc
from pymongo.asynchronous.database import AsyncDatabase

from session_service.lifecycle import DEAD, OPEN
from session_service.models import Session, SessionStatus
from session_service.sweepers import Sweepers
from session_service.transitions import Transitions
from vance.clock import Clock
from vance.config import LifecycleConfig
from vance.domain import SuspendCause
from vance.errors import InvalidArgumentError, grpc_errors
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.store import Document

logger = logging.getLogger(__name__)

DEFAULT_LEASE_MS = 30_000


@dataclass
class ReplicaReport:
    sessions: int = 0
    suspended: int = 0
    resumed: int = 0


class Ownership:
    def __init__(
        self,
        db: AsyncDatabase[Document],
        cascades: Transitions,
        sweepers: Sweepers,
        clock: Clock,
        config: LifecycleConfig,
        *,
        lease_ms: int = DEFAULT_LEASE_MS,
    ) -> None:
        self._c = db["replica_leases"]
        self._cascades = cascades
        self._sweepers = sweepers
        self._clock = clock
        self._config = config
        self.lease_ms = lease_ms

    async def renew(self, replica_id: str, sessions: dict[str, str]) -> ReplicaReport:
        """The replica's lease, and the sessions it holds now (session id -> connection).
        Archived, closed and deleted sessions are left out: a socket still open on one of
        them holds nothing a takeover could suspend, and a deleted session leaves no trace."""
        _check(replica_id)
        if sessions:
            live = {
                str(d["_id"])
                async for d in self._cascades.store.sessions.find(
                    {"_id": {"$in": list(sessions)}, "status": {"$nin": list(DEAD)}}, {"_id": 1}
                )
            }
            sessions = {k: v for k, v in sessions.items() if k in live}
        await self._c.update_one(
            {"_id": replica_id},
            {
                "$set": {
                    "sessions": [{"s": k, "c": v} for k, v in sorted(sessions.items())],
                    "lease_until_ms": self._clock.now_ms() + self.lease_ms,
                }
            },
            upsert=True,
        )
        return ReplicaReport(sessions=len(sessions))

    async def forget(self, session_id: str) -> None:
        """Takes an archived or deleted session out of the lease documents that list it."""
        async for doc in self._c.find({"sessions.s": session_id}):
            kept = [e for e in doc.get("sessions") or [] if e.get("s") != session_id]
            await self._c.update_one({"_id": doc["_id"]}, {"$set": {"sessions": kept}})

    # The lifecycle hooks (session_service/hooks.py): archive and delete forget the session.
    async def on_session_archived(self, session: Session) -> None:
        await self.forget(session.session_id)

    async def on_session_unarchived(self, session: Session) -> None:
        return None

    async def on_session_deleted(self, session: Session) -> None:
        await self.forget(session.session_id)

    async def shutdown(self, replica_id: str, sessions: dict[str, str]) -> ReplicaReport:
        """The sessions the replica holds as it stops (as it says, else as last renewed):
        its lease ends now, and they wait out the reconnect grace (`take_over`)."""
        _check(replica_id)
        if self._config.reconnect_grace_ms <= 0:
            doc = await self._c.find_one_and_delete({"_id": replica_id})
            if sessions:
                doc = {"sessions": [{"s": k, "c": v} for k, v in sessions.items()]}
            report = await self._suspend_held(doc, clear_bind=True)
            logger.info(
                "replica %s shut down: %d sessions suspended FORCED", replica_id, report.suspended
            )
            return report
        update: dict[str, Any] = {"lease_until_ms": self._clock.now_ms(), "stopped": True}
        if sessions:
            update["sessions"] = [{"s": k, "c": v} for k, v in sorted(sessions.items())]
        doc = await self._c.find_one_and_update(
            {"_id": replica_id}, {"$set": update}, upsert=True, return_document=True
        )
        held = len(_held(doc))
        logger.info(
            "replica %s shut down: %d sessions wait %d ms for a client to resume them",
            replica_id,
            held,
            self._config.reconnect_grace_ms,
        )
        return ReplicaReport(sessions=held)

    async def take_over(self, now_ms: int = 0) -> ReplicaReport:
        """The replicas whose lease ended more than the reconnect grace ago."""
        now = now_ms or self._clock.now_ms()
        total = ReplicaReport()
        ended_before = now - self._config.reconnect_grace_ms
        expired = await self._c.find({"lease_until_ms": {"$lt": ended_before}}).to_list(None)
        for doc in expired:
            won = await self._c.find_one_and_delete(
                {"_id": doc["_id"], "lease_until_ms": doc.get("lease_until_ms")}
            )
            if won is None:
                continue  # another replica took it over first, or it renewed meanwhile
            report = await self._suspend_held(won, clear_bind=True)
            restart = self._config.auto_restart_forced
            if restart.enabled and report.suspended:
                held = frozenset(_held(won))
                resumed = await self._sweepers.restart_forced(
                    max_concurrent=restart.max_concurrent,
                    delay_between_ms=restart.delay_between_ms,
                    only=held,
                )
                report.resumed = resumed.resumed
            logger.warning(
                "took over the sessions of replica %s: %d suspended FORCED, %d restarted",
                won["_id"],
                report.suspended,
                report.resumed,
            )
            total.sessions += report.sessions
            total.suspended += report.suspended
            total.resumed += report.resumed
        return total

    async def _suspend_held(
        self, doc: Document | None, *, clear_bind: bool = False
    ) -> ReplicaReport:
        held = _held(doc)
        report = ReplicaReport(sessions=len(held))
        for session_id, connection_id in held.items():
            session = await self._cascades.store.session(session_id)
            if session is None or session.bound_connection_id != connection_id:
                continue
            if session.status.value in OPEN or session.status is SessionStatus.INIT:
                suspended = await self._cascades.suspend(
                    session, SuspendCause.FORCED, auto_restart=True
                )
                if suspended.status is SessionStatus.SUSPENDED:
                    report.suspended += 1
            if clear_bind:
                await self._unbind(session, connection_id)
        return report

    async def _unbind(self, session: Session, connection_id: str) -> None:
        await self._cascades.cas(
            session.session_id,
            {"bound_connection_id": connection_id},
            {"bound_connection_id": None},
        )


def _held(doc: Document | None) -> dict[str, str]:
    # A list, not a map: session ids as keys would be field names, and a list is one value.
    return {str(e["s"]): str(e["c"]) for e in (doc or {}).get("sessions") or []}


def _check(replica_id: str) -> None:
    if not replica_id:
        raise InvalidArgumentError("replica_id is required")


async def take_over_forever(ownership: Ownership, interval_s: float) -> None:
    """Every replica looks for expired replica leases once per sweep interval."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            await ownership.take_over()
        except Exception:
            logger.exception("taking over expired replica leases failed")


def _out(r: ReplicaReport) -> sipb.ReplicaResponse:
    return sipb.ReplicaResponse(sessions=r.sessions, suspended=r.suspended, resumed=r.resumed)


class OwnershipRpcs:
    ownership: Ownership

    @grpc_errors
    async def RenewReplica(
        self,
        request: sipb.ReplicaRequest,
        context: grpc.aio.ServicerContext[sipb.ReplicaRequest, sipb.ReplicaResponse],
    ) -> sipb.ReplicaResponse:
        return _out(await self.ownership.renew(request.replica_id, dict(request.sessions)))

    @grpc_errors
    async def ShutdownReplica(
        self,
        request: sipb.ReplicaRequest,
        context: grpc.aio.ServicerContext[sipb.ReplicaRequest, sipb.ReplicaResponse],
    ) -> sipb.ReplicaResponse:
        return _out(await self.ownership.shutdown(request.replica_id, dict(request.sessions)))

    @grpc_errors
    async def TakeOverReplicas(
        self,
        request: sipb.TakeOverReplicasRequest,
        context: grpc.aio.ServicerContext[sipb.TakeOverReplicasRequest, sipb.ReplicaResponse],
    ) -> sipb.ReplicaResponse:
        return _out(await self.ownership.take_over(request.now_ms))
