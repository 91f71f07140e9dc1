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

import grpc

from session_service.domain.models import SUSPENDABLE, Guard, Session, SessionStatus
from session_service.lifecycle.sweepers import Sweepers
from session_service.lifecycle.transitions import Transitions
from session_service.store.raw import Db
from session_service.store.replica_leases import ReplicaLeases
from vance.clock import Clock
from vance.config import LifecycleConfig
from vance.domain import SuspendCause
from vance.errors import InvalidArgumentError, grpc_errors
from vance.internal.v1 import session_internal_pb2 as sipb

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
        db: Db,
        cascades: Transitions,
        sweepers: Sweepers,
        clock: Clock,
        config: LifecycleConfig,
        *,
        lease_ms: int = DEFAULT_LEASE_MS,
    ) -> None:
        self._leases = ReplicaLeases(db)
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
            live = await self._cascades.store.live_ids(sessions)
            sessions = {k: v for k, v in sessions.items() if k in live}
        await self._leases.renew(replica_id, sessions, self._clock.now_ms() + self.lease_ms)
        return ReplicaReport(sessions=len(sessions))

    async def forget(self, session_id: str) -> None:
        """Takes an archived or deleted session out of the lease documents that list it."""
        await self._leases.forget(session_id)

    # The lifecycle hooks (session_service/lifecycle/hooks.py): archive and delete forget the
    # session.
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
            removed = await self._leases.remove(replica_id)
            held = sessions or (removed.sessions if removed else {})
            report = await self._suspend_held(held, clear_bind=True)
            logger.info(
                "replica %s shut down: %d sessions suspended FORCED", replica_id, report.suspended
            )
            return report
        lease = await self._leases.end(replica_id, self._clock.now_ms(), sessions)
        held_count = len(lease.sessions)
        logger.info(
            "replica %s shut down: %d sessions wait %d ms for a client to resume them",
            replica_id,
            held_count,
            self._config.reconnect_grace_ms,
        )
        return ReplicaReport(sessions=held_count)

    async def take_over(self, now_ms: int = 0) -> ReplicaReport:
        """The replicas whose lease ended more than the reconnect grace ago."""
        now = now_ms or self._clock.now_ms()
        total = ReplicaReport()
        for lease in await self._leases.ended_before(now - self._config.reconnect_grace_ms):
            won = await self._leases.take(lease)
            if won is None:
                continue  # another replica took it over first, or it renewed meanwhile
            report = await self._suspend_held(won.sessions, clear_bind=True)
            restart = self._config.auto_restart_forced
            if restart.enabled and report.suspended:
                resumed = await self._sweepers.restart_forced(
                    max_concurrent=restart.max_concurrent,
                    delay_between_ms=restart.delay_between_ms,
                    only=frozenset(won.sessions),
                )
                report.resumed = resumed.resumed
            logger.warning(
                "took over the sessions of replica %s: %d suspended FORCED, %d restarted",
                won.replica_id,
                report.suspended,
                report.resumed,
            )
            total.sessions += report.sessions
            total.suspended += report.suspended
            total.resumed += report.resumed
        return total

    async def _suspend_held(
        self, held: dict[str, str], *, clear_bind: bool = False
    ) -> ReplicaReport:
        report = ReplicaReport(sessions=len(held))
        for session_id, connection_id in held.items():
            session = await self._cascades.store.session(session_id)
            if session is None or session.bound_connection_id != connection_id:
                continue
            if session.status in SUSPENDABLE:
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
            Guard(bound_connection_id=connection_id),
            {"bound_connection_id": None},
        )


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
