"""Tells session_service which sessions' engines changed status or got a new pending message,
so it keeps the sessions' RUNNING/IDLE roll-up and engine activity current
(session_service/lifecycle/engine_rollup.py). Off the turn's path: a status change or a pending
message
only marks the session; one background loop sends the marks in batches, WINDOW_S after the
first, so a quick turn's RUNNING and IDLE cost one call, and under load one call (two store
reads on each side) covers many sessions. A failed call keeps its marks for
the next round.

A second is what lists and status filters may lag behind the engines. It is also what keeps
the roll-up cheap under load: every session of a batch is a write of its (large) session
document when its status or activity stamp moved, and a session that turns over several
times a second would otherwise be rewritten several times a second.

The marks live in this replica's memory only. A crash loses at most those of the last window
(or of a longer session_service outage): so at start the replica marks every session whose
engines changed status in the last RECOVER_MS (`recent_sessions`, one read), and the roll-ups a
crash dropped are sent again (a roll-up of a session that did not change writes nothing)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from vance.internal.v1 import session_internal_pb2 as sipb
from vance.internal.v1 import session_internal_pb2_grpc

logger = logging.getLogger(__name__)

WINDOW_S = 1.0
RETRY_S = 1.0
CALL_TIMEOUT_S = 10.0
RECOVER_MS = 5 * 60_000


class RollupNotifier:
    def __init__(
        self,
        stub: session_internal_pb2_grpc.SessionInternalServiceAsyncStub,
        recent_sessions: Callable[[int], Awaitable[list[str]]] | None = None,
    ) -> None:
        """`recent_sessions(ms)`: the sessions whose engines changed in the last `ms`."""
        self._stub = stub
        self._recent = recent_sessions
        self._pending: set[str] = set()
        self._wake = asyncio.Event()

    def note(self, session_id: str) -> None:
        self._pending.add(session_id)
        self._wake.set()

    async def run(self) -> None:
        if self._recent is not None:
            try:
                for session_id in await self._recent(RECOVER_MS):
                    self.note(session_id)
            except Exception as exc:
                logger.warning("recent sessions for the roll-up not read: %s", exc)
        while True:
            await self._wake.wait()
            await asyncio.sleep(WINDOW_S)
            self._wake.clear()
            batch, self._pending = sorted(self._pending), set()
            try:
                await self._stub.NoteEngineStatus(
                    sipb.NoteEngineStatusRequest(session_ids=batch), timeout=CALL_TIMEOUT_S
                )
            except Exception as exc:
                logger.warning("session roll-up of %d sessions not sent: %s", len(batch), exc)
                self._pending.update(batch)
                await asyncio.sleep(RETRY_S)
                self._wake.set()
