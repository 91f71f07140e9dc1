"""Lifecycle transitions of many sessions at once, for the sweeps (lifecycle/sweepers.py): the same
steps
in the same order as one session's suspend, close or archive (lifecycle/transitions.py,
lifecycle/archive.py), each
step a few store commands and one process_service call for the whole batch instead of some
per session. A session whose status moved meanwhile is left alone; one whose engine cascade
failed keeps its status, so a later sweep tries it again. Each returns the ids of the sessions
it moved; the calling sweep drops their entries of its own sweep set, and entries in the other
sets stay until they are due (session_service/lifecycle/sweep_sets.py).
"""

from __future__ import annotations

import asyncio
import logging

from session_service.domain.models import (
    DEAD,
    LIVE,
    SUSPENDABLE,
    Guard,
    Session,
    SessionFields,
    SessionStatus,
)
from session_service.lifecycle import bind_leases
from session_service.lifecycle.hooks import Hooks
from session_service.lifecycle.rules import forced_floor, transition_at
from session_service.lifecycle.sweep_sets import FORCED, SUSPENDED
from session_service.lifecycle.transitions import Transitions
from session_service.store.session_store import fields_key
from vance.domain import CloseReason, SuspendCause

logger = logging.getLogger(__name__)

# Lifecycle hooks of one archived batch running at once (each is a few store commands).
HOOKS_AT_ONCE = 8
# What a closed or archived session no longer has: a bind, participants, suspend fields.
_CLEARED: SessionFields = {
    "bound_connection_id": None,
    "participants": [],
    "suspended_at_ms": None,
    "suspend_cause": None,
    "transition_at_ms": None,
}


class Batches:
    def __init__(self, transitions: Transitions, hooks: Hooks) -> None:
        self.c = transitions
        self.hooks = hooks

    async def suspend_many(
        self, sessions: list[Session], cause: SuspendCause, now: int
    ) -> list[str]:
        """`Transitions.suspend` for many sessions; the ids of those suspended."""
        sessions = [s for s in sessions if s.status in SUSPENDABLE]
        if not sessions:
            return []
        floors: dict[str, int] = {}
        for tenant in {s.tenant_id for s in sessions}:
            floors[tenant] = forced_floor(self.c.config, await self.c.settings.effective(tenant))
        dues = {
            s.session_id: transition_at(cause, s.lifecycle, now, floors[s.tenant_id])
            for s in sessions
        }
        await self.c.sets.put_many(SUSPENDED, dues)
        if cause is SuspendCause.FORCED:
            await self.c.sets.put_many(FORCED, dict.fromkeys(dues, now))
        fields: SessionFields = {
            "status": SessionStatus.SUSPENDED,
            "suspended_at_ms": now,
            "suspend_cause": cause,
        }
        mine = await self._write(
            {s.session_id: {**fields, "transition_at_ms": dues[s.session_id]} for s in sessions},
            Guard(statuses=SUSPENDABLE),
            fields,
        )
        failed = await self.c.processes.suspend_sessions(mine, cause)
        if failed:
            # As with one session: the session is SUSPENDED already; its engines are suspended
            # by the next suspend, resume or close that reaches them.
            logger.warning(
                "engines of %d suspended sessions not suspended: %s", len(failed), failed
            )
        logger.info("%d sessions suspended (%s)", len(mine), cause.value)
        return mine

    async def close_many(self, sessions: list[Session], reason: CloseReason, now: int) -> list[str]:
        """`Transitions.close` (abandoned evaluation already done) for many sessions."""
        ids = await self._engines_off([s for s in sessions if s.status not in DEAD], reason)
        fields: SessionFields = {
            "status": SessionStatus.CLOSED,
            "close_reason": reason,
            "closed_at_ms": now,
        }
        mine = await self._write({sid: {**fields, **_CLEARED} for sid in ids}, LIVE, fields)
        await self._drop_forced(sessions, mine)
        # As Transitions.close: the cards say CLOSED at once (search/held.py).
        closed = set(mine)
        await self.c.store.cards.put_many(
            ((s, SessionStatus.CLOSED.value) for s in sessions if s.session_id in closed),
            self.c.clock.now_ms(),
        )
        logger.info("%d sessions closed (%s)", len(mine), reason.value)
        return mine

    async def archive_many(self, sessions: list[Session], now: int) -> list[str]:
        """`Archive.archive` for many sessions, lifecycle hooks included."""
        ids = await self._engines_off(
            [s for s in sessions if s.status not in DEAD], CloseReason.ARCHIVED
        )
        fields: SessionFields = {"status": SessionStatus.ARCHIVED, "archived_at_ms": now}
        written: SessionFields = {**fields, **_CLEARED}
        mine = await self._write({sid: written for sid in ids}, LIVE, fields)
        await self._drop_forced(sessions, mine)
        before = {s.session_id: s for s in sessions}
        gate = asyncio.Semaphore(HOOKS_AT_ONCE)

        async def hook(sid: str) -> None:
            # The hooks see the session as the archive wrote it.
            after = before[sid].model_copy(update=written)
            async with gate:
                await self.hooks.archived(after)  # logs and skips a failing hook itself

        async with asyncio.TaskGroup() as tg:
            for sid in mine:
                tg.create_task(hook(sid))
        logger.info("%d sessions archived", len(mine))
        return mine

    async def _drop_forced(self, sessions: list[Session], mine: list[str]) -> None:
        """A FORCED-suspended session that the sweep closed or archived leaves the set the
        auto-restart pass reads (the calling sweep drops its own entries)."""
        ids = set(mine)
        done = [s for s in sessions if s.session_id in ids]
        await self.c.sets.drop_entries(
            FORCED,
            {
                s.session_id: s.suspended_at_ms
                for s in done
                if s.suspend_cause is SuspendCause.FORCED and s.suspended_at_ms is not None
            },
        )

    async def _engines_off(self, sessions: list[Session], reason: CloseReason) -> list[str]:
        """Closes the engines of the sessions (one call); the ids whose engines are off."""
        ids = [s.session_id for s in sessions]
        failed = set(await self.c.processes.close_sessions(ids, reason))
        if failed:
            logger.warning(
                "engines of %d sessions not closed; left for the next sweep", len(failed)
            )
        return [sid for sid in ids if sid not in failed]

    async def _write(
        self, updates: dict[str, SessionFields], guard: Guard, marks: SessionFields
    ) -> list[str]:
        """One compare-and-set per session, as few update commands as there are distinct field
        sets; returns the sessions whose write held. When every session matched, that is all of
        them; else a read-back by `_id` tells which documents carry `marks`."""
        if not updates:
            return []
        # Sessions written with the same fields share one update command (a sweep's batch
        # mostly does: the same now, the same transitionAt per lifecycle).
        groups: dict[str, tuple[SessionFields, list[str]]] = {}
        for sid, fields in updates.items():
            groups.setdefault(fields_key(fields), (fields, []))[1].append(sid)
        matched = 0
        for fields, ids in groups.values():
            matched += await self.c.store.cas_many(ids, guard, fields)
        ends = any(bind_leases.ends_binds(fields) for fields in updates.values())
        if matched == len(updates):
            mine = list(updates)
            if ends:
                # The lease stamps as they are after the write (a heartbeat may have raised one
                # since the sweep read the session; none can after it).
                await bind_leases.outlast(
                    self.c.store.bind_drops, await self.c.store.lease_stamps(mine)
                )
            return mine
        held = await self.c.store.carrying(list(updates), marks)
        if ends:
            await bind_leases.outlast(self.c.store.bind_drops, held)
        return [sid for sid, _ in held]
