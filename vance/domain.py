"""Domain models shared by process_service and engine_worker. No protobuf in here."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field


class ProcessStatus(StrEnum):
    INIT = "INIT"
    RUNNING = "RUNNING"
    IDLE = "IDLE"
    BLOCKED = "BLOCKED"
    PAUSED = "PAUSED"
    SUSPENDED = "SUSPENDED"
    CLOSED = "CLOSED"


class CloseReason(StrEnum):
    DONE = "DONE"
    INCOMPLETE = "INCOMPLETE"
    STOPPED = "STOPPED"
    STALE = "STALE"
    ARCHIVED = "ARCHIVED"
    USER_DELETE = "USER_DELETE"
    ABANDONED = "ABANDONED"
    AUTO_CLOSE = "AUTO_CLOSE"


class ProcessEventType(StrEnum):
    STARTED = "STARTED"
    BLOCKED = "BLOCKED"
    DONE = "DONE"
    FAILED = "FAILED"
    STOPPED = "STOPPED"
    SUMMARY = "SUMMARY"


class PeerEventType(StrEnum):
    """What a hub tells its peers (seed 001 §6.3)."""

    PROJECT_CREATED = "PROJECT_CREATED"
    PROJECT_ARCHIVED = "PROJECT_ARCHIVED"
    PROCESS_SPAWNED = "PROCESS_SPAWNED"
    PROCESS_BLOCKED = "PROCESS_BLOCKED"
    PROCESS_CHANGED = "PROCESS_CHANGED"
    USER_STATEMENT = "USER_STATEMENT"
    STATUS = "STATUS"


class ToolCallStatus(StrEnum):
    SUCCESS = "SUCCESS"
    ERROR = "ERROR"
    TIMEOUT = "TIMEOUT"


class ChatRole(StrEnum):
    USER = "USER"
    ASSISTANT = "ASSISTANT"
    SYSTEM = "SYSTEM"


class LifecycleCall(StrEnum):
    START = "START"
    STEER = "STEER"
    RESUME = "RESUME"
    # Hooks (engine_worker/engine.py): run after the transition, the status stays.
    SUSPEND = "SUSPEND"
    STOP = "STOP"
    # A suspended hub takes in its pending peer events (engines/eddie_peers.py).
    PEER = "PEER"


HOOK_CALLS = frozenset({LifecycleCall.SUSPEND, LifecycleCall.STOP, LifecycleCall.PEER})


class DeliveryOutcome(StrEnum):
    STARTED = "STARTED"
    QUEUED = "QUEUED"
    DEFERRED = "DEFERRED"
    REJECTED = "REJECTED"


# Engines that run only as the chat of their own sessions, never as a spawned process: Eddie,
# the hub (session_service/hub/home.py). Spawning and the recipe selector treat them as not run.
HUB_ONLY_ENGINES = frozenset({"eddie"})

# Client profiles (REFERENCE): `foot`, `web`, `mobile`, `daemon`, `eddie`, plus `default`.
PROFILE_PATTERN = r"^[a-z][a-z0-9_-]{0,31}$"


# Session lifecycle properties (seed 002 §5) and suspend causes, shared by recipe_service, which
# resolves the properties, and session_service, which acts on them.
class OnDisconnect(StrEnum):
    SUSPEND = "SUSPEND"
    KEEP_OPEN = "KEEP_OPEN"
    CLOSE = "CLOSE"


class OnIdle(StrEnum):
    SUSPEND = "SUSPEND"
    NONE = "NONE"


class OnSuspend(StrEnum):
    KEEP = "KEEP"
    CLOSE = "CLOSE"


class SuspendCause(StrEnum):
    IDLE = "IDLE"
    DISCONNECT = "DISCONNECT"
    FORCED = "FORCED"


# The lifecycle properties as tenant or project settings: setting key -> property. recipe_service
# reads them when it resolves a session's lifecycle; session_service checks them when written.
LIFECYCLE_SETTINGS = {
    "vance.session.onDisconnect": "on_disconnect",
    "vance.session.onIdle": "on_idle",
    "vance.session.onSuspend": "on_suspend",
    "vance.session.idleTimeoutMs": "idle_timeout_ms",
    "vance.session.suspendKeepDurationMs": "suspend_keep_duration_ms",
}
_LIFECYCLE_ENUMS: dict[str, type[StrEnum]] = {
    "on_disconnect": OnDisconnect,
    "on_idle": OnIdle,
    "on_suspend": OnSuspend,
}


def parse_lifecycle_setting(key: str, raw: str) -> StrEnum | int:
    """The typed value of a lifecycle setting (an enum member, or milliseconds); ValueError
    saying what is allowed otherwise. Enum names are case-insensitive."""
    enum = _LIFECYCLE_ENUMS.get(LIFECYCLE_SETTINGS[key])
    if enum is not None:
        try:
            return enum(raw.strip().upper())
        except ValueError:
            raise ValueError(f"must be one of {', '.join(m.value for m in enum)}") from None
    try:
        value = int(raw.strip())
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError("must be a non-negative number of milliseconds")
    return value


# Statuses in which a new inbox message starts a turn (seed 002 §3).
WAKING = (ProcessStatus.IDLE, ProcessStatus.BLOCKED)
# Statuses in which a message is only queued until a resume.
HOLDING = (ProcessStatus.PAUSED, ProcessStatus.SUSPENDED)

# Child CLOSED reason -> event type sent to the parent (REFERENCE.md).
PARENT_EVENT_FOR_CLOSE: dict[CloseReason, ProcessEventType] = {
    CloseReason.DONE: ProcessEventType.DONE,
    CloseReason.STOPPED: ProcessEventType.STOPPED,
    CloseReason.AUTO_CLOSE: ProcessEventType.STOPPED,
    CloseReason.ARCHIVED: ProcessEventType.STOPPED,
    CloseReason.USER_DELETE: ProcessEventType.STOPPED,
    CloseReason.ABANDONED: ProcessEventType.STOPPED,
    CloseReason.STALE: ProcessEventType.FAILED,
    CloseReason.INCOMPLETE: ProcessEventType.FAILED,
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


# Per model class, the set of all its field names (`share_fields_set`).
_ALL_FIELDS: dict[type[BaseModel], set[str]] = {}
_M = TypeVar("_M", bound=BaseModel)


def share_fields_set(m: _M) -> _M:
    """Gives an instance whose fields were all given (its `model_fields_set` names every
    field: what vance/convert.py's `*_from_proto` build) its class's one set of all the names
    instead of a set of its own. Pydantic keeps a set per instance: 2.2 KiB for a
    `ThinkProcess` (25 names), 0.7 KiB for a `ChatMessage` or a `UserChatInput`, which a
    worker holds for every turn in flight and every chat message it holds (issue 28,
    docs/operations.md "Memory per turn in flight"). Sharing is safe because the set cannot
    change any more: assigning a field adds its name, already in it. Returns `m`."""
    cls = type(m)
    shared = _ALL_FIELDS.get(cls)
    if shared is None:
        shared = _ALL_FIELDS[cls] = set(cls.model_fields)
    own = m.__pydantic_fields_set__
    if own is not shared and own == shared:
        object.__setattr__(m, "__pydantic_fields_set__", shared)
    return m


class _SteerBase(_Model):
    id: str = ""
    idempotency_key: str = ""
    at_ms: int = 0
    target_process_id: str = ""
    sender_process_id: str = ""


class UserChatInput(_SteerBase):
    kind: Literal["USER_CHAT_INPUT"] = "USER_CHAT_INPUT"
    from_user: str = ""
    content: str
    # The hub question this answers, when the client knows it (an option clicked).
    ask_id: str = ""
    # The hub passed the user's words on: {engine, processId, viaSession} (seed 001 §7.3).
    forwarded_by: dict[str, Any] = Field(default_factory=dict)


class ProcessEvent(_SteerBase):
    kind: Literal["PROCESS_EVENT"] = "PROCESS_EVENT"
    source_process_id: str
    source_process_name: str = ""
    type: ProcessEventType
    human_summary: str = ""
    payload: dict[str, Any] = Field(default_factory=dict)


class Reply(_SteerBase):
    kind: Literal["REPLY"] = "REPLY"
    in_reply_to: str = ""
    content: str = ""


class ToolResult(_SteerBase):
    kind: Literal["TOOL_RESULT"] = "TOOL_RESULT"
    tool_call_id: str
    tool_name: str
    status: ToolCallStatus
    result: Any = None
    error: str = ""


class ExternalCommand(_SteerBase):
    kind: Literal["EXTERNAL_COMMAND"] = "EXTERNAL_COMMAND"
    command: str
    params: dict[str, Any] = Field(default_factory=dict)


class InboxAnswer(_SteerBase):
    kind: Literal["INBOX_ANSWER"] = "INBOX_ANSWER"
    inbox_item_id: str
    answer: Any = None


class PeerEvent(_SteerBase):
    """A hub telling another hub of the same user what happened; the sending Eddie is
    `sender_process_id`. Only Eddie reads it (engines/eddie_peers.py)."""

    kind: Literal["PEER_EVENT"] = "PEER_EVENT"
    source_session_id: str = ""
    user_id: str = ""
    type: PeerEventType = PeerEventType.STATUS
    human_summary: str = ""
    payload: dict[str, Any] = Field(default_factory=dict)


SteerMessage = Annotated[
    UserChatInput | ProcessEvent | Reply | ToolResult | ExternalCommand | InboxAnswer | PeerEvent,
    Field(discriminator="kind"),
]


class SteerEnvelope(_Model):
    """Wrapper so a bare dict from the store validates into the right variant."""

    message: SteerMessage


def steer_from_dict(data: dict[str, Any]) -> SteerMessage:
    return SteerEnvelope.model_validate({"message": data}).message


class ThinkProcess(_Model):
    id: str
    tenant_id: str = ""
    project_id: str = ""
    session_id: str
    name: str
    title: str = ""
    goal: str = ""
    engine: str
    engine_version: str = ""
    recipe_name: str = ""
    parent_process_id: str = ""
    owner_user_id: str = ""
    status: ProcessStatus = ProcessStatus.INIT
    close_reason: CloseReason | None = None
    close_detail: str = ""
    recipe_snapshot: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    created_at_ms: int = 0
    updated_at_ms: int = 0
    pending_count: int = 0
    # A rolling summary of the chat cut from the model's context, and the last chat message
    # number it covers (engine_worker/engines/history_summary.py).
    chat_history_summary: str = ""
    chat_history_summary_through: int = 0
    # Why the process was last suspended (IDLE, DISCONNECT, FORCED): a resume may treat a turn
    # cut off by a FORCED suspend differently.
    last_suspend_cause: str = ""
    # Successful calls of tools labelled `@persistent` (effects that outlive the chat, e.g. a
    # stored recipe): a side effect that keeps the session from counting as abandoned.
    persistent_tool_calls: int = 0
    # The profile of the connection bound to the session when it differs from the session's
    # own (a user mediated into a project Eddie created); tools are pruned by it.
    connection_profile: str = ""


class ChatMessage(_Model):
    id: str
    session_id: str
    think_process_id: str
    process_name: str = ""
    role: ChatRole
    content: str
    created_at_ms: int = 0
    meta: dict[str, Any] = Field(default_factory=dict)
