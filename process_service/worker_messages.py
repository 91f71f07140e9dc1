"""The messages of the worker stream (`WorkerService.WorkerConnect`), as typed values.

process_service/convert.py turns the protos into these and back; process_service/worker_stream.py
and process_service/dispatcher.py only ever see these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from process_service.models import TurnRef
from process_service.process_model import ChatRecord
from vance.domain import ChatRole, CloseReason, ProcessStatus

# ---- worker -> process_service ----


@dataclass(frozen=True)
class Hello:
    worker_id: str
    engines: dict[str, str]  # name -> version
    slots: int
    hooks: dict[str, list[str]] = field(default_factory=dict)  # engine -> SUSPEND, STOP


@dataclass(frozen=True)
class Heartbeat:
    turn_ids: list[str]


@dataclass(frozen=True)
class Draining:
    pass


@dataclass(frozen=True)
class Capacity:
    slots: int
    reason: str


@dataclass(frozen=True)
class ChatAppend:
    """The turn's `ordinal`-th chat message (vance/chat_ids.py)."""

    turn_id: str
    ordinal: int
    role: ChatRole
    content: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Chunk:
    turn_id: str
    role: ChatRole
    text: str


@dataclass(frozen=True)
class Progress:
    turn_id: str
    kind: str
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Commit:
    turn_id: str
    status: ProcessStatus
    close_reason: CloseReason | None = None
    summary: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    close_detail: str = ""
    # The engine's rolling chat history summary and the last chat number it covers.
    history_summary: tuple[str, int] | None = None


@dataclass(frozen=True)
class Failure:
    turn_id: str
    error: str


Report = ChatAppend | Chunk | Progress | Commit | Failure
FromWorker = Heartbeat | Draining | Capacity | Report

# ---- process_service -> worker ----


@dataclass(frozen=True)
class Welcome:
    lease_ms: int
    heartbeat_ms: int


@dataclass(frozen=True)
class Assign:
    ref: TurnRef
    trace: dict[str, str] | None = None  # the trace the turn joins (tracing on only)


@dataclass(frozen=True)
class Cancel:
    turn_id: str


@dataclass(frozen=True)
class Ack:
    """The commit of a turn is stored (ok), or was refused because the lane is no longer the
    turn's; either way the worker's slot is free again."""

    turn_id: str
    ok: bool
    error: str = ""
    # The turn's stored chat, when it is all of it (the worker then holds the chat through
    # `held_through`); None otherwise.
    chat: list[ChatRecord] | None = None
    held_through: int = 0


ToWorker = Welcome | Assign | Cancel | Ack
