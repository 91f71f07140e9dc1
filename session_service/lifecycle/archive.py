"""The ARCHIVED lifecycle: archive, reactivate and delete, with their engine cascades
and lifecycle hooks. All three are idempotent.

Reactivate spawns a fresh chat process with the archived one's recipe (re-applied for the
caller's current profile) and gives it the conversation as memory: process_service copies the
old chat process's messages into the new process's chat (`RespawnChat`), so the engine's own
history is the old conversation (a full replay; the engine fits it into its context budget).
The copies carry `meta.replayedFrom` with the original message id.
"""

from __future__ import annotations

import logging

from session_service.domain.models import LIVE, OPEN, Guard, Session, SessionFields, SessionStatus
from session_service.lifecycle.hooks import Hooks
from session_service.lifecycle.transitions import Transitions
from vance.clients.process import ProcessSpec
from vance.domain import CloseReason, ThinkProcess
from vance.errors import FailedPreconditionError, NotFoundError

logger = logging.getLogger(__name__)

CHAT_PROCESS_NAME = "chat"


def chat_name(generation: int) -> str:
    return CHAT_PROCESS_NAME if generation <= 1 else f"{CHAT_PROCESS_NAME}-{generation}"


class Archive:
    def __init__(self, transitions: Transitions, hooks: Hooks) -> None:
        self.c = transitions
        self.hooks = hooks

    async def archive(self, session: Session, *, now: int | None = None) -> Session:
        """RUNNING/IDLE/SUSPENDED -> ARCHIVED: engines CLOSED (ARCHIVED, pending dropped), bind
        and runtime fields cleared, archivedAt stamped. No-op when already ARCHIVED."""
        if session.status is SessionStatus.ARCHIVED:
            return session
        if session.status is SessionStatus.CLOSED:
            raise NotFoundError("the session is closed", reason="session_closed")
        await self.c.close_engines(session.session_id, CloseReason.ARCHIVED)
        after = await self.c.cas(
            session.session_id,
            LIVE,
            {
                "status": SessionStatus.ARCHIVED,
                "archived_at_ms": self.c.clock.now_ms() if now is None else now,
                "bound_connection_id": None,
                "participants": [],
                "suspended_at_ms": None,
                "suspend_cause": None,
                "transition_at_ms": None,
            },
        )
        if after is None:
            return await self.c.reload(session)
        await self.c.drop_known(session)
        await self.hooks.archived(after)
        logger.info("session %s archived", session.session_id)
        return after

    async def reactivate(self, session: Session, profile: str) -> Session:
        """ARCHIVED -> IDLE with a new chat process generation. Open sessions are returned as
        they are (a repeated request); SUSPENDED ones need resume, not reactivate."""
        if session.status in OPEN:
            return await self.c.view(session)
        if session.status is SessionStatus.CLOSED:
            raise NotFoundError("the session is closed", reason="session_closed")
        if session.status is not SessionStatus.ARCHIVED:
            raise FailedPreconditionError(
                "only an ARCHIVED session can be reactivated; resume a SUSPENDED one",
                reason="session_not_archived",
            )
        await self.hooks.unarchived(session)
        generation = session.generation + 1
        fields: SessionFields = {}
        if session.chat_process_id:
            process = await self._respawn(session, profile or session.profile, generation)
            fields = {
                "chat_process_id": process.id,
                "chat_process_name": process.name,
                "chat_engine": process.engine,
            }
        now = self.c.clock.now_ms()
        after = await self.c.cas(
            session.session_id,
            Guard(statuses=frozenset({SessionStatus.ARCHIVED}), generation=session.generation),
            {
                **fields,
                "status": SessionStatus.IDLE,
                "generation": generation,
                "archived_at_ms": None,
                "reactivated_at_ms": now,
                "last_activity_at_ms": now,
            },
        )
        if after is None:
            return await self.c.view(await self.c.reload(session))
        await self.c.index_open(after)
        logger.info("session %s reactivated as generation %d", session.session_id, generation)
        return await self.c.view(after)

    async def _respawn(self, session: Session, profile: str, generation: int) -> ThinkProcess:
        old = await self.c.processes.process(session.chat_process_id)
        # The recipe moves with the session: without it the spawn would fall back to the
        # engine's default recipe and a non-default session would come back as something else.
        applied = await self.c.recipes.apply(
            tenant_id=session.tenant_id,
            project_id=session.project_id,
            recipe=old.recipe_name,
            engine=old.engine,
            profile=profile,
        )
        return await self.c.processes.respawn_chat(
            ProcessSpec(
                tenant_id=session.tenant_id,
                project_id=session.project_id,
                session_id=session.session_id,
                name=chat_name(generation),
                title="Session chat",
                engine=applied.engine or old.engine,
                recipe_name=applied.recipe_name,
                recipe_snapshot={**applied.snapshot, "profile": profile},
                params=applied.params,
                owner_user_id=session.owner_user_id,
                idempotency_key=f"{session.session_id}:chat:{generation}",
            ),
            history_from=session.chat_process_id,
        )

    async def delete(self, session: Session) -> bool:
        """Hard delete an open or suspended session is archived first; then the
        deleted hooks, CLOSED/USER_DELETE, the process data, and the session's own documents.
        False when there was nothing left (a repeated delete)."""
        if session.status is not SessionStatus.CLOSED:
            session = await self.archive(session)
        await self.hooks.deleted(session)
        closed = await self.c.cas(
            session.session_id,
            Guard(),
            {
                "status": SessionStatus.CLOSED,
                "close_reason": CloseReason.USER_DELETE,
                "closed_at_ms": self.c.clock.now_ms(),
            },
        )
        if closed is None:
            return False
        await self.c.processes.delete_session_data(session.session_id)
        await self.c.sets.purge([session.session_id])
        await self.c.store.delete_session(session)
        logger.info("session %s deleted", session.session_id)
        return True
