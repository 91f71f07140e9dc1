"""session_service collections, addressed by _id (tenant-scoped composite keys)."""

from __future__ import annotations

from typing import Any

from pymongo.asynchronous.database import AsyncDatabase

from session_service.models import Project, Session, User
from session_service.search.cards import SessionCards
from vance.store import Document, is_duplicate_key


class SessionStore:
    def __init__(self, db: AsyncDatabase[Document]) -> None:
        self.users = db["users"]
        self.projects = db["projects"]
        self.sessions = db["sessions"]
        self.project_sessions = db["project_sessions"]
        self.cards = SessionCards(db)

    @staticmethod
    def _key(tenant: str, name: str) -> str:
        return f"{tenant}:{name}"

    async def insert_user(self, user: User, password_hash: str) -> bool:
        doc = {
            "_id": self._key(user.tenant_id, user.username),
            **user.model_dump(),
            "password_hash": password_hash,
        }
        return await self._insert(self.users, doc)

    async def user_doc(self, tenant: str, username: str) -> Document | None:
        return await self.users.find_one({"_id": self._key(tenant, username)})

    async def insert_project(self, project: Project) -> bool:
        doc = {
            "_id": self._key(project.tenant_id, project.project_id),
            **project.model_dump(mode="json"),
        }
        return await self._insert(self.projects, doc)

    async def project(self, tenant: str, project_id: str) -> Project | None:
        doc = await self.projects.find_one({"_id": self._key(tenant, project_id)})
        return Project.model_validate(doc) if doc else None

    async def insert_session(self, session: Session) -> None:
        await self.sessions.insert_one(
            {"_id": session.session_id, **session.model_dump(mode="json")}
        )
        await self.project_sessions.update_one(
            {"_id": self._key(session.tenant_id, session.project_id)},
            {"$addToSet": {"ids": session.session_id}},
            upsert=True,
        )
        # The owner's card of the session: listing and search read cards, not sessions.
        await self.cards.put(session, session.created_at_ms)

    async def session(self, session_id: str) -> Session | None:
        doc = await self.sessions.find_one({"_id": session_id})
        return Session.model_validate(doc) if doc else None

    async def update_session(self, session_id: str, fields: dict[str, Any]) -> Session | None:
        doc = await self.sessions.find_one_and_update(
            {"_id": session_id}, {"$set": fields}, return_document=True
        )
        return Session.model_validate(doc) if doc else None

    async def project_session_ids(self, tenant: str, project_id: str) -> list[str]:
        doc = await self.project_sessions.find_one({"_id": self._key(tenant, project_id)})
        return list(doc["ids"]) if doc else []

    async def sessions_by_ids(self, ids: list[str]) -> list[Session]:
        if not ids:
            return []
        docs = await self.sessions.find({"_id": {"$in": ids}}).to_list(None)
        return [Session.model_validate(d) for d in docs]

    @staticmethod
    async def _insert(collection: Any, doc: Document) -> bool:
        try:
            await collection.insert_one(doc)
            return True
        except Exception as exc:
            if is_duplicate_key(exc):
                return False
            raise
