"""Connection binding: one bound connection per session, taken by compare-and-set.

The bind CAS accepts a free bind, the same connection again, or a stale holder (no frame for
`bind_stale_after_ms`); the owner may also take over a fresh bind. Every inbound frame is a
heartbeat that refreshes lastActivityAt; a heartbeat that misses reclaims the bind when it is
free or stale (the frame itself proves the client is alive), and only a foreign fresh bind
or a dead session ends the connection. Multi-client sessions keep extra connections as
`participants` on the session document, so a leaving bind holder can hand the bind to a
survivor on any gateway replica.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from session_service.access.actor import Actor, check_owner_or_admin
from session_service.domain.models import Guard, Session, SessionStatus
from session_service.lifecycle import bind_leases
from session_service.lifecycle.bind_drops import BindDrops
from session_service.lifecycle.sweep_sets import BOUND
from session_service.lifecycle.transitions import Transitions
from vance.domain import CloseReason, OnDisconnect, SuspendCause
from vance.errors import FailedPreconditionError, NotFoundError

logger = logging.getLogger(__name__)

_REFRESH_EVERY_MS = 1_000
_MAX_REMEMBERED = 100_000


@dataclass(frozen=True)
class Beat:
    """A heartbeat's answer; `lease_ms` is what the caller may trust the bind for."""

    ok: bool = False
    reclaimed: bool = False
    reason: str = ""
    lease_ms: int = 0


@dataclass(frozen=True)
class BindResult:
    session: Session
    bound: bool  # False: joined a multi-client session as a participant
    resumed: bool = False
    previous_connection_id: str = ""


class Binding:
    def __init__(self, transitions: Transitions, *, stale_after_ms: int) -> None:
        self.c = transitions
        self.stale_after_ms = stale_after_ms
        # lastActivityAt is written at most this often per bound connection; the frames in
        # between only read that the bind is still theirs. A read is cheaper than a write and
        # does not queue behind the turn's writes in the store, and a second of lag is far below
        # any idle timeout or the bind staleness it is kept under.
        self.refresh_every_ms = min(_REFRESH_EVERY_MS, stale_after_ms // 4)
        self._written: dict[str, tuple[str, int]] = {}  # session -> (connection, written at)
        self.drops = BindDrops(transitions.store.bind_drops)  # the gateways' bind rounds

    async def _usable(self, tenant: str, session_id: str, actor: Actor) -> Session:
        """The resume error table: 404 missing or closed, 403 foreign, 409 archived."""
        session = await self.c.store.session(session_id)
        if session is None or (tenant and session.tenant_id != tenant):
            raise NotFoundError(f"no session {session_id!r}", reason="session_not_found")
        if session.status is SessionStatus.CLOSED:
            raise NotFoundError("the session is closed", reason="session_closed")
        check_owner_or_admin(session, actor)
        if session.status is SessionStatus.ARCHIVED:
            raise FailedPreconditionError(
                "the session is archived; reactivate it first", reason="session_archived"
            )
        return session

    async def monitor(self, tenant: str, session_id: str, actor: Actor) -> Session:
        """A monitor connection sees the session and may steer, pause, resume and stop its
        processes, but never holds the bind."""
        return await self.c.view(await self._usable(tenant, session_id, actor))

    async def bind(
        self, tenant: str, session_id: str, connection_id: str, actor: Actor, *, takeover: bool
    ) -> BindResult:
        session = await self._usable(tenant, session_id, actor)
        owner = actor.is_system or actor.user_id == session.owner_user_id
        # Takeover of a fresh bind is the owner's alone; anyone else gets free-or-stale only.
        before = await self._try_bind(session_id, connection_id, force=takeover and owner)
        if before is None:
            session = await self._usable(tenant, session_id, actor)
            if not session.allow_multiple_clients:
                raise FailedPreconditionError(
                    "the session is bound to another connection", reason="session_bound_elsewhere"
                )
            joined = await self.c.store.join(session_id, connection_id, self.c.clock.now_ms())
            if joined is None:
                await self._usable(tenant, session_id, actor)  # raises the current reason
                raise NotFoundError("the session is gone", reason="session_not_found")
            return BindResult(await self.c.view(joined), bound=False)
        previous = before.bound_connection_id or ""
        after = await self.c.reload(session)
        resumed = False
        if after.status is SessionStatus.SUSPENDED:
            after = await self.c.resume(after)
            resumed = True
        if previous and previous != connection_id:
            logger.info("session %s taken over from %s", session_id, previous)
        return BindResult(
            await self.c.view(after),
            bound=True,
            resumed=resumed,
            previous_connection_id=previous if previous != connection_id else "",
        )

    async def _try_bind(
        self, session_id: str, connection_id: str, *, force: bool
    ) -> Session | None:
        """The bind CAS; returns the session before the bind, or None when refused. Taking
        the bind from another connection returns once that connection's lease has run out."""
        now = self.c.clock.now_ms()
        await self.c.sets.put(BOUND, session_id, now + self.stale_after_ms)
        before = await self.c.store.try_bind(
            session_id,
            connection_id,
            now,
            stale_before=None if force else now - self.stale_after_ms,
        )
        if before is not None and before.bound_connection_id not in (None, connection_id):
            await bind_leases.outlast(
                self.c.store.bind_drops, [(session_id, before.bind_lease_until_ms)]
            )
        return before

    async def heartbeat(
        self, session_id: str, connection_id: str, *, reclaim: bool, lease_ms: int = 0
    ) -> Beat:
        """Matches the bind holder, or a participant of a multi-client session; counts
        matches, not modifications, so an unchanged timestamp in the same millisecond is still
        a match. A caller asking for a lease asks at most once per lease, so its heartbeat
        always writes: lastActivityAt and the lease stamp (bind_leases.py) in one update."""
        now = self.c.clock.now_ms()
        granted = bind_leases.grant(lease_ms)
        if not granted and self._fresh(session_id, connection_id, now):
            if await self.c.store.is_held(session_id, connection_id):
                return Beat(ok=True)
        else:
            until = bind_leases.wall_ms() + granted if granted else None
            if await self.c.store.touch(session_id, connection_id, now, lease_until=until):
                self._wrote(session_id, connection_id, now)
                return Beat(ok=True, lease_ms=granted)
        self._written.pop(session_id, None)
        if reclaim and await self._try_bind(session_id, connection_id, force=False) is not None:
            logger.info("connection %s reclaimed the bind of %s", connection_id, session_id)
            return Beat(ok=True, reclaimed=True)  # no lease: the next frame asks again
        session = await self.c.store.session(session_id)
        if session is None or session.status is SessionStatus.CLOSED:
            return Beat(reason="session_closed")
        if session.status is SessionStatus.ARCHIVED:
            return Beat(reason="session_archived")
        return Beat(reason="session_bound_elsewhere")

    async def renew(self, beats: list[tuple[str, str, int]]) -> list[int]:
        """Many leased heartbeats (session, connection, lease asked) in one bulk write; the
        lease granted to each, 0 where the connection no longer holds the session. Only when
        some did not match is the outcome read back (one read by _id) to tell which: a beat is
        granted where the session is still held and carries at least the stamp written."""
        if not beats:
            return []
        now = self.c.clock.now_ms()
        wall = bind_leases.wall_ms()
        grants = [bind_leases.grant(lease_ms) for _, _, lease_ms in beats]
        matched = await self.c.store.touch_many(
            [
                (session_id, connection_id, wall + granted)
                for (session_id, connection_id, _), granted in zip(beats, grants, strict=True)
            ],
            now,
        )
        if matched != len(beats):
            found = await self.c.store.held_states({sid for sid, _, _ in beats})
            grants = [
                granted
                if (held := found.get(session_id)) is not None
                and held.held_by(connection_id)
                and held.lease_until_ms >= wall + granted
                else 0
                for (session_id, connection_id, _), granted in zip(beats, grants, strict=True)
            ]
        for (session_id, connection_id, _), granted in zip(beats, grants, strict=True):
            if granted:
                self._wrote(session_id, connection_id, now)
        return grants

    def _fresh(self, session_id: str, connection_id: str, now: int) -> bool:
        written = self._written.get(session_id)
        return (
            written is not None
            and written[0] == connection_id
            and 0 <= now - written[1] < self.refresh_every_ms
        )

    def _wrote(self, session_id: str, connection_id: str, now: int) -> None:
        if len(self._written) >= _MAX_REMEMBERED:
            self._written.clear()  # only costs a write per session on its next frame
        self._written[session_id] = (connection_id, now)

    async def release(
        self, session_id: str, connection_id: str, *, disconnect: bool
    ) -> Session | None:
        """A connection leaves. A participant just leaves; the bind holder hands the bind to a
        survivor when there is one (onDisconnect is skipped: the session stays live for the
        others); otherwise the bind is cleared and, for a disconnect, onDisconnect applies."""
        self._written.pop(session_id, None)
        session = await self.c.store.session(session_id)
        if session is None:
            return None
        if session.bound_connection_id != connection_id:
            if connection_id in session.participants:
                await self.c.store.leave(session_id, connection_id)
            return await self.c.reload(session)
        for survivor in [p for p in session.participants if p != connection_id]:
            escalated = await self.c.store.hand_bind(session_id, connection_id, survivor)
            if escalated is not None:
                logger.info("bind of %s escalated to %s", session_id, survivor)
                return escalated
        after = await self.c.cas(
            session_id,
            Guard(bound_connection_id=connection_id),
            {"bound_connection_id": None},
            holder_leaves=True,
        )
        if after is None:
            return await self.c.reload(session)
        # Its bind entry stays until due: the stale-bind sweep then finds no holder and drops it.
        if not disconnect:
            return after
        match after.lifecycle.on_disconnect:
            case OnDisconnect.SUSPEND:
                return await self.c.suspend(after, SuspendCause.DISCONNECT)
            case OnDisconnect.CLOSE:
                # Deliberately not ARCHIVED: daemon sessions carry no human memory.
                return await self.c.close(after, CloseReason.STOPPED)
            case OnDisconnect.KEEP_OPEN:
                return after
