"""Parent notification for the ways a child closes outside a worker's commit.

A turn that fails its last attempt, or whose lease runs out once too often, closes the process
STALE in `Lanes.close_failed`, not through a commit. The parent must hear of it like of any other
close (the mapped event: STALE -> FAILED), or a parent that promised to report back waits
forever. The idempotency key is the one a commit of the same turn would use, so whichever path
closes the child, the parent gets one event.
"""

from __future__ import annotations

from typing import Any

from process_service.turns import Turns
from vance.domain import PARENT_EVENT_FOR_CLOSE, CloseReason


class ParentNotify:
    def __init__(self, turns: Turns) -> None:
        self._turns = turns

    async def closed_failed(self, doc: dict[str, Any], turn_id: str) -> None:
        reason = CloseReason(doc.get("close_reason") or CloseReason.STALE.value)
        await self._turns.notify_parent(
            doc, PARENT_EVENT_FOR_CLOSE[reason], "", {}, key=f"{turn_id}:close"
        )
