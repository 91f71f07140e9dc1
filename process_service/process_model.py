"""The process document as typed records: a process, its lane, its inbox messages, its chat.

Plain slotted dataclasses, built from and written to the store only by the store modules
(store.py, store_docs.py, store_transitions.py: the only ones that know the documents' field
names and update operators). A record is never changed once built: `dataclasses.replace`
makes a changed copy. The records a turn builds (Process twice, its Lane, its messages and
chat) are not `frozen`, because a frozen dataclass's __init__ sets each field through
object.__setattr__: for Process's 45 fields that made it several times as costly to build
(about 8-16 µs instead of 2.4-4.5 µs on the loaded 2-core machine), twice per turn. The rarer
records (outbox entries, turn facts) are frozen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from vance.domain import (
    HOLDING,
    WAKING,
    ChatRole,
    CloseReason,
    LifecycleCall,
    ProcessEventType,
    ProcessStatus,
    SteerMessage,
    ThinkProcess,
    steer_from_dict,
)


@dataclass(slots=True)
class Lane:
    """The turn that holds a process (docs/architecture.md "Lanes"): at most one at a time."""

    turn_id: str
    attempt: int
    worker_id: str
    lease_until_ms: int
    # A hook task's kind (SUSPEND, STOP, PEER) when the lane runs one instead of a turn.
    hook: LifecycleCall | None = None
    # Why the last attempt failed (the close detail when the attempts run out).
    last_error: str = ""


class MessageKind(StrEnum):
    """SteerMessage.kind (vance/domain.py), the kinds process_service tells apart."""

    USER_CHAT_INPUT = "USER_CHAT_INPUT"
    PROCESS_EVENT = "PROCESS_EVENT"
    REPLY = "REPLY"
    TOOL_RESULT = "TOOL_RESULT"
    EXTERNAL_COMMAND = "EXTERNAL_COMMAND"
    INBOX_ANSWER = "INBOX_ANSWER"
    PEER_EVENT = "PEER_EVENT"


@dataclass(slots=True)
class InboxMessage:
    """A steer message held on a process (pending, or owned by the running turn)."""

    id: str
    key: str  # the idempotency key
    kind: MessageKind
    # Whether the sender chose the key (a resend must be refused); a generated key is never
    # sent twice.
    keyed: bool
    # The message's JSON form (SteerMessage.model_dump(mode="json")), as stored and as handed
    # to engines: a JSON boundary, validated into a SteerMessage when read (`steer`).
    body: dict[str, Any]  # JSON (see above)

    def steer(self) -> SteerMessage:
        return steer_from_dict(self.body)


@dataclass(frozen=True, slots=True)
class EngineState:
    """What session_service's roll-up reads of a process (`ListSessionEngines`): read with
    nothing else, once a second for every session whose engines moved."""

    process_id: str
    session_id: str
    status: ProcessStatus
    pending_count: int


@dataclass(frozen=True, slots=True)
class TurnFacts:
    """What a committed turn's observers are told about (process_service/lifecycle/observations.py),
    kept in the commit's outbox entry so a delivery after a restart tells the same."""

    process_id: str
    session_id: str
    process_name: str
    turn_id: str
    call: LifecycleCall
    chat_base: int
    highest_chat: int


@dataclass(frozen=True, slots=True)
class ParentEntry:
    """An outbox entry (process_service/runtime/outbox.py): the event a child's close or block owes
    its parent (process_service/runtime/parent_notify.py)."""

    id: str
    type: ProcessEventType
    key: str  # unique per child: `<turn>:close`, `<turn>:blocked`, `stopped`
    summary: str = ""
    # The engine's JSON, passed on to the parent as it was sent.
    payload: dict[str, Any] = field(default_factory=dict)
    unless_stopped_by: str = ""  # no event when the parent is who stopped the child


@dataclass(frozen=True, slots=True)
class ObserveEntry:
    """An outbox entry: the observers of a committed turn are to hear of it, with the status
    and close reason the commit set (a later delivery tells what the commit did)."""

    id: str
    turn: TurnFacts
    status: ProcessStatus
    close_reason: CloseReason | None
    summary: str
    # The engine's JSON, passed on to the observers as it was sent.
    payload: dict[str, Any] = field(default_factory=dict)


OutboxEntry = ParentEntry | ObserveEntry


@dataclass(slots=True)
class Process:
    """A process (think engine instance) as stored; `recipe_snapshot` is filled only where read
    with it (ProcessStore.snapshot keeps it in a collection of its own)."""

    id: str
    session_id: str
    name: str
    engine: str
    status: ProcessStatus = ProcessStatus.INIT
    tenant_id: str = ""
    project_id: str = ""
    title: str = ""
    goal: str = ""
    engine_version: str = ""
    recipe_name: str = ""
    parent_process_id: str = ""
    owner_user_id: str = ""
    close_reason: CloseReason | None = None
    close_detail: str = ""
    # The caller's recipe parameters: free-form JSON from the recipe and the caller.
    params: dict[str, Any] = field(default_factory=dict)
    created_at_ms: int = 0
    updated_at_ms: int = 0
    chat_history_summary: str = ""
    chat_history_summary_through: int = 0
    last_suspend_cause: str = ""
    persistent_tool_calls: int = 0
    connection_profile: str = ""
    # The recipe snapshot copied at spawn: free-form recipe JSON.
    recipe_snapshot: dict[str, Any] = field(default_factory=dict)
    # ---- the runtime state (process_service/runtime/lanes.py) ----
    wake: bool = False  # a turn is wanted
    started: bool = False  # the engine ran its start turn
    chat_count: int = 0  # the chat messages committed
    lane: Lane | None = None
    hook: LifecycleCall | None = None  # a hook task asked for (SUSPEND, STOP, PEER)
    call: LifecycleCall | None = None  # the next turn's call when not STEER (RESUME)
    pause_requested: bool = False
    pending: tuple[InboxMessage, ...] = ()
    # None: the field is absent (no message arrived since the last lane take); a suspend's
    # compare-and-set tells the two apart (cascade.py).
    pending_keys: tuple[str, ...] | None = None
    owned: tuple[InboxMessage, ...] = ()
    owned_keys: tuple[str, ...] = ()
    drained_keys: tuple[str, ...] = ()
    # Outbox entries by id (process_service/runtime/outbox.py); None: an entry of a kind this version
    # does not know (dropped at delivery).
    outbox: dict[str, OutboxEntry | None] = field(default_factory=dict)
    observed: bool = False  # some observer was ever added (observations.py)
    stopped_by: str = ""
    suspended_at_ms: int = 0
    seeded_from: str | None = None  # the process whose chat a respawned chat copied

    @property
    def pending_count(self) -> int:
        return len(self.pending_keys or ()) + len(self.owned_keys)

    @property
    def waking(self) -> bool:
        """A new message starts a turn (IDLE or BLOCKED)."""
        return self.status in WAKING

    @property
    def holding(self) -> bool:
        """A new message waits for a resume (PAUSED or SUSPENDED)."""
        return self.status in HOLDING

    @property
    def closed(self) -> bool:
        return self.status is ProcessStatus.CLOSED

    def think_process(self) -> ThinkProcess:
        """The ThinkProcess the API shows. Built without validation: every field is typed
        already (this runs for every assignment and steer reply)."""
        return ThinkProcess.model_construct(
            id=self.id,
            tenant_id=self.tenant_id,
            project_id=self.project_id,
            session_id=self.session_id,
            name=self.name,
            title=self.title,
            goal=self.goal,
            engine=self.engine,
            engine_version=self.engine_version,
            recipe_name=self.recipe_name,
            parent_process_id=self.parent_process_id,
            owner_user_id=self.owner_user_id,
            status=self.status,
            close_reason=self.close_reason,
            close_detail=self.close_detail,
            recipe_snapshot=self.recipe_snapshot,
            params=self.params,
            created_at_ms=self.created_at_ms,
            updated_at_ms=self.updated_at_ms,
            pending_count=self.pending_count,
            chat_history_summary=self.chat_history_summary,
            chat_history_summary_through=self.chat_history_summary_through,
            last_suspend_cause=self.last_suspend_cause,
            persistent_tool_calls=self.persistent_tool_calls,
            connection_profile=self.connection_profile,
        )


@dataclass(slots=True)
class SessionEvent:
    """One event of a session's stream (process_service/events/log.py). `seq` is given when the
    event is written; `data` is the event's JSON payload, stored and replayed as it is and
    converted to its proto by kind (process_service/convert.py)."""

    session_id: str
    kind: str  # events.py: CHAT_APPENDED, STREAM_CHUNK, STATUS_CHANGED, PROGRESS, NOTICE
    data: dict[str, Any]  # JSON (see above)
    at_ms: int
    ephemeral: bool = False  # a stream chunk: its text is kept in memory only
    seq: int = 0


@dataclass(slots=True)
class ChatRecord:
    """A stored chat message of a process, numbered in order (vance/chat_ids.py)."""

    id: str
    session_id: str
    think_process_id: str
    process_name: str
    role: ChatRole
    content: str
    created_at_ms: int
    # Free-form per-message metadata from the engine (JSON).
    meta: dict[str, Any] = field(default_factory=dict)
    # `<turn>:<ordinal>`: which append of which turn wrote it (a redo finds its own).
    turn_key: str = ""
