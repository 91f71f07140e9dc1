"""Who may act on a session: its owner or an admin of its tenant."""

from __future__ import annotations

from dataclasses import dataclass

from session_service.domain.models import Project, ProjectKind, Session
from vance.errors import PermissionDeniedError


@dataclass(frozen=True)
class Actor:
    """The user a request acts for, as the gateway authenticated them. An empty actor is a
    service calling on its own behalf (sweepers, tests over gRPC) and is not restricted."""

    user_id: str = ""
    is_admin: bool = False

    @property
    def is_system(self) -> bool:
        return not self.user_id

    @property
    def sees_all(self) -> bool:
        return self.is_system or self.is_admin


def check_owner_or_admin(session: Session, actor: Actor) -> None:
    # A hub session (in its owner's `_user_<username>` project) is its owner's alone: tenant
    # admins included (session_service/hub/home.py).
    if session.project_id == f"_user_{session.owner_user_id}" and not actor.is_system:
        if actor.user_id != session.owner_user_id:
            raise PermissionDeniedError("this is another user's hub", reason="hub_foreign")
    if actor.sees_all or session.owner_user_id == actor.user_id:
        return
    raise PermissionDeniedError("the session belongs to another user", reason="session_foreign")


def is_foreign_hub(project: Project, user_id: str) -> bool:
    """A SYSTEM project owned by someone else (another user's hub, session_service/hub/home.py):
    invisible to `user_id`, admins included."""
    return (
        project.kind is ProjectKind.SYSTEM
        and bool(project.owner_user_id)
        and project.owner_user_id != user_id
    )
