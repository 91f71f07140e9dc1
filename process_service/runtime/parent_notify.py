"""What a child's close or block owes its parent, as outbox entries (process_service/runtime/outbox.py).

Every way a child ends that its parent must hear of writes the entry in the same store write
as the transition itself: a commit CLOSED or BLOCKED (`Lanes.commit`), a turn that failed its
last attempt or whose lease ran out once too often (`Lanes.close_failed`, STALE -> FAILED), a
stop (`Processes.stop`). The message is built when the entry is delivered, from the child's
stored document (its parent and name never change), with an idempotency key derived from the
child's turn, so whichever path closes the child and however often the entry is delivered, the
parent's inbox stores one event.
"""

from __future__ import annotations

from typing import Any

from process_service.process_model import ParentEntry, Process
from vance.domain import (
    PARENT_EVENT_FOR_CLOSE,
    CloseReason,
    ProcessEvent,
    ProcessEventType,
)
from vance.ids import new_id


def parent_entry(
    event_type: ProcessEventType,
    *,
    key: str,
    summary: str = "",
    payload: dict[str, Any] | None = None,  # the engine's JSON
    unless_stopped_by: str = "",
) -> ParentEntry:
    """An entry that steers the mapped ProcessEvent into the parent's inbox. `key` is unique
    per child (`<turn>:close`); `unless_stopped_by`: no event when the parent is who stopped
    the child (REFERENCE.md)."""
    return ParentEntry(
        id=new_id("ob"),
        type=event_type,
        key=key,
        summary=summary,
        payload=payload or {},
        unless_stopped_by=unless_stopped_by,
    )


def close_entry(
    close_reason: CloseReason | None,
    turn_id: str,
    *,
    summary: str = "",
    payload: dict[str, Any] | None = None,  # the engine's JSON
) -> ParentEntry:
    """The entry of a child closed by its turn `turn_id`: the same key whichever path closed
    it (a commit or `Lanes.close_failed`)."""
    event = PARENT_EVENT_FOR_CLOSE[close_reason or CloseReason.DONE]
    return parent_entry(event, key=f"{turn_id}:close", summary=summary, payload=payload)


def stop_entry(stopped_by: str) -> ParentEntry:
    """What a stopped child owes its parent (`Processes.stop`)."""
    return parent_entry(ProcessEventType.STOPPED, key="stopped", unless_stopped_by=stopped_by)


def parent_message(child: Process, entry: ParentEntry) -> tuple[str, ProcessEvent] | None:
    """The parent and the event an entry owes it; None when there is nobody to tell."""
    parent = child.parent_process_id
    if not parent or parent == entry.unless_stopped_by:
        return None
    event_type = entry.type
    message = ProcessEvent(
        idempotency_key=f"{child.id}:{entry.key}",
        sender_process_id=child.id,
        source_process_id=child.id,
        source_process_name=child.name,
        type=event_type,
        human_summary=entry.summary or _default_summary(child, event_type),
        payload=dict(entry.payload),
    )
    return parent, message


def _default_summary(child: Process, event_type: ProcessEventType) -> str:
    detail = child.close_detail
    text = f"process {child.name!r} {event_type.value.lower()}"
    return f"{text}: {detail}" if detail else text
