"""Tells session_service which sessions' engines changed status, so it keeps the sessions'
RUNNING/IDLE roll-up current (session_service/rollup.py). Off the turn's path: a status change
only marks the session; one background loop sends the marks in batches, WINDOW_S after the
first, so a quick turn's RUNNING and IDLE cost one call, and under load one call (two store
reads on each side) covers many sessions. A failed call keeps its marks for
the next round."""

from __future__ import annotations

import asyncio
import logging

from vance.v1 import session_pb2 as spb
from vance.v1 import session_pb2_grpc

logger = logging.getLogger(__name__)

WINDOW_S = 0.2
RETRY_S = 1.0
CALL_TIMEOUT_S = 10.0


class RollupNotifier:
    def __init__(self, stub: session_pb2_grpc.SessionServiceAsyncStub) -> None:
        self._stub = stub
        self._pending: set[str] = set()
        self._wake = asyncio.Event()

    def note(self, session_id: str) -> None:
        self._pending.add(session_id)
        self._wake.set()

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(WINDOW_S)
            self._wake.clear()
            batch, self._pending = sorted(self._pending), set()
            try:
                await self._stub.NoteEngineStatus(
                    spb.NoteEngineStatusRequest(session_ids=batch), timeout=CALL_TIMEOUT_S
                )
            except Exception as exc:
                logger.warning("session roll-up of %d sessions not sent: %s", len(batch), exc)
                self._pending.update(batch)
                await asyncio.sleep(RETRY_S)
                self._wake.set()
