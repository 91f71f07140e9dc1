"""session_service domain models."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypedDict

from pydantic import BaseModel, ConfigDict, Field

from vance.domain import CloseReason, OnDisconnect, OnIdle, OnSuspend, SuspendCause


class LifecycleProps(BaseModel):
    """Resolved at session-create and never changed afterwards; lifecycle code reads only
    these, never the profile. The defaults are the built-in ones (docs/operations.md)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    on_disconnect: OnDisconnect = OnDisconnect.KEEP_OPEN
    on_idle: OnIdle = OnIdle.SUSPEND
    on_suspend: OnSuspend = OnSuspend.KEEP
    idle_timeout_ms: int = 30 * 60_000
    suspend_keep_duration_ms: int = 24 * 3600_000


class SessionStatus(StrEnum):
    INIT = "INIT"
    RUNNING = "RUNNING"
    IDLE = "IDLE"
    SUSPENDED = "SUSPENDED"
    ARCHIVED = "ARCHIVED"
    CLOSED = "CLOSED"


# The RUNNING/IDLE roll-up over the engines (lifecycle/rules.py); both count as open.
OPEN = frozenset({SessionStatus.RUNNING, SessionStatus.IDLE})
# The end states: unbound, no engines, no sweep looks at them again.
DEAD = frozenset({SessionStatus.CLOSED, SessionStatus.ARCHIVED})
# What a suspend may start from: an open session or one not yet started.
SUSPENDABLE = OPEN | {SessionStatus.INIT}


class ProjectKind(StrEnum):
    NORMAL = "NORMAL"
    SYSTEM = "SYSTEM"


class AccentColor(StrEnum):
    """The 12 accent colors shared with documents; themes pick the hex values."""

    SLATE = "slate"
    RED = "red"
    ORANGE = "orange"
    AMBER = "amber"
    GREEN = "green"
    TEAL = "teal"
    CYAN = "cyan"
    BLUE = "blue"
    INDIGO = "indigo"
    PURPLE = "purple"
    PINK = "pink"
    ROSE = "rose"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class User(_Model):
    tenant_id: str
    username: str
    roles: list[str] = Field(default_factory=list)
    created_at_ms: int = 0

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles


class Project(_Model):
    tenant_id: str
    project_id: str
    title: str = ""
    kind: ProjectKind = ProjectKind.NORMAL
    created_at_ms: int = 0
    # A SYSTEM hub project (`_user_<username>`) is its owner's alone (session_service/hub/home.py).
    owner_user_id: str = ""
    group: str = ""
    archived: bool = False


class SessionMetadata(_Model):
    """User-facing metadata: UI and search only, never lifecycle.
    `session_service/search/session_metadata.py` holds the rules that change it."""

    title: str | None = None
    title_auto_generated: bool = False
    icon: str | None = None
    color: AccentColor | None = None
    tags: list[str] = Field(default_factory=list)
    pinned: bool = False
    user_touched_at_ms: int | None = None
    # Of title, icon and color: the ones a user has set, even to "none"; auto-suggest never
    # writes them again.
    user_fields: list[str] = Field(default_factory=list)
    first_qa_at_ms: int | None = None  # when the first completed question-and-answer pair was seen
    suggest_attempts: int = 0
    suggest_done: bool = False


class Session(_Model):
    session_id: str
    tenant_id: str
    project_id: str
    owner_user_id: str
    status: SessionStatus = SessionStatus.INIT
    chat_process_id: str = ""
    chat_process_name: str = ""
    chat_engine: str = ""
    profile: str = "default"
    created_at_ms: int = 0
    # The last client frame (lifecycle/connection_binding.py): bind staleness reads only this, so
    # engine work never
    # keeps a dead connection's bind alive.
    last_activity_at_ms: int = 0
    # The last engine status change or new pending message (lifecycle/engine_rollup.py).
    engine_activity_at_ms: int = 0
    metadata: SessionMetadata = Field(default_factory=SessionMetadata)
    # Lifecycle; session_service/lifecycle/rules.py and friends.
    lifecycle: LifecycleProps = Field(default_factory=LifecycleProps)
    lifecycle_sources: dict[str, str] = Field(default_factory=dict)  # property -> source, audit
    bootstrap_recipe: str = ""
    allow_multiple_clients: bool = False
    bound_connection_id: str | None = None
    # Until when (wall-clock ms) a gateway may still trust a bind it was granted a lease on
    # (session_service/lifecycle/bind_leases.py).
    bind_lease_until_ms: int = 0
    participants: list[str] = Field(default_factory=list)  # joined, unbound connections
    suspended_at_ms: int | None = None
    suspend_cause: SuspendCause | None = None
    transition_at_ms: int | None = None
    close_reason: CloseReason | None = None
    closed_at_ms: int | None = None
    archived_at_ms: int | None = None
    reactivated_at_ms: int | None = None
    generation: int = 1  # chat process generation; reactivate spawns the next one

    @property
    def activity_at_ms(self) -> int:
        """What the idle sweep measures quiet time from: the later of the last client frame
        and the last engine activity."""
        return max(self.last_activity_at_ms, self.engine_activity_at_ms)


class SessionFields(TypedDict, total=False):
    """Some of a Session's top-level fields, as one write sets them (store/session_store.py turns
    them into
    the update). Typed per field: a write of a field the model lacks, or of the wrong type,
    fails mypy, not the store."""

    status: SessionStatus
    chat_process_id: str
    chat_process_name: str
    chat_engine: str
    last_activity_at_ms: int
    engine_activity_at_ms: int
    bound_connection_id: str | None
    participants: list[str]
    suspended_at_ms: int | None
    suspend_cause: SuspendCause | None
    transition_at_ms: int | None
    close_reason: CloseReason | None
    closed_at_ms: int | None
    archived_at_ms: int | None
    reactivated_at_ms: int | None
    generation: int


class MetadataFields(TypedDict, total=False):
    """Some of a SessionMetadata's fields, as one metadata write sets them
    (search/session_metadata.py)."""

    title: str | None
    title_auto_generated: bool
    icon: str | None
    color: AccentColor | None
    tags: list[str]
    pinned: bool


@dataclass(frozen=True, slots=True)
class Guard:
    """The condition of a compare-and-set on one session (store/session_store.py): each given part
    must
    hold. `statuses`: the status is one of them; `bound_connection_id`: the bind is held by
    that connection; `transition_at_ms`: the suspended session's transitionAt is still that;
    `not_statuses`: the status is none of them; `generation`: the chat generation is still
    that one."""

    statuses: frozenset[SessionStatus] | None = None
    not_statuses: frozenset[SessionStatus] | None = None
    bound_connection_id: str | None = None
    transition_at_ms: int | None = None
    generation: int | None = None


# The session is not dead: what every bind, heartbeat and close compares against.
LIVE = Guard(not_statuses=DEAD)


@dataclass(frozen=True, slots=True)
class NewSessionOptions:
    """What CreateSession resolved before the session exists (transitions.resolve_lifecycle):
    the lifecycle properties with their sources, and the caller's binding options."""

    lifecycle: LifecycleProps
    lifecycle_sources: dict[str, str]
    bootstrap_recipe: str
    allow_multiple_clients: bool = False
    bound_connection_id: str | None = None
