"""What a worker reports about a turn: chat appends, stream chunks, progress, commit, failure;
and what a commit owes other processes (its parent, its observers) as outbox entries."""

from __future__ import annotations

import logging
from typing import Any

from process_service.events.log import CHAT_APPENDED, NOTICE, PROGRESS, EventLog, chat_event_data
from process_service.models import TurnRef
from process_service.process_model import ChatRecord, OutboxEntry, Process
from process_service.runtime.fault_points import FaultPoint
from process_service.runtime.lanes import Lanes
from process_service.runtime.outbox import Outbox, observe_entry
from process_service.runtime.parent_notify import close_entry, parent_entry
from process_service.runtime.worker_protocol import ChatAppend
from process_service.store.process_store import ProcessStore
from vance.chat_ids import chat_message_id, turn_message_id
from vance.domain import (
    HOOK_CALLS,
    ChatRole,
    CloseReason,
    ProcessEventType,
    ProcessStatus,
)

logger = logging.getLogger(__name__)

_CLOCK_MARGIN_MS = 5_000

# Reports that go to clients as frames of their own (docs/protocol.md), not as process-progress:
# a turn's tool calls. They stay in their session: a hub that observes the worker does not get
# them (each would cost the hub session a write; its side-channel frames are enough).
OWN_FRAMES = {
    "TOOL_CALL_STARTED": "tool-call-started",
    "TOOL_CALL_COMPLETED": "tool-call-completed",
}


class Turns:
    def __init__(
        self,
        store: ProcessStore,
        events: EventLog,
        lanes: Lanes,
        outbox: Outbox,
        *,
        exit_before_chat_events: str = "",
    ) -> None:
        """`exit_before_chat_events`: a test's fault hook (VANCE_FAULT_EXIT_BEFORE_CHAT_EVENTS):
        when that file exists, process_service exits once a turn's chat is stored, before its
        events are written."""
        self._store = store
        self._events = events
        self._lanes = lanes
        self.outbox = outbox
        self._fault = FaultPoint(exit_before_chat_events, "between a chat insert and its events")

    async def store_chat(self, ref: TurnRef, appends: list[ChatAppend]) -> list[ChatRecord | None]:
        """Stores the turn's chat appends once each, in one insert when none was stored before;
        returns, per append, the stored message whose event is to go out, or None when a redo
        of the turn found it stored and announced already. Numbers continue the process's chat."""
        numbers = [ref.chat_base + a.ordinal + ref.chat_shift for a in appends]
        records = [self._chat_record(ref, a, n) for a, n in zip(appends, numbers, strict=True)]
        inserted = await self._store.insert_chats(records)
        out: list[ChatRecord | None] = list(records[:inserted])
        if inserted:
            ref.highest_chat = max(ref.highest_chat, *numbers[:inserted])
        for a in appends[inserted:]:
            out.append(await self._store_one(ref, a))
        self._fault.hit()
        return out

    async def _store_one(self, ref: TurnRef, a: ChatAppend) -> ChatRecord | None:
        """One append after an insert met an existing id: a redo finds its own message (None),
        or a message an earlier attempt wrote beyond this one's, which it skips."""
        turn_key = turn_message_id(ref.turn_id, a.ordinal)
        n = ref.chat_base + a.ordinal + ref.chat_shift
        while True:
            record = self._chat_record(ref, a, n)
            if await self._store.insert_chats([record]):
                ref.highest_chat = max(ref.highest_chat, n)
                return record
            existing = await self._store.get_chat(record.id)
            if existing is not None and existing.turn_key == turn_key:
                ref.highest_chat = max(ref.highest_chat, n)
                # An earlier attempt stored it; if that attempt ended before its event was
                # written, the message goes out now (once: the event is looked up first).
                return None if await self._announced(existing) else existing
            ref.chat_shift += 1
            n += 1

    async def _announced(self, record: ChatRecord) -> bool:
        """Whether the message's chat event is in its session's stream. Its event was written
        after it was stored, so the search stops at events from before then (less a margin for
        another replica's clock)."""
        return await self._store.has_event_since(
            record.session_id,
            record.created_at_ms - _CLOCK_MARGIN_MS,
            lambda e: e.kind == CHAT_APPENDED and e.data.get("chat_message_id") == record.id,
        )

    def _chat_record(self, ref: TurnRef, a: ChatAppend, n: int) -> ChatRecord:
        return ChatRecord(
            id=chat_message_id(ref.process_id, n),
            turn_key=turn_message_id(ref.turn_id, a.ordinal),
            session_id=ref.session_id,
            think_process_id=ref.process_id,
            process_name=ref.process_name,
            role=a.role,
            content=a.content,
            meta=a.meta,
            created_at_ms=self._lanes.clock.now_ms(),
        )

    def chat_event(self, ref: TurnRef, record: ChatRecord) -> None:
        """Queues the event of a stored chat message (the caller flushes the session's events:
        several reports of a turn share one write)."""
        self._events.submit(ref.session_id, CHAT_APPENDED, chat_event_data(record))

    def chunk(self, ref: TurnRef, role: ChatRole, chunk: str, *, only_now: bool = False) -> bool:
        """Hands a stream chunk to the session's stream: at once when nothing of the session
        is queued before it (EventLog.chunk, True), else in order with the next flush, or,
        `only_now`, not at all (False either way)."""
        return self._events.chunk(
            ref.session_id,
            {
                "think_process_id": ref.process_id,
                "process_name": ref.process_name,
                "role": role.value,
                "chunk": chunk,
            },
            only_now=only_now,
        )

    # `payload`: the engine's JSON, passed on to clients as it was sent.
    async def progress(self, ref: TurnRef, kind: str, payload: dict[str, Any]) -> None:
        frame = OWN_FRAMES.get(kind)
        if frame is not None:
            data = {"processId": ref.process_id, "processName": ref.process_name, **payload}
            self._events.submit(ref.session_id, NOTICE, {"type": frame, "data": data})
            return
        self._events.submit(
            ref.session_id,
            PROGRESS,
            {
                "think_process_id": ref.process_id,
                "process_name": ref.process_name,
                "engine": ref.engine,
                "parent_process_id": ref.parent_process_id,
                "kind": kind,
                "payload": payload,
            },
        )
        observers = self.outbox.observations
        if observers is not None and ref.process.observed:
            await observers.forward_progress(ref, kind, payload)

    async def commit(
        self,
        ref: TurnRef,
        status: ProcessStatus,
        close_reason: CloseReason | None,
        summary: str,
        payload: dict[str, Any],  # the engine's JSON
        close_detail: str = "",
    ) -> Process | None:
        if ref.call in HOOK_CALLS:
            # A hook's end: the lane is released, the status and the parent are left alone.
            return await self._lanes.end_hook(ref)
        owed = self._owed(ref, status, close_reason, summary, payload)
        process = await self._lanes.commit(ref, status, close_reason, close_detail, outbox=owed)
        if process is not None:
            self._events.end_chunks(ref.session_id, ref.process_id)
        if process is not None and owed:
            await self.outbox.deliver(process)
        observers = self.outbox.observations
        if process is not None and observers is not None and process.observed:
            if not ref.process.observed:
                # Observed since this turn started (Eddie's project_create observes a chat
                # whose start turn runs): no entry was written, so it is told at once.
                await observers.on_commit(ref.facts(), process, summary, payload)
        return process

    def _owed(
        self,
        ref: TurnRef,
        status: ProcessStatus,
        close_reason: CloseReason | None,
        summary: str,
        payload: dict[str, Any],  # the engine's JSON
    ) -> list[OutboxEntry]:
        """The outbox entries a commit writes with itself (process_service/runtime/outbox.py): the
        parent's event when a child closes or blocks, the observers' when some observe it.
        An ordinary turn owes nothing, and its commit stays one write."""
        owed: list[OutboxEntry] = []
        if ref.parent_process_id:
            if status is ProcessStatus.CLOSED:
                owed.append(
                    close_entry(close_reason, ref.turn_id, summary=summary, payload=payload)
                )
            elif status is ProcessStatus.BLOCKED:
                owed.append(
                    parent_entry(
                        ProcessEventType.BLOCKED,
                        key=f"{ref.turn_id}:blocked",
                        summary=summary,
                        payload=payload,
                    )
                )
        if self.outbox.observations is not None and ref.process.observed:
            reason = (close_reason or CloseReason.DONE) if status is ProcessStatus.CLOSED else None
            owed.append(observe_entry(ref.facts(), status, reason, summary, payload))
        return owed
