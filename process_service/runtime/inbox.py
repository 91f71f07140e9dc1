"""Steering: every message lands in the target's inbox once, with a typed delivery outcome."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from process_service.models import NextTurn, SteerResult, TurnRef
from process_service.process_model import InboxMessage, Process
from process_service.store.documents import message_of
from process_service.store.process_store import ProcessStore
from vance.clock import Clock
from vance.domain import DeliveryOutcome, SteerMessage
from vance.errors import InvalidArgumentError
from vance.ids import new_id

logger = logging.getLogger(__name__)


class Dispatch(Protocol):
    def next_turn(self, process: Process) -> NextTurn: ...

    async def steer_and_start(
        self, process_id: str, session_id: str, engine: str, msg: InboxMessage
    ) -> TurnRef | None: ...


_MAX_ENGINES = 100_000


class Inbox:
    def __init__(
        self,
        store: ProcessStore,
        clock: Clock,
        dispatch: Dispatch,
        *,
        on_pending: Callable[[str], None] | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._dispatch = dispatch
        # A process's engine never changes: known from an earlier steer, a steer of a waiting
        # process can be delivered and started in one write (Dispatcher.steer_and_start).
        self._engines: dict[str, str] = {}
        # Called with the session id when a message is stored as pending: session activity
        # (process_service/lifecycle/rollup_notify.py). A message that starts a turn is a status change,
        # which Lanes reports already.
        self.on_pending = on_pending

    async def resolve(self, process_id: str, session_id: str, name: str) -> str | None:
        if process_id:
            return process_id  # the session check is part of the push (push_pending)
        if session_id and name:
            return await self._store.lookup_name(session_id, name)
        raise InvalidArgumentError(
            "name the target by process id, or by session id and process name",
            reason="target_required",
        )

    async def steer(
        self, process_id: str, session_id: str, name: str, message: SteerMessage
    ) -> SteerResult:
        pid = await self.resolve(process_id, session_id, name)
        if pid is None:
            return SteerResult(DeliveryOutcome.REJECTED, reason=f"unknown target {name!r}")
        explicit_key = bool(message.idempotency_key)
        message.id = new_id("msg")
        message.idempotency_key = message.idempotency_key or message.id
        message.target_process_id = pid
        message.at_ms = message.at_ms or self._clock.now_ms()
        key = message.idempotency_key
        if explicit_key:
            archived = await self._store.archived(pid, key)
            if archived is not None:
                # Handled already: the same key is stored and handled once.
                process = await self._store.get(pid)
                if session_id and (process is None or process.session_id != session_id):
                    return SteerResult(DeliveryOutcome.REJECTED, reason=f"unknown target {pid!r}")
                return self._duplicate(process, archived.id)
        stored = message_of(message, keyed=explicit_key)
        engine = self._engines.get(pid)
        if engine is not None:
            ref = await self._dispatch.steer_and_start(pid, session_id, engine, stored)
            if ref is not None:
                # The reply tells the process as the message found it (the documented
                # contract), as the slower path does; the RUNNING event follows.
                return SteerResult(
                    DeliveryOutcome.STARTED, message_id=message.id, process=ref.process
                )
        process = await self._store.push_pending(pid, stored, session_id=session_id)
        if process is None:
            current = await self._store.get(pid)
            if current is None or (session_id and current.session_id != session_id):
                # A process of another session is reported as unknown, as a missing one is.
                return SteerResult(DeliveryOutcome.REJECTED, reason=f"unknown target {pid!r}")
            if current.closed:
                return SteerResult(
                    DeliveryOutcome.REJECTED,
                    reason=f"process {current.name!r} is closed",
                    process=current,
                )
            original = next(
                (m.id for m in (*current.pending, *current.owned) if m.key == key),
                "",
            )
            if not original:
                # The turn that drained it committed between the write and this read: it is
                # in the archive now, and the reply still names it (docs/protocol.md).
                archived = await self._store.archived(pid, key)
                original = archived.id if archived is not None else ""
            return self._duplicate(current, original)
        self._remember_engine(pid, process.engine)
        if self.on_pending is not None:
            self.on_pending(process.session_id)
        if process.holding:
            return SteerResult(DeliveryOutcome.DEFERRED, message_id=message.id, process=process)
        # The message starts a turn of a waiting process when a worker slot is free now; else
        # it waits its turn in the queue, or is handled by the turn that runs (or by the start
        # turn that is due).
        next_turn = self._dispatch.next_turn(process)
        started = next_turn is NextTurn.STARTS and process.waking
        outcome = DeliveryOutcome.STARTED if started else DeliveryOutcome.QUEUED
        return SteerResult(outcome, message_id=message.id, process=process)

    def _remember_engine(self, process_id: str, engine: str) -> None:
        if len(self._engines) >= _MAX_ENGINES:
            self._engines.clear()  # only costs the next steer of each the slower path
        self._engines[process_id] = engine

    def forget(self, processes: list[Process]) -> None:
        """Processes of a suspended, closed or deleted session (ProcessStore.forget)."""
        for p in processes:
            self._engines.pop(p.id, None)

    @staticmethod
    def _duplicate(process: Process | None, message_id: str) -> SteerResult:
        holding = process is not None and process.holding
        outcome = DeliveryOutcome.DEFERRED if holding else DeliveryOutcome.QUEUED
        return SteerResult(outcome, message_id=message_id, duplicate=True, process=process)
