"""session_service domain models."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class SessionStatus(StrEnum):
    INIT = "INIT"
    RUNNING = "RUNNING"
    IDLE = "IDLE"
    SUSPENDED = "SUSPENDED"
    ARCHIVED = "ARCHIVED"
    CLOSED = "CLOSED"


class ProjectKind(StrEnum):
    NORMAL = "NORMAL"
    SYSTEM = "SYSTEM"


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
    last_activity_at_ms: int = 0
