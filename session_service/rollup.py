"""The RUNNING/IDLE roll-up kept current (seed 002 §4): process_service reports the sessions
whose engines changed status (NoteEngineStatus, process_service/rollup_notify.py), and each is
rolled up again here (`Transitions.view`, which writes the session status when it changed)
and its list card rewritten, so lists, status filters and search see the engines' state without
anyone reading the session first."""

from __future__ import annotations

import logging
from typing import Any

from session_service.lifecycle import OPEN, rollup
from session_service.store import SessionStore
from session_service.transitions import Transitions
from vance.clock import Clock
from vance.errors import grpc_errors
from vance.v1 import session_pb2 as spb

logger = logging.getLogger(__name__)

BATCH = 500


class Rollup:
    def __init__(self, cascades: Transitions, store: SessionStore, clock: Clock) -> None:
        self._cascades = cascades
        self._store = store
        self._clock = clock

    async def refresh(self, session_ids: list[str]) -> int:
        """A batch costs two reads here and one call to process_service (two reads there),
        whatever its size; only sessions whose roll-up changed are written."""
        ids = list(dict.fromkeys(session_ids))
        changed = 0
        for i in range(0, len(ids), BATCH):
            sessions = [
                s
                for s in await self._store.sessions_by_ids(ids[i : i + BATCH])
                if s.status.value in OPEN
            ]
            if not sessions:
                continue
            states = await self._cascades.processes.engine_states([s.session_id for s in sessions])
            for session in sessions:
                status = rollup(states.get(session.session_id, []))
                if status == session.status.value:
                    continue
                updated = await self._cascades.cas(
                    session.session_id, {"status": session.status.value}, {"status": status}
                )
                if updated is not None:
                    changed += 1
                    await self._store.cards.put(updated, self._clock.now_ms())
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
