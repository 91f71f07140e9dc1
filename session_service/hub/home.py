"""The user's home (Eddie hub): the `Home` project group, the SYSTEM project `_user_<username>`
and the hub sessions in it; project listing, archive and delete with the SYSTEM rules.

A SYSTEM hub project belongs to one user: nobody else sees it, opens a session in it or binds
one of its sessions, tenant admins included (they would have to act as that user). Hub
sessions are ordinary sessions whose chat runs the `eddie` engine; a connection asking for the
hub binds the user's most recent unbound open one, or a new one (docs/protocol.md "Hub").
"""

from __future__ import annotations

import logging

from session_service.access.actor import Actor, is_foreign_hub
from session_service.domain.models import Project, ProjectKind, Session, SessionStatus
from session_service.lifecycle.connection_binding import Binding
from session_service.registry.sessions import Sessions
from session_service.store.session_store import SessionStore
from vance.clock import Clock
from vance.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    VanceError,
)

logger = logging.getLogger(__name__)

HOME_GROUP = "Home"
HUB_ENGINE = "eddie"
HUB_RECIPE = "eddie"
HOME_SETTING = "home.project.id"
_OPEN = {SessionStatus.INIT, SessionStatus.RUNNING, SessionStatus.IDLE, SessionStatus.SUSPENDED}


def hub_project_name(username: str) -> str:
    return f"_user_{username}"


class Home:
    def __init__(
        self, store: SessionStore, sessions: Sessions, binding: Binding, clock: Clock
    ) -> None:
        self._store = store
        self._sessions = sessions
        self._binding = binding
        self._clock = clock
        self._groups = store.projects.database["project_groups"]
        self._settings = store.projects.database["user_settings"]

    async def ensure(self, tenant: str, username: str) -> tuple[str, bool]:
        """Idempotent; returns (hub project id, whether anything was created). Each step is an
        insert refused on a duplicate `_id`, so concurrent logins create each thing once."""
        created = await SessionStore._insert(
            self._groups,
            {"_id": f"{tenant}:{HOME_GROUP}", "tenant_id": tenant, "name": HOME_GROUP},
        )
        project_id = hub_project_name(username)
        try:
            await self._sessions.create_project(
                tenant,
                project_id,
                f"Home of {username}",
                ProjectKind.SYSTEM,
                owner=username,
                group=HOME_GROUP,
            )
            created = True
        except AlreadyExistsError:
            pass
        await self._settings.update_one(
            {"_id": f"{tenant}:{username}:{HOME_SETTING}"},
            {
                "$set": {
                    "tenant_id": tenant,
                    "user_id": username,
                    "key": HOME_SETTING,
                    "value": project_id,
                }
            },
            upsert=True,
        )
        if created:
            logger.info("home of %s/%s ready: %s", tenant, username, project_id)
        return project_id, created

    async def ensure_all(self) -> int:
        """At boot: every user's home (a user created before hubs existed gets one too)."""
        n = 0
        async for doc in self._store.users.find({}, {"tenant_id": 1, "username": 1}):
            await self.ensure(str(doc["tenant_id"]), str(doc["username"]))
            n += 1
        return n

    async def user_setting(self, tenant: str, username: str, key: str) -> str:
        doc = await self._settings.find_one({"_id": f"{tenant}:{username}:{key}"})
        return str(doc.get("value", "")) if doc else ""

    async def visible_project(self, tenant: str, project_id: str, actor: Actor) -> Project:
        project = await self._sessions.project(tenant, project_id)
        if not actor.is_system and is_foreign_hub(project, actor.user_id):
            # Not 403: the project's existence is the other user's business too.
            raise NotFoundError(f"no project {project_id!r}", reason="project_not_found")
        return project

    async def list_projects(
        self, tenant: str, actor: Actor, kind: str, *, include_archived: bool
    ) -> list[Project]:
        wanted = (kind or ProjectKind.NORMAL.value).upper()
        if wanted not in {"NORMAL", "SYSTEM", "ALL"}:
            raise InvalidArgumentError(
                "kind must be NORMAL, SYSTEM or ALL", reason="bad_project_kind"
            )
        docs = await self._store.projects.find({"tenant_id": tenant}).to_list(None)
        out = []
        for doc in docs:
            project = Project.model_validate(doc)
            if wanted != "ALL" and project.kind.value != wanted:
                continue
            if project.archived and not include_archived:
                continue
            if not actor.is_system and is_foreign_hub(project, actor.user_id):
                continue
            if not actor.sees_all and project.owner_user_id not in ("", actor.user_id):
                continue  # another user's project: theirs to list (and to share)
            out.append(project)
        out.sort(key=lambda p: p.project_id)
        return out

    async def delete_project(self, tenant: str, project_id: str, actor: Actor) -> bool:
        project = await self.visible_project(tenant, project_id, actor)
        if project.kind is ProjectKind.SYSTEM:
            raise FailedPreconditionError(
                f"project {project_id!r} is a SYSTEM project and cannot be deleted",
                reason="project_system",
            )
        if await self._store.project_session_ids(tenant, project_id):
            raise FailedPreconditionError(
                f"project {project_id!r} has sessions; archive it instead",
                reason="project_has_sessions",
            )
        result = await self._store.projects.delete_one({"_id": f"{tenant}:{project_id}"})
        return result.deleted_count > 0

    async def archive_project(self, tenant: str, project_id: str, actor: Actor) -> Project:
        project = await self.visible_project(tenant, project_id, actor)
        if project.kind is ProjectKind.SYSTEM:
            raise FailedPreconditionError(
                f"project {project_id!r} is a SYSTEM project and cannot be archived",
                reason="project_system",
            )
        await self._store.projects.update_one(
            {"_id": f"{tenant}:{project_id}"}, {"$set": {"archived": True}}
        )
        return project.model_copy(update={"archived": True})

    async def hub_candidates(self, tenant: str, username: str, profile: str) -> list[Session]:
        """The user's open hub sessions of this profile nobody holds, most recent activity
        first. Of this profile: a session's profile decides its lifecycle, its tool pool and
        whether Eddie may mediate (vance/profiles.py), so a phone does not take up a session
        its web client left."""
        ids = await self._store.project_session_ids(tenant, hub_project_name(username))
        found = await self._store.sessions_by_ids(ids)
        open_ = [
            s
            for s in found
            if s.status in _OPEN
            and s.owner_user_id == username
            and s.chat_engine == HUB_ENGINE
            and s.profile == profile
            and not s.bound_connection_id
        ]
        open_.sort(key=lambda s: s.last_activity_at_ms, reverse=True)
        return open_

    async def candidates_then_bind(
        self, tenant: str, username: str, connection_id: str, profile: str
    ) -> tuple[Session, bool] | None:
        """Binds the first candidate whose bind CAS succeeds (another connection of the same
        user may take one between the read and the bind: then the next)."""
        actor = Actor(user_id=username)
        for candidate in await self.hub_candidates(tenant, username, profile):
            try:
                result = await self._binding.bind(
                    tenant, candidate.session_id, connection_id, actor, takeover=False
                )
            except VanceError:
                continue
            if result.bound:
                return result.session, result.resumed
        return None

    async def bound_hub_sessions(self, tenant: str, username: str) -> list[str]:
        """The user's hub sessions that a connection holds now (where pushes reach them)."""
        ids = await self._store.project_session_ids(tenant, hub_project_name(username))
        return [
            s.session_id
            for s in await self._store.sessions_by_ids(ids)
            if s.status in _OPEN and s.bound_connection_id
        ]
