"""process_service's in-memory models: turns in flight and the results of operations."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from process_service.knowledge.memory_store import MemoryRecord
from process_service.process_model import InboxMessage, Process, TurnFacts
from process_service.runtime.chat_held import TurnChat
from vance.domain import HOOK_CALLS, DeliveryOutcome, LifecycleCall, ProcessStatus


class NextTurn(Enum):
    """What `Dispatcher.next_turn` found for a process."""

    NONE = "none"  # no turn is due (or this replica runs it already)
    STARTS = "starts"  # queued, and a worker has a free slot that no queued turn waits for
    QUEUED = "queued"  # queued behind others, or waiting for a worker slot
    LATER = "later"  # a failed turn, redone once its backoff has passed


@dataclass
class TurnRef:
    """A turn this replica handed to one of its workers."""

    turn_id: str
    attempt: int
    process_id: str
    session_id: str
    process_name: str
    engine: str
    parent_process_id: str
    worker_id: str
    call: LifecycleCall
    prev_status: ProcessStatus
    chat_base: int
    owned: list[InboxMessage]
    lease_until_ms: int
    # The process as its lane take read it (before the take's write, or after it for a redo
    # or a hook); the worker is shown `status`.
    process: Process
    highest_chat: int = 0
    engine_version: str = ""
    chat_shift: int = 0
    done: bool = False
    # What the commit writes besides the turn's end: the engine's rolling chat history
    # summary and the last chat number it covers.
    history_summary: tuple[str, int] | None = None
    # The recipe snapshot (free-form recipe JSON), read when the turn is handed over.
    recipe_snapshot: dict[str, Any] = field(default_factory=dict)
    # The project's newest memory records (MemoryStore.project_newest); None: not looked up.
    project_memory: list[MemoryRecord] | None = None
    # What the assignment carries of the process's chat, and what the turn stored
    # (process_service/runtime/chat_held.py).
    chat: TurnChat = field(default_factory=TurnChat)

    @property
    def status(self) -> ProcessStatus:
        """The status the worker is shown: RUNNING, or the status as it is for a hook task."""
        return self.process.status if self.call in HOOK_CALLS else ProcessStatus.RUNNING

    @property
    def owned_keys(self) -> list[str]:
        return [m.key for m in self.owned]

    def facts(self) -> TurnFacts:
        return TurnFacts(
            self.process_id,
            self.session_id,
            self.process_name,
            self.turn_id,
            self.call,
            self.chat_base,
            self.highest_chat,
        )


@dataclass(frozen=True)
class SteerResult:
    outcome: DeliveryOutcome
    reason: str = ""
    message_id: str = ""
    duplicate: bool = False
    process: Process | None = None
