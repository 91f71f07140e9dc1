"""Who may read and write settings of which level (seed 001 §5.2, §2.1): a hub project's
settings are its owner's alone, tenant admins included; the owner may set the user-level keys
there (their own `chat.language`) without being an admin."""

from __future__ import annotations

from collections.abc import Iterable

from session_service.access.actor import Actor, is_foreign_hub
from session_service.domain.models import Project
from vance.errors import NotFoundError

# Keys a user sets for themself, in their hub project (`_user_<username>`).
USER_KEYS = frozenset({"chat.language"})


def check_visible(project: Project | None, actor: Actor) -> None:
    """Another user's hub project is not found (not 403: its existence is theirs too)."""
    if project is not None and not actor.is_system and is_foreign_hub(project, actor.user_id):
        raise NotFoundError(f"no project {project.project_id!r}", reason="project_not_found")


def user_may_write(project: Project | None, actor: Actor, keys: Iterable[str]) -> bool:
    """The owner of a hub project writing only user-level keys there."""
    return (
        project is not None
        and not actor.is_system
        and project.owner_user_id == actor.user_id
        and project.project_id == f"_user_{actor.user_id}"
        and set(keys) <= USER_KEYS
    )
