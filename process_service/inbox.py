"""Steering: every message lands in the target's inbox once, with a typed delivery outcome."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from process_service.models import SteerResult, TurnRef
from process_service.store import ProcessStore
from vance.clock import Clock
from vance.domain import HOLDING, WAKING, DeliveryOutcome, ProcessStatus, SteerMessage
from vance.errors import InvalidArgumentError
from vance.ids import new_id

logger = logging.getLogger(__name__)


class Dispatch(Protocol):
    def kick_doc(self, doc: dict[str, Any]) -> None: ...

    def can_start(self, engine: str, process_id: str = "") -> bool: ...

    async def steer_and_start(
        self, process_id: str, session_id: str, engine: str, msg: dict[str, Any], key: str
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
        # (process_service/rollup_notify.py). A message that starts a turn is a status change,
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
                doc = await self._store.get(pid)
                if session_id and (doc or {}).get("session_id") != session_id:
                    return SteerResult(DeliveryOutcome.REJECTED, reason=f"unknown target {pid!r}")
                return self._duplicate(doc, str(archived.get("id", "")))
        stored = {**message.model_dump(mode="json"), "keyed": explicit_key}
        engine = self._engines.get(pid)
        if engine is not None:
            ref = await self._dispatch.steer_and_start(pid, session_id, engine, stored, key)
            if ref is not None:
                # The reply tells the status the message found (the documented contract), as
                # the slower path does; the RUNNING event follows.
                found = {**ref.process, "status": ref.prev_status.value}
                return SteerResult(DeliveryOutcome.STARTED, message_id=message.id, process=found)
        doc = await self._store.push_pending(pid, stored, key, session_id=session_id)
        if doc is not None:
            self._remember_engine(pid, str(doc["engine"]))
            if self.on_pending is not None:
                self.on_pending(str(doc["session_id"]))
        if doc is None:
            current = await self._store.get(pid)
            if current is None or (session_id and current.get("session_id") != session_id):
                # A process of another session is reported as unknown, as a missing one is.
                return SteerResult(DeliveryOutcome.REJECTED, reason=f"unknown target {pid!r}")
            if current["status"] == ProcessStatus.CLOSED.value:
                return SteerResult(
                    DeliveryOutcome.REJECTED,
                    reason=f"process {current['name']!r} is closed",
                    process=current,
                )
            original: dict[str, Any] = next(
                (
                    m
                    for m in [*(current.get("pending") or []), *(current.get("owned") or [])]
                    if m.get("idempotency_key") == key
                ),
                {},
            )
            return self._duplicate(current, str(original.get("id", "")))
        status = ProcessStatus(doc["status"])
        if status in HOLDING:
            outcome = DeliveryOutcome.DEFERRED
        elif status in WAKING and not doc.get("lane"):
            # Started when a worker slot is free now; else it waits its turn in the queue.
            engine = str(doc["engine"])
            started = self._dispatch.can_start(engine, pid)
            outcome = DeliveryOutcome.STARTED if started else DeliveryOutcome.QUEUED
            self._dispatch.kick_doc(doc)
        else:
            # A turn runs (or the start turn is due): this message is handled next.
            outcome = DeliveryOutcome.QUEUED
            if status is ProcessStatus.INIT and not doc.get("lane"):
                self._dispatch.kick_doc(doc)
        return SteerResult(outcome, message_id=message.id, process=doc)

    def _remember_engine(self, process_id: str, engine: str) -> None:
        if len(self._engines) >= _MAX_ENGINES:
            self._engines.clear()  # only costs the next steer of each the slower path
        self._engines[process_id] = engine

    def forget(self, docs: list[dict[str, Any]]) -> None:
        """Processes of a suspended, closed or deleted session (ProcessStore.forget)."""
        for d in docs:
            self._engines.pop(str(d["_id"]), None)

    @staticmethod
    def _duplicate(doc: dict[str, Any] | None, message_id: str) -> SteerResult:
        status = ProcessStatus(doc["status"]) if doc else ProcessStatus.CLOSED
        outcome = DeliveryOutcome.DEFERRED if status in HOLDING else DeliveryOutcome.QUEUED
        return SteerResult(outcome, message_id=message_id, duplicate=True, process=doc)
