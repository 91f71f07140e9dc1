"""Session lifecycle transitions: the status roll-up, suspend, resume,
close and extend, each one compare-and-set on the session document plus the engine cascade in
process_service.

Order keeps the invariant that CLOSED and ARCHIVED sessions are unbound: engines first,
then the session document (which clears the bind in the same write). Sweep-set entries are
written before the state change that needs them; the ones whose due time the session document
tells (transitionAt, the FORCED suspend time) are dropped after the change that ends them, the
others when a sweep finds them due (session_service/lifecycle/sweep_sets.py).
"""

from __future__ import annotations

import logging

from session_service.access.actor import Actor, check_owner_or_admin
from session_service.domain.models import (
    DEAD,
    LIVE,
    OPEN,
    SUSPENDABLE,
    Guard,
    Session,
    SessionFields,
    SessionStatus,
)
from session_service.lifecycle import bind_leases
from session_service.lifecycle.abandoned import AbandonedEvaluator
from session_service.lifecycle.rules import forced_floor, rollup, transition_at
from session_service.lifecycle.sweep_sets import BOUND, FORCED, IDLE, SUSPENDED, SweepSets
from session_service.settings.session_settings import Settings
from session_service.store.session_store import SessionStore
from vance.clients.process import Processes
from vance.clients.recipe import Recipes
from vance.clock import Clock
from vance.config import LifecycleConfig
from vance.domain import CloseReason, OnIdle, SuspendCause
from vance.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.v1 import recipe_pb2 as rpb

logger = logging.getLogger(__name__)

_RUNTIME_CLEARED: SessionFields = {
    "suspended_at_ms": None,
    "suspend_cause": None,
    "transition_at_ms": None,
}


class Transitions:
    def __init__(
        self,
        store: SessionStore,
        sets: SweepSets,
        settings: Settings,
        processes: Processes,
        recipes: Recipes,
        evaluator: AbandonedEvaluator,
        clock: Clock,
        config: LifecycleConfig,
    ) -> None:
        self.store = store
        self.sets = sets
        self.settings = settings
        self.processes = processes
        self.recipes = recipes
        self.evaluator = evaluator
        self.clock = clock
        self.config = config

    # ---- reading ----

    async def load(self, tenant: str, session_id: str, actor: Actor) -> Session:
        """The session for a user operation: 404 when missing (or another tenant's), 403 when
        the actor is neither the owner nor a tenant admin."""
        session = await self.store.session(session_id)
        if session is None or (tenant and session.tenant_id != tenant):
            raise NotFoundError(f"no session {session_id!r}", reason="session_not_found")
        check_owner_or_admin(session, actor)
        return session

    async def cas(
        self,
        session_id: str,
        guard: Guard,
        fields: SessionFields,
        *,
        holder_leaves: bool = False,
    ) -> Session | None:
        """One compare-and-set on a session document; None when the guard did not hold.
        A write that takes the bind away or ends the session returns only once the bind's
        lease has run out (lifecycle/bind_leases.py), unless the holder itself is leaving."""
        after = await self.store.cas(session_id, guard, fields)
        if after is None:
            return None
        if not holder_leaves and bind_leases.ends_binds(fields):
            await bind_leases.outlast(
                self.store.bind_drops, [(session_id, after.bind_lease_until_ms)]
            )
        return after

    async def reload(self, session: Session) -> Session:
        return await self.store.session(session.session_id) or session

    async def view(self, session: Session) -> Session:
        """RUNNING/IDLE are a roll-up over the engines: computed when read and
        written back when it changed, so listings see the last known value."""
        if session.status not in OPEN:
            return session
        engines = await self.processes.engines(session.session_id)
        status = rollup((p.status, p.pending_count) for p in engines)
        if status is session.status:
            return session
        updated = await self.cas(
            session.session_id, Guard(statuses=frozenset({session.status})), {"status": status}
        )
        return updated or await self.reload(session)

    def idle_due(self, session: Session) -> int:
        """The earliest time the idle sweep needs to look at a session again."""
        props = session.lifecycle
        return session.activity_at_ms + max(props.idle_timeout_ms, self.config.idle_prefilter_ms)

    async def index_open(self, session: Session) -> None:
        if session.lifecycle.on_idle is OnIdle.SUSPEND:
            await self.sets.put(IDLE, session.session_id, self.idle_due(session))

    # ---- create ----

    async def resolve_lifecycle(
        self,
        tenant: str,
        project: str,
        *,
        recipe: str,
        engine: str,
        profile: str,
        caller: rpb.LifecycleProperties,
    ) -> ripb.ResolvedLifecycle:
        """At session-create: the bootstrap recipe's profile blocks, then the
        tenant -> project settings, then the caller's explicit values. Resolved once; the
        session keeps the result (and the sources, for audit) and never re-reads the recipe."""
        settings = await self.settings.effective(tenant, project)
        return await self.recipes.resolve_lifecycle(
            ripb.ResolveLifecycleRequest(
                tenant_id=tenant,
                project_id=project,
                recipe=recipe,
                engine=engine,
                profile=profile,
                settings={k: v for k, v in settings.items() if k.startswith("vance.session.")},
                caller=caller,
            )
        )

    async def index_new(self, session: Session) -> None:
        """Before the session document exists: its idle (and bind) sweep entries."""
        await self.index_open(session)
        if session.bound_connection_id:
            await self.sets.put(
                BOUND,
                session.session_id,
                session.last_activity_at_ms + self.config.bind_stale_after_ms,
            )

    # ---- suspend and resume ----

    async def suspend(
        self,
        session: Session,
        cause: SuspendCause,
        *,
        now: int | None = None,
        auto_restart: bool = False,
    ) -> Session:
        """RUNNING/IDLE -> SUSPENDED, engines cascaded; a no-op in any other status. A sweep
        passes its own now, so the stamps agree with the time the sweep decided at.
        `auto_restart`: a FORCED suspend that cut work off (a gateway replica's shutdown or
        takeover, session_service/lifecycle/replica_takeover.py) joins the auto-restart set; an
        admin's
        deliberate suspend does not, so no boot pass undoes it."""
        if session.status not in SUSPENDABLE:
            return session
        now = self.clock.now_ms() if now is None else now
        floor = forced_floor(self.config, await self.settings.effective(session.tenant_id))
        due = transition_at(cause, session.lifecycle, now, floor)
        await self.sets.put(SUSPENDED, session.session_id, due)
        if cause is SuspendCause.FORCED and auto_restart:
            await self.sets.put(FORCED, session.session_id, now)
        # Any suspendable status, not the one read: the RUNNING/IDLE roll-up moves with every
        # engine status change (session_service/lifecycle/engine_rollup.py), and a suspend that
        # lost that race
        # would be dropped silently.
        after = await self.cas(
            session.session_id,
            Guard(statuses=SUSPENDABLE),
            {
                "status": SessionStatus.SUSPENDED,
                "suspended_at_ms": now,
                "suspend_cause": cause,
                "transition_at_ms": due,
            },
        )
        if after is None:
            return await self.reload(session)
        await self.processes.suspend_session(session.session_id, cause)
        logger.info("session %s suspended (%s) until %d", session.session_id, cause.value, due)
        return after

    async def resume(self, session: Session) -> Session:
        """SUSPENDED -> IDLE (then RUNNING by roll-up) for every cause: engines resume and drain
        their pending messages, the runtime fields are cleared. Idempotent on open sessions."""
        if session.status in OPEN:
            return await self.view(session)
        if session.status is not SessionStatus.SUSPENDED:
            raise FailedPreconditionError(
                f"a {session.status.value} session cannot be resumed",
                reason=f"session_{session.status.value.lower()}",
            )
        now = self.clock.now_ms()
        after = await self.cas(
            session.session_id,
            Guard(statuses=frozenset({SessionStatus.SUSPENDED})),
            {"status": SessionStatus.IDLE, "last_activity_at_ms": now, **_RUNTIME_CLEARED},
        )
        if after is None:
            return await self.view(await self.reload(session))
        await self.index_open(after)
        await self.processes.resume_session(session.session_id)
        await self.drop_known(session)
        logger.info("session %s resumed", session.session_id)
        return await self.view(after)

    async def extend(
        self, session: Session, *, transition_at_ms: int, extend_by_ms: int
    ) -> Session:
        """Moves transitionAt of a SUSPENDED session later (never earlier: the FORCED floor and
        the keep duration are lower bounds), without resuming it."""
        if session.status is not SessionStatus.SUSPENDED or session.transition_at_ms is None:
            raise FailedPreconditionError(
                "only a SUSPENDED session has a transition to extend",
                reason="session_not_suspended",
            )
        if transition_at_ms <= 0 and extend_by_ms <= 0:
            raise InvalidArgumentError(
                "give transitionAt or a positive extendByMs", reason="bad_extension"
            )
        current = session.transition_at_ms
        target = max(current, transition_at_ms, current + max(0, extend_by_ms))
        if target == current:
            return session
        await self.sets.put(SUSPENDED, session.session_id, target)
        after = await self.cas(
            session.session_id,
            Guard(statuses=frozenset({SessionStatus.SUSPENDED}), transition_at_ms=current),
            {"transition_at_ms": target},
        )
        return after or await self.reload(session)

    # ---- close ----

    async def close(
        self,
        session: Session,
        reason: CloseReason,
        *,
        evaluated: bool = False,
        now: int | None = None,
    ) -> Session:
        """closeWithCascade: engines CLOSED, then the session CLOSED and unbound. Unless the
        caller already asked, the abandoned evaluator decides between `reason` and ABANDONED."""
        if session.status in DEAD:
            return session
        if not evaluated and reason is not CloseReason.ABANDONED:
            if await self.evaluator.is_abandoned(session):
                reason = CloseReason.ABANDONED
        await self.close_engines(session.session_id, reason)
        after = await self.cas(
            session.session_id,
            LIVE,
            {
                "status": SessionStatus.CLOSED,
                "close_reason": reason,
                "closed_at_ms": self.clock.now_ms() if now is None else now,
                "bound_connection_id": None,
                "participants": [],
                **_RUNTIME_CLEARED,
            },
        )
        if after is None:
            return await self.reload(session)
        # The card says CLOSED at once: searches leave it out without reading the document,
        # and drop a document they held (search/held.py).
        await self.store.cards.put(after, self.clock.now_ms())
        await self.drop_known(session)
        logger.info("session %s closed (%s)", session.session_id, reason.value)
        return after

    async def drop_known(self, *sessions: Session) -> None:
        """Drops the sweep entries whose due time a session (as read before its transition)
        tells: its transitionAt and, after a FORCED suspend, its suspend time."""
        suspended = {
            s.session_id: s.transition_at_ms for s in sessions if s.transition_at_ms is not None
        }
        forced = {
            s.session_id: s.suspended_at_ms
            for s in sessions
            if s.suspend_cause is SuspendCause.FORCED and s.suspended_at_ms is not None
        }
        await self.sets.drop_entries(SUSPENDED, suspended)
        await self.sets.drop_entries(FORCED, forced)

    async def close_engines(self, session_id: str, reason: CloseReason) -> None:
        await self.processes.close_session(session_id, reason)
