"""Parent notification: the event a parent gets when its child closes, blocks or is stopped.

A commit that closes or blocks the child notifies here (turns.py); so does a stop
(processes.py) and a close outside a worker's commit: a turn that fails its last attempt, or
whose lease runs out once too often, closes the process STALE in `Lanes.close_failed`, which
signals it (lane_signals.py). The parent must hear of each like of any other close (the mapped
event: STALE -> FAILED), or a parent that promised to report back waits forever. The
idempotency key is the one a commit of the same turn would use, so whichever path closes the
child, the parent gets one event.
"""

from __future__ import annotations

import logging
from typing import Any

from process_service.inbox import Inbox
from process_service.lane_signals import LaneSignals
from vance.domain import PARENT_EVENT_FOR_CLOSE, CloseReason, ProcessEvent, ProcessEventType

logger = logging.getLogger(__name__)


class ParentNotify:
    def __init__(self, inbox: Inbox, signals: LaneSignals) -> None:
        self._inbox = inbox
        signals.subscribe_closed_failed(self.closed_failed)

    async def closed_failed(self, doc: dict[str, Any], turn_id: str) -> None:
        reason = CloseReason(doc.get("close_reason") or CloseReason.STALE.value)
        await self.notify(doc, PARENT_EVENT_FOR_CLOSE[reason], "", {}, key=f"{turn_id}:close")

    async def on_stopped(self, child: dict[str, Any], stopped_by: str) -> None:
        # A parent that stopped its child needs no STOPPED event back.
        if stopped_by and stopped_by == child.get("parent_process_id"):
            return
        await self.notify(child, ProcessEventType.STOPPED, "", {}, key="stopped")

    async def notify(
        self,
        child: dict[str, Any],
        event_type: ProcessEventType,
        summary: str,
        payload: dict[str, Any],
        *,
        key: str,
    ) -> None:
        parent = child.get("parent_process_id")
        if not parent:
            return
        message = ProcessEvent(
            idempotency_key=f"{child['_id']}:{key}",
            sender_process_id=str(child["_id"]),
            source_process_id=str(child["_id"]),
            source_process_name=str(child.get("name", "")),
            type=event_type,
            human_summary=summary or _default_summary(child, event_type),
            payload=payload,
        )
        result = await self._inbox.steer(str(parent), "", "", message)
        logger.debug("notified parent %s of %s: %s", parent, event_type, result.outcome)


def _default_summary(child: dict[str, Any], event_type: ProcessEventType) -> str:
    detail = child.get("close_detail") or ""
    text = f"process {child.get('name', '')!r} {event_type.value.lower()}"
    return f"{text}: {detail}" if detail else text
