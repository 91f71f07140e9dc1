"""Turn outcomes for failures that no retry can fix.

A worker process (one with a parent) whose model tier is not configured would fail every
attempt the same way and close STALE after the retries, with a stack trace as its detail. It
closes at once instead, INCOMPLETE (the parent gets a FAILED event) with a summary that says
what to configure. A process without a parent (a chat) is the engine's to handle: Arthur tells
the user in the chat and stays open.
"""

from __future__ import annotations

from engine_worker.engine import TurnOutcome
from vance.domain import CloseReason, ProcessStatus, ThinkProcess
from vance.llm import ModelNotConfiguredError


def not_configured(process: ThinkProcess, exc: ModelNotConfiguredError) -> TurnOutcome | None:
    if not process.parent_process_id:
        return None
    text = f"{process.name} could not run: {exc.message}"
    return TurnOutcome(
        ProcessStatus.CLOSED, CloseReason.INCOMPLETE, close_detail=text, summary=text
    )
