"""What Lanes announces to the rest of process_service, passed to Lanes at construction.

Lanes sits low (the dispatcher, the inbox and turns all build on it), yet two things it does
matter higher up: a write that put entries into a process's outbox (a process closed because
its turn failed for good), or a lane take that read a document still holding some, must reach
the outbox's delivery (outbox.py, through the inbox and so the dispatcher, which uses Lanes);
and every status change marks the session for the roll-up (rollup_notify.py). Lanes publishes
to these signals; the listeners subscribe from their own constructors. So no object is wired
after construction and the construction order has no cycle: Lanes -> LaneSignals <- Outbox ->
Inbox -> Dispatcher -> Lanes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from process_service.process_model import Process

# A process whose outbox holds entries, after the write that put them there.
OutboxWritten = Callable[[Process], Awaitable[None]]
# A process a lane take read that still holds outbox entries (a crash left them).
OutboxSeen = Callable[[Process], None]
# The id of the session whose process changed status.
StatusChanged = Callable[[str], None]


class LaneSignals:
    def __init__(self, *, on_status_change: StatusChanged | None = None) -> None:
        self._status: list[StatusChanged] = [on_status_change] if on_status_change else []
        self._written: list[OutboxWritten] = []
        self._seen: list[OutboxSeen] = []

    def subscribe_outbox(self, written: OutboxWritten, seen: OutboxSeen) -> None:
        self._written.append(written)
        self._seen.append(seen)

    async def outbox_written(self, process: Process) -> None:
        for listener in self._written:
            await listener(process)

    def outbox_seen(self, process: Process) -> None:
        for listener in self._seen:
            listener(process)

    def status_changed(self, session_id: str) -> None:
        for listener in self._status:
            listener(session_id)
