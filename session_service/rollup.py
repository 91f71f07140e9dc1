"""The RUNNING/IDLE roll-up kept current (seed 002 §4): process_service reports the sessions
whose engines changed status or got a new pending message (NoteEngineStatus,
process_service/rollup_notify.py), and each is rolled up again here (`Transitions.view`, which
writes the session status when it changed) and its list card rewritten, so lists, status
filters and search see the engines' state without anyone reading the session first.

The same report is the session's engine activity (`engine_activity_at_ms`, part of
lastActivityAt, docs/architecture.md "Session activity"): it rides along in the roll-up's
status write; the sessions of a batch whose status did not change are stamped together in one
bulk write. Reports are coalesced before they get here (one call per 50 ms window, each session
once), so the turn path pays nothing for it and a batch at most one store command."""

from __future__ import annotations

import logging
from typing import Any

from pymongo import UpdateOne

from session_service.lifecycle import OPEN
from session_service.store import SessionStore
from session_service.transitions import Transitions
from vance.clock import Clock
from vance.errors import grpc_errors
from vance.v1 import session_pb2 as spb

logger = logging.getLogger(__name__)


class Rollup:
    def __init__(self, cascades: Transitions, store: SessionStore, clock: Clock) -> None:
        self._cascades = cascades
        self._store = store
        self._clock = clock

    async def refresh(self, session_ids: list[str]) -> int:
        changed = 0
        now = self._clock.now_ms()
        stamps: list[str] = []
        for session_id in dict.fromkeys(session_ids):
            session = await self._store.session(session_id)
            if session is None:
                continue
            updated = await self._cascades.view(session, engine_activity_ms=now)
            if updated.status != session.status:
                changed += 1
                await self._store.cards.put(updated, now)
            elif session.status.value in OPEN and now > session.engine_activity_at_ms:
                stamps.append(session_id)
        if stamps:
            # $max: a batch that arrives late never moves the activity back.
            await self._store.sessions.bulk_write(
                [
                    UpdateOne(
                        {"_id": sid, "status": {"$in": list(OPEN)}},
                        {"$max": {"engine_activity_at_ms": now}},
                    )
                    for sid in stamps
                ],
                ordered=False,
            )
        return changed


class RollupRpcs:
    rollup: Rollup

    @grpc_errors
    async def NoteEngineStatus(
        self, request: spb.NoteEngineStatusRequest, context: Any
    ) -> spb.NoteEngineStatusResponse:
        return spb.NoteEngineStatusResponse(
            changed=await self.rollup.refresh(list(request.session_ids))
        )
