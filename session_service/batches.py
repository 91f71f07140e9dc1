"""Lifecycle transitions of many sessions at once, for the sweeps (sweepers.py): the same steps
in the same order as one session's suspend, close or archive (transitions.py, archive.py), each
step a few store commands and one process_service call for the whole batch instead of some
per session. A session whose status moved meanwhile is left alone; one whose engine cascade
failed keeps its status, so a later sweep tries it again. Each returns the ids of the sessions
it moved; the calling sweep drops their entries of its own sweep set, and entries in the other
sets stay until they are due (session_service/sweep_sets.py).
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
from session_service.sweep_sets import FORCED, SUSPENDED
from session_service.transitions import SUSPENDABLE, Transitions
from vance.domain import CloseReason, SuspendCause
from vance.store import Document

logger = logging.getLogger(__name__)

# Lifecycle hooks of one archived batch running at once (each is a few store commands).
HOOKS_AT_ONCE = 8
_IN_BATCH = 500
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

    async def suspend_many(
        self, sessions: list[Session], cause: SuspendCause, now: int
    ) -> list[str]:
        """`Transitions.suspend` for many sessions; the ids of those suspended."""
        sessions = [s for s in sessions if s.status.value in SUSPENDABLE]
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
        ids = await self._engines_off([s for s in sessions if s.status.value not in DEAD], reason)
        fields: dict[str, Any] = {
            "status": SessionStatus.CLOSED.value,
            "close_reason": reason.value,
            "closed_at_ms": now,
        }
        mine = await self._write(
            {sid: {**fields, **_CLEARED} for sid in ids}, {"status": {"$nin": list(DEAD)}}, fields
        )
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
            [s for s in sessions if s.status.value not in DEAD], CloseReason.ARCHIVED
        )
        fields: dict[str, Any] = {"status": SessionStatus.ARCHIVED.value, "archived_at_ms": now}
        written = {**fields, **_CLEARED}
        mine = await self._write(
            {sid: written for sid in ids}, {"status": {"$nin": list(DEAD)}}, fields
        )
        await self._drop_forced(sessions, mine)
        before = {s.session_id: s for s in sessions}
        gate = asyncio.Semaphore(HOOKS_AT_ONCE)

        async def hook(sid: str) -> None:
            # The hooks see the session as the archive wrote it.
            after = Session.model_validate({**before[sid].model_dump(mode="json"), **written})
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
        self, updates: dict[str, dict[str, Any]], cond: dict[str, Any], marks: dict[str, Any]
    ) -> list[str]:
        """One compare-and-set per session, as few update commands as there are distinct field
        sets; returns the sessions whose write held. When every session matched, that is all of
        them; else a read-back by `_id` tells which documents carry `marks`."""
        if not updates:
            return []
        # Sessions written with the same fields share one update command (a sweep's batch
        # mostly does: the same now, the same transitionAt per lifecycle).
        groups: dict[str, tuple[dict[str, Any], list[str]]] = {}
        for sid, fields in updates.items():
            key = json.dumps(fields, sort_keys=True, default=str)
            groups.setdefault(key, (fields, []))[1].append(sid)
        matched = 0
        for fields, ids in groups.values():
            for i in range(0, len(ids), _IN_BATCH):
                result = await self.c.store.sessions.update_many(
                    {"_id": {"$in": ids[i : i + _IN_BATCH]}, **cond}, {"$set": fields}
                )
                matched += result.matched_count
        ends = any(bind_leases.ends_binds(fields) for fields in updates.values())
        if matched == len(updates):
            mine = list(updates)
            if ends:
                # The lease stamps as they are after the write (a heartbeat may have raised one
                # since the sweep read the session; none can after it).
                got = await self._read(mine, {bind_leases.FIELD: 1})
                await bind_leases.outlast(
                    self.c.store.sessions, ((str(d["_id"]), bind_leases.stamp(d)) for d in got)
                )
            return mine
        held = [
            d
            for d in await self._read(list(updates))
            if all(d.get(k) == v for k, v in marks.items())
        ]
        if ends:
            await bind_leases.outlast(
                self.c.store.sessions, ((str(d["_id"]), bind_leases.stamp(d)) for d in held)
            )
        return [str(d["_id"]) for d in held]

    async def _read(self, ids: list[str], fields: dict[str, int] | None = None) -> list[Document]:
        out: list[Document] = []
        for i in range(0, len(ids), _IN_BATCH):
            found = self.c.store.sessions.find({"_id": {"$in": ids[i : i + _IN_BATCH]}}, fields)
            out.extend(await found.to_list(None))
        return out
