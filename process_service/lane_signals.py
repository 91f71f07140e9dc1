"""What Lanes announces to the rest of process_service, passed to Lanes at construction.

Lanes sits low (the dispatcher, the inbox and turns all build on it), yet two things it does
matter higher up: a process that closes because its turn failed for good must be reported to
its parent (parent_notify.py, through the inbox and so the dispatcher, which uses Lanes), and
every status change marks the session for the roll-up (rollup_notify.py). Lanes publishes to
these signals; the listeners subscribe from their own constructors. So no object is wired
after construction and the construction order has no cycle: Lanes -> LaneSignals <-
ParentNotify -> Inbox -> Dispatcher -> Lanes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

# The closed process document and the id of the turn that failed.
ClosedFailed = Callable[[dict[str, Any], str], Awaitable[None]]
# The id of the session whose process changed status.
StatusChanged = Callable[[str], None]


class LaneSignals:
    def __init__(self, *, on_status_change: StatusChanged | None = None) -> None:
        self._status: list[StatusChanged] = [on_status_change] if on_status_change else []
        self._closed_failed: list[ClosedFailed] = []

    def subscribe_closed_failed(self, listener: ClosedFailed) -> None:
        self._closed_failed.append(listener)

    async def closed_failed(self, doc: dict[str, Any], turn_id: str) -> None:
        for listener in self._closed_failed:
            await listener(doc, turn_id)

    def status_changed(self, session_id: str) -> None:
        for listener in self._status:
            listener(session_id)
