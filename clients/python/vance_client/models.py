"""The values frames and REST replies carry (docs/protocol.md), as typed pydantic models.

Every model reads the protocol's camelCase names and keeps fields it does not know
(`extra="allow"`): a newer gateway that adds a field never breaks an older client."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class ChatMessage(Model):
    chat_message_id: str = ""
    think_process_id: str = ""
    process_name: str = ""
    role: str = ""  # user, assistant, system
    content: str = ""
    created_at: int = 0
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def options(self) -> list[Option]:
        """The numbered choices of a question (Arthur's `respond`, Eddie's `ask_user`/`relay`)."""
        raw = self.meta.get("options") or []
        return [Option.model_validate(o) for o in raw if isinstance(o, dict)]

    @property
    def action(self) -> str:
        """Eddie's action (`answer`, `ask_user`, `relay`, `relay_inbox`, `mediate`); "" else."""
        return str(self.meta.get("action") or "")


class Option(Model):
    label: str
    description: str | None = None


class ProcessInfo(Model):
    """The process object of replies (docs/protocol.md "Process object")."""

    think_process_id: str = ""
    process_name: str = ""
    title: str = ""
    goal: str = ""
    engine: str = ""
    recipe: str = ""
    status: str = ""
    close_reason: str | None = None
    close_detail: str | None = None  # why it closed, in words (CLOSED only)
    parent_process_id: str | None = None
    pending_count: int = 0
    created_at: int = 0


class InboxItem(Model):
    id: str
    title: str = ""
    body: str = ""
    source_process_id: str | None = None
    source_session_id: str | None = None
    created_at: int = 0
    read: bool = False
    answered: bool = False
    answer: str | None = None
    requires_answer: bool = False


class Lifecycle(Model):
    on_disconnect: str | None = None
    on_idle: str | None = None
    on_suspend: str | None = None
    idle_timeout_ms: int = 0
    suspend_keep_duration_ms: int = 0


class Metadata(Model):
    title: str | None = None
    title_auto_generated: bool = False
    icon: str | None = None
    color: str | None = None
    tags: list[str] = Field(default_factory=list)
    pinned: bool = False
    user_touched_at: int | None = None


class Session(Model):
    """A session as the REST routes return it (lifecycle view, and metadata where listed)."""

    session_id: str
    project_id: str = ""
    owner_user_id: str = ""
    status: str | None = None
    profile: str = ""
    chat_process_id: str | None = None
    chat_process_name: str | None = None
    chat_engine: str | None = None
    bootstrap_recipe: str | None = None
    lifecycle: Lifecycle = Field(default_factory=Lifecycle)
    bound: bool = False
    suspend_cause: str | None = None
    suspended_at: int | None = None
    transition_at: int | None = None
    close_reason: str | None = None
    archived_at: int | None = None
    reactivated_at: int | None = None
    last_activity_at: int = 0
    generation: int = 1
    metadata: Metadata = Field(default_factory=Metadata)


class Highlight(Model):
    start: int
    end: int


class Snippet(Model):
    message_id: str = ""
    process_name: str = ""
    role: str = ""
    created_at: int = 0
    text: str = ""
    highlights: list[Highlight] = Field(default_factory=list)


class SearchHit(Model):
    session: Session
    score: int = 0
    matched_in: list[str] = Field(default_factory=list)
    snippets: list[Snippet] = Field(default_factory=list)


class SearchResult(Model):
    query: str = ""
    hits: list[SearchHit] = Field(default_factory=list)


class Project(Model):
    project_id: str
    title: str = ""
    kind: str = "NORMAL"
    owner_user_id: str | None = None
    group: str | None = None
    archived: bool = False
    created_at: int = 0


class Token(Model):
    token: str
    user_id: str = ""
    tenant_id: str = ""
    expires_at: int = 0  # Unix ms


class Settings(Model):
    tenant_id: str = ""
    project_id: str | None = None
    values: dict[str, Any] = Field(default_factory=dict)
    effective: dict[str, Any] = Field(default_factory=dict)


class User(Model):
    tenant_id: str = ""
    username: str
    roles: list[str] = Field(default_factory=list)
    created_at: int = 0


class Health(Model):
    status: str
    services: dict[str, str] = Field(default_factory=dict)
