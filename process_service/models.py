"""process_service's in-memory models: turns in flight and the results of operations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from process_service.chat_held import TurnChat
from process_service.memory import MemoryRecord
from vance.domain import DeliveryOutcome, LifecycleCall, ProcessStatus


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
    owned: list[dict[str, Any]]
    lease_until_ms: int
    highest_chat: int = 0
    engine_version: str = ""
    process: dict[str, Any] = field(default_factory=dict)
    chat_shift: int = 0
    done: bool = False
    # Extra process fields the commit writes (the engine's rolling chat history summary).
    commit_fields: dict[str, Any] = field(default_factory=dict)
    # The project's newest memory records (MemoryStore.project_newest); None: not looked up.
    project_memory: list[MemoryRecord] | None = None
    # What the assignment carries of the process's chat, and what the turn stored
    # (process_service/chat_held.py).
    chat: TurnChat = field(default_factory=TurnChat)

    @property
    def owned_keys(self) -> list[str]:
        return [str(m["idempotency_key"]) for m in self.owned]


@dataclass(frozen=True)
class TurnFacts:
    """What a committed turn's observers are told about (process_service/observations.py),
    kept in the commit's outbox entry so a delivery after a restart tells the same."""

    process_id: str
    session_id: str
    process_name: str
    turn_id: str
    call: LifecycleCall
    chat_base: int
    highest_chat: int

    @classmethod
    def of(cls, ref: TurnRef) -> TurnFacts:
        return cls(
            ref.process_id,
            ref.session_id,
            ref.process_name,
            ref.turn_id,
            ref.call,
            ref.chat_base,
            ref.highest_chat,
        )

    def to_doc(self) -> dict[str, Any]:
        return {**self.__dict__, "call": self.call.value}

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> TurnFacts:
        return cls(**{**doc, "call": LifecycleCall(doc["call"])})


@dataclass(frozen=True)
class SteerResult:
    outcome: DeliveryOutcome
    reason: str = ""
    message_id: str = ""
    duplicate: bool = False
    process: dict[str, Any] | None = None
