"""Lifecycle transitions of many sessions at once, for the sweeps (sweepers.py): the same steps
in the same order as one session's suspend, close or archive (transitions.py, archive.py), each
step a few store commands and one process_service call for the whole batch instead of some
per session. A session whose status moved meanwhile is left alone; one whose engine cascade
failed keeps its status, so a later sweep tries it again.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from session_service import bind_leases
from session_service.hooks import Hooks
from session_service.lifecycle import DEAD, forced_floor, transition_at
from session_service.models import Session, SessionStatus
from session_service.sweep_sets import BOUND, FORCED, IDLE, SUSPENDED
from session_service.transitions import SUSPENDABLE, Transitions
from vance.domain import CloseReason, SuspendCause

logger = logging.getLogger(__name__)

# Lifecycle hooks of one archived batch running at once (each is a few store commands).
HOOKS_AT_ONCE = 8
_IN_BATCH = 500
_ALL_SETS = (IDLE, SUSPENDED, BOUND, FORCED)
# What a closed or archived session no longer has: a bind, participants, suspend fields.
_CLEARED: dict[str, Any] = {
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

    async def suspend_many(self, sessions: list[Session], cause: SuspendCause, now: int) -> int:
        """`Transitions.suspend` for many sessions; how many were suspended."""
        sessions = [s for s in sessions if s.status.value in SUSPENDABLE]
        if not sessions:
            return 0
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
        fields = {
            "status": SessionStatus.SUSPENDED.value,
            "suspended_at_ms": now,
            "suspend_cause": cause.value,
        }
        mine = await self._write(
            {s.session_id: {**fields, "transition_at_ms": dues[s.session_id]} for s in sessions},
            {"status": {"$in": list(SUSPENDABLE)}},
            fields,
        )
        failed = await self.c.processes.suspend_sessions(list(mine), cause)
        if failed:
            # As with one session: the session is SUSPENDED already; its engines are suspended
            # by the next suspend, resume or close that reaches them.
            logger.warning(
                "engines of %d suspended sessions not suspended: %s", len(failed), failed
            )
        await self.c.sets.drop_many(IDLE, mine)
        logger.info("%d sessions suspended (%s)", len(mine), cause.value)
        return len(mine)

    async def close_many(self, sessions: list[Session], reason: CloseReason, now: int) -> int:
        """`Transitions.close` (abandoned evaluation already done) for many sessions."""
        ids = await self._engines_off([s for s in sessions if s.status.value not in DEAD], reason)
        fields: dict[str, Any] = {
            "status": SessionStatus.CLOSED.value,
            "close_reason": reason.value,
            "closed_at_ms": now,
        }
        mine = await self._write(
            {sid: {**fields, **_CLEARED} for sid in ids}, {"status": {"$nin": list(DEAD)}}, fields
        )
        # As Transitions.close: the cards say CLOSED at once (search/held.py).
        await self.c.store.cards.put_many(((s, "") for s in mine.values()), self.c.clock.now_ms())
        for name in _ALL_SETS:
            await self.c.sets.drop_many(name, mine)
        logger.info("%d sessions closed (%s)", len(mine), reason.value)
        return len(mine)

    async def archive_many(self, sessions: list[Session], now: int) -> int:
        """`Archive.archive` for many sessions, lifecycle hooks included."""
        ids = await self._engines_off(
            [s for s in sessions if s.status.value not in DEAD], CloseReason.ARCHIVED
        )
        fields: dict[str, Any] = {"status": SessionStatus.ARCHIVED.value, "archived_at_ms": now}
        mine = await self._write(
            {sid: {**fields, **_CLEARED} for sid in ids}, {"status": {"$nin": list(DEAD)}}, fields
        )
        for name in _ALL_SETS:
            await self.c.sets.drop_many(name, mine)
        gate = asyncio.Semaphore(HOOKS_AT_ONCE)

        async def hook(session: Session) -> None:
            async with gate:
                await self.hooks.archived(session)  # logs and skips a failing hook itself

        async with asyncio.TaskGroup() as tg:
            for after in mine.values():
                tg.create_task(hook(after))
        logger.info("%d sessions archived", len(mine))
        return len(mine)

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
        self, updates: dict[str, dict[str, Any]], cond: dict[str, Any], marks: dict[str, Any]
    ) -> dict[str, Session]:
        """One compare-and-set per session in one bulk write; returns the sessions whose write
        held, as written (read back: their documents carry `marks`)."""
        if not updates:
            return {}
        # Sessions written with the same fields share one update command (a sweep's batch
        # mostly does: the same now, the same transitionAt per lifecycle).
        groups: dict[str, tuple[dict[str, Any], list[str]]] = {}
        for sid, fields in updates.items():
            key = json.dumps(fields, sort_keys=True, default=str)
            groups.setdefault(key, (fields, []))[1].append(sid)
        for fields, ids in groups.values():
            for i in range(0, len(ids), _IN_BATCH):
                await self.c.store.sessions.update_many(
                    {"_id": {"$in": ids[i : i + _IN_BATCH]}, **cond}, {"$set": fields}
                )
        mine = {
            str(d["_id"]): Session.model_validate(d)
            for d in await self.c.sets.load(list(updates))
            if all(d.get(k) == v for k, v in marks.items())
        }
        if any(bind_leases.ends_binds(fields) for fields in updates.values()):
            await bind_leases.outlast(s.bind_lease_until_ms for s in mine.values())
        return mine
