"""Users, projects and sessions: the domain operations behind SessionService."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from session_service.access.passwords import hash_password, verify_password
from session_service.domain.models import (
    Guard,
    NewSessionOptions,
    Project,
    ProjectKind,
    Session,
    SessionFields,
    SessionStatus,
    User,
)
from session_service.store.session_store import SessionStore
from vance.clients.process import Processes, ProcessSpec
from vance.clients.recipe import AppliedRecipe, Recipes
from vance.clock import Clock
from vance.domain import CloseReason, ThinkProcess
from vance.errors import (
    AlreadyExistsError,
    InvalidArgumentError,
    NotFoundError,
    UnauthenticatedError,
)
from vance.ids import new_id

logger = logging.getLogger(__name__)

CHAT_PROCESS_NAME = "chat"
DEFAULT_CHAT_ENGINE = "arthur"


class Sessions:
    def __init__(
        self,
        store: SessionStore,
        clock: Clock,
        processes: Processes,
        recipes: Recipes,
        *,
        before_insert: Callable[[Session], Awaitable[None]] | None = None,
        default_chat_engine: Callable[[str, str], Awaitable[str]] | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._processes = processes
        self._recipes = recipes
        self._before_insert = before_insert
        self._default_chat_engine = default_chat_engine

    async def create_user(
        self, tenant: str, username: str, password: str, roles: list[str]
    ) -> User:
        if not tenant or not username or not password:
            raise InvalidArgumentError("tenant, username and password are required")
        user = User(
            tenant_id=tenant, username=username, roles=roles, created_at_ms=self._clock.now_ms()
        )
        if not await self._store.insert_user(user, hash_password(password)):
            raise AlreadyExistsError(f"user {username!r} exists", reason="user_exists")
        return user

    async def authenticate(self, tenant: str, username: str, password: str) -> User:
        stored = await self._store.user(tenant, username)
        if stored is None or not verify_password(password, stored.password_hash):
            raise UnauthenticatedError("unknown user or wrong password", reason="bad_credentials")
        return stored.user

    async def user(self, tenant: str, username: str) -> User:
        stored = await self._store.user(tenant, username)
        if stored is None:
            raise NotFoundError(f"no user {username!r}", reason="user_not_found")
        return stored.user

    async def create_project(
        self,
        tenant: str,
        project_id: str,
        title: str,
        kind: ProjectKind,
        *,
        owner: str = "",
        group: str = "",
    ) -> Project:
        if not project_id:
            raise InvalidArgumentError("projectId is required", reason="project_required")
        project = Project(
            tenant_id=tenant,
            project_id=project_id,
            title=title or project_id,
            kind=kind,
            created_at_ms=self._clock.now_ms(),
            owner_user_id=owner,
            group=group,
        )
        if not await self._store.insert_project(project):
            raise AlreadyExistsError(f"project {project_id!r} exists", reason="project_exists")
        return project

    async def project(self, tenant: str, project_id: str) -> Project:
        project = await self._store.project(tenant, project_id)
        if project is None:
            raise NotFoundError(f"no project {project_id!r}", reason="project_not_found")
        return project

    async def create_session(
        self,
        tenant: str,
        project_id: str,
        owner: str,
        *,
        profile: str = "default",
        autonomous: bool = False,
        chat_engine: str = "",
        recipe: str = "",
        options: NewSessionOptions | None = None,
    ) -> Session:
        """Persists the session, then creates and starts its chat process.
        `options` holds what session_service/lifecycle/transitions.py resolved (the five lifecycle
        properties, their sources) and the binding options; `before_insert` (given at
        construction) indexes the session for the sweeps before it exists, so no crash can
        leave it unswept."""
        if not project_id:
            raise InvalidArgumentError("projectId is required", reason="project_required")
        await self.project(tenant, project_id)
        now = self._clock.now_ms()
        session = Session(
            session_id=new_id("sess"),
            tenant_id=tenant,
            project_id=project_id,
            owner_user_id=owner,
            profile=profile or "default",
            created_at_ms=now,
            last_activity_at_ms=now,
        )
        if options is not None:
            session = session.model_copy(
                update={
                    "lifecycle": options.lifecycle,
                    "lifecycle_sources": options.lifecycle_sources,
                    "bootstrap_recipe": options.bootstrap_recipe,
                    "allow_multiple_clients": options.allow_multiple_clients,
                    "bound_connection_id": options.bound_connection_id,
                }
            )
        if self._before_insert is not None:
            await self._before_insert(session)
        if autonomous:
            await self._store.insert_session(session)
            return await self._set(session, {"status": SessionStatus.IDLE})
        # The `session.defaultChatEngine` setting of a tenant and project
        # (settings/engine_settings.py).
        if not chat_engine and self._default_chat_engine is not None:
            chat_engine = await self._default_chat_engine(tenant, project_id)
        engine = chat_engine or DEFAULT_CHAT_ENGINE
        # Resolved before anything is stored: a bad engine leaves no half-made session.
        applied = await self._recipes.apply(
            tenant_id=tenant,
            project_id=project_id,
            recipe=recipe,
            engine=engine,
            profile=session.profile,
        )
        await self._store.insert_session(session)
        try:
            process = await self._create_chat(session, applied, engine)
        except Exception:
            await self._chat_failed(session)
            raise
        logger.info(
            "session %s created with chat %s (%s)", session.session_id, process.id, process.engine
        )
        return await self._set(
            session,
            {
                "status": SessionStatus.IDLE,
                "chat_process_id": process.id,
                "chat_process_name": process.name,
                "chat_engine": process.engine,
            },
        )

    async def _create_chat(
        self, session: Session, applied: AppliedRecipe, engine: str
    ) -> ThinkProcess:
        tenant, project_id = session.tenant_id, session.project_id
        return await self._processes.create(
            ProcessSpec(
                tenant_id=tenant,
                project_id=project_id,
                session_id=session.session_id,
                name=CHAT_PROCESS_NAME,
                title="Session chat",
                engine=applied.engine or engine,
                recipe_name=applied.recipe_name,
                # The process keeps the connection profile: its tool pool is pruned by it.
                recipe_snapshot={**applied.snapshot, "profile": session.profile},
                params=applied.params,
                owner_user_id=session.owner_user_id,
                idempotency_key=f"{session.session_id}:chat",
                start=True,
            )
        )

    async def _chat_failed(self, session: Session) -> None:
        """The chat process was not created: the session is closed INCOMPLETE, not left INIT
        for ever (no sweep moves an INIT session), and a chat that was created after all (a
        reply lost in transit) is closed with it. The caller still gets the error."""
        logger.warning("session %s: creating its chat failed; closing it", session.session_id)
        try:
            await self._set(
                session,
                {
                    "status": SessionStatus.CLOSED,
                    "close_reason": CloseReason.INCOMPLETE,
                    "closed_at_ms": self._clock.now_ms(),
                },
            )
            await self._processes.close_session(session.session_id, CloseReason.INCOMPLETE)
        except Exception:
            logger.exception("closing session %s after its chat failed", session.session_id)

    async def _set(self, session: Session, fields: SessionFields) -> Session:
        updated = await self._store.cas(session.session_id, Guard(), fields)
        if updated is None:
            raise NotFoundError(f"session {session.session_id} vanished")
        return updated

    async def session(self, tenant: str, session_id: str) -> Session:
        session = await self._store.session(session_id)
        if session is None or session.tenant_id != tenant:
            raise NotFoundError(
                f"no session {session_id!r}",
                reason="session_not_found",
                metadata={"sessionId": session_id},
            )
        return session
