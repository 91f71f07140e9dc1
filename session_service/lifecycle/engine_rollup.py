"""The RUNNING/IDLE roll-up kept current (seed 002 §4): process_service reports the sessions
whose engines changed status or got a new pending message (NoteEngineStatus,
process_service/lifecycle/rollup_notify.py), and each is rolled up again here and written when it changed,
with its list card, so lists, status filters and search see the engines' state without anyone
reading the session first.

The same report is the session's engine activity (`engine_activity_at_ms`, docs/architecture.md
"Session activity"): it rides along in the roll-up's status write; the sessions of a batch
whose status did not change and whose stamp is STAMP_EVERY_MS old are stamped together in one
bulk write (a RUNNING one's once it is half its idle timeout old, `_stamp_every`). Reports
are coalesced
before they get here (one call per window, each session once), so the turn path pays nothing
for it and a batch at most one store command."""

from __future__ import annotations

import logging

import grpc

from session_service.domain.models import OPEN, Guard, Session, SessionFields, SessionStatus
from session_service.lifecycle.rules import rollup
from session_service.lifecycle.transitions import Transitions
from session_service.store.session_store import SessionStore
from vance.clock import Clock
from vance.errors import grpc_errors
from vance.internal.v1 import session_internal_pb2 as sipb

logger = logging.getLogger(__name__)

BATCH = 500
# The engine activity stamp of a session whose status did not change is rewritten at most this
# often: it only feeds the idle sweep, whose timeouts are 30 s and longer, and each stamp is a
# rewrite of the whole session document.
STAMP_EVERY_MS = 5_000


class Rollup:
    def __init__(self, cascades: Transitions, store: SessionStore, clock: Clock) -> None:
        self._cascades = cascades
        self._store = store
        self._clock = clock

    async def refresh(self, session_ids: list[str]) -> int:
        """A batch costs two reads here and one call to process_service (two reads there),
        whatever its size; the sessions whose roll-up changed are written in one bulk of
        compare-and-sets with their list cards in one more, plus one write that stamps the
        engine activity of the others."""
        ids = list(dict.fromkeys(session_ids))
        changed = 0
        now = self._clock.now_ms()
        stamps: list[str] = []
        for i in range(0, len(ids), BATCH):
            sessions = [
                s for s in await self._store.sessions_by_ids(ids[i : i + BATCH]) if s.status in OPEN
            ]
            if not sessions:
                continue
            states = await self._cascades.processes.engine_states([s.session_id for s in sessions])
            moves: list[tuple[Session, SessionFields]] = []
            for session in sessions:
                status = rollup(states.get(session.session_id, []))
                if status is session.status:
                    if now - session.engine_activity_at_ms >= self._stamp_every(session):
                        stamps.append(session.session_id)
                    continue
                fields: SessionFields = {"status": status}
                if now > session.engine_activity_at_ms:
                    fields["engine_activity_at_ms"] = now
                moves.append((session, fields))
            changed += await self._move(moves, now)
        if stamps:
            # $max: a batch that arrives late never moves the activity back.
            await self._store.stamp_engine_activity(stamps, now, Guard(statuses=OPEN))
        return changed

    def _stamp_every(self, session: Session) -> int:
        """How old a session's engine activity stamp may get before a batch that finds its
        status unchanged rewrites it. An IDLE session: STAMP_EVERY_MS. A RUNNING one: half the
        quiet time the idle sweep waits for (its idle timeout, at least the sweep's pre-filter;
        at least STAMP_EVERY_MS): the idle sweep never suspends a session with a busy engine
        (sweepers.py `idle` tests what the roll-up tests), and when its engines go quiet the
        roll-up's move to IDLE carries the stamp, so the stamp of a RUNNING session only has to
        be young enough that a sweep in the second before that move (engines quiet, the move
        not yet written) does not find it quiet for its whole timeout. At a hosted model's pace
        most sessions of a batch are in a turn, and each stamp is a rewrite of the session
        document."""
        if session.status is SessionStatus.RUNNING:
            quiet = self._cascades.idle_due(session) - session.activity_at_ms
            return max(STAMP_EVERY_MS, quiet // 2)
        return STAMP_EVERY_MS

    async def _move(self, moves: list[tuple[Session, SessionFields]], now: int) -> int:
        """One compare-and-set per session (on the status it was read with) in one bulk write,
        then their cards. When every one held, the cards come from the sessions as written;
        otherwise the sessions are read again and only those that hold the new status get a
        card (a lost compare-and-set means another transition wrote its own)."""
        if not moves:
            return 0
        matched = await self._store.move_statuses(moves)
        # As written: the fields are typed already (model_copy does not validate).
        moved = [s.model_copy(update=fields) for s, fields in moves]
        if matched < len(moves):
            wanted = {s.session_id: s.status for s in moved}
            moved = [
                s
                for s in await self._store.sessions_by_ids(list(wanted))
                if s.status == wanted[s.session_id]
            ]
        await self._store.cards.put_many(((s, "") for s in moved), now)
        return len(moved)


class RollupRpcs:
    rollup: Rollup

    @grpc_errors
    async def NoteEngineStatus(
        self,
        request: sipb.NoteEngineStatusRequest,
        context: grpc.aio.ServicerContext[
            sipb.NoteEngineStatusRequest, sipb.NoteEngineStatusResponse
        ],
    ) -> sipb.NoteEngineStatusResponse:
        return sipb.NoteEngineStatusResponse(
            changed=await self.rollup.refresh(list(request.session_ids))
        )
