"""recipe_service collections: stored recipes and manuals, addressed only by _id.

The embedded store (FerretDB on SQLite) answers only `_id` lookups from an index; a filter on
any other field scans the whole collection. So a document's _id is `tenant:scope:name` (scope
is the project id, or `_tenant` for the tenant level) and each scope keeps one small index
document (`tenant:scope` -> names) for listing.
"""

from __future__ import annotations

from typing import Any

from pymongo import ReturnDocument
from pymongo.asynchronous.database import AsyncDatabase

from vance.store import Document, is_duplicate_key

TENANT_SCOPE = "_tenant"


def scope_of(project: str) -> str:
    return project or TENANT_SCOPE


class ScopedCollection:
    """Named documents per (tenant, scope), plus the per-scope name index."""

    def __init__(self, db: AsyncDatabase[Document], name: str) -> None:
        self._docs = db[name]
        self._index = db[f"{name}_scopes"]

    @staticmethod
    def key(tenant: str, scope: str, name: str) -> str:
        return f"{tenant}:{scope}:{name}"

    async def find(self, tenant: str, scopes: list[str], name: str) -> dict[str, Document]:
        """The documents named `name` in the given scopes, by scope; one _id query."""
        ids = [self.key(tenant, s, name) for s in scopes]
        docs = await self._docs.find({"_id": {"$in": ids}}).to_list(None)
        return {str(d["scope"]): d for d in docs}

    async def names(self, tenant: str, scopes: list[str]) -> dict[str, list[str]]:
        ids = [f"{tenant}:{s}" for s in scopes]
        docs = await self._index.find({"_id": {"$in": ids}}).to_list(None)
        return {str(d["scope"]): sorted(d.get("names") or []) for d in docs}

    async def list(self, tenant: str, scopes: list[str]) -> dict[str, list[Document]]:
        """Every document of the given scopes, by scope, sorted by name."""
        names = await self.names(tenant, scopes)
        ids = [self.key(tenant, s, n) for s, ns in names.items() for n in ns]
        if not ids:
            return {}
        docs = await self._docs.find({"_id": {"$in": ids}}).to_list(None)
        out: dict[str, list[Document]] = {}
        # An index entry without a document (a crash between the two writes) is skipped.
        for d in sorted(docs, key=lambda d: str(d["name"])):
            out.setdefault(str(d["scope"]), []).append(d)
        return out

    async def insert(self, tenant: str, scope: str, name: str, fields: dict[str, Any]) -> bool:
        """False when the name exists in the scope. The index entry is written first: a crash
        in between leaves a harmless dangling name, never an unlisted document."""
        await self._add_to_index(tenant, scope, name)
        doc = {"_id": self.key(tenant, scope, name), **self._ids(tenant, scope, name), **fields}
        try:
            await self._docs.insert_one(doc)
        except Exception as exc:
            if is_duplicate_key(exc):
                return False
            raise
        return True

    async def replace(
        self, tenant: str, scope: str, name: str, fields: dict[str, Any], *, upsert: bool = False
    ) -> Document | None:
        """The new document, or None when it does not exist (and `upsert` is off)."""
        if upsert:
            await self._add_to_index(tenant, scope, name)
        return await self._docs.find_one_and_update(
            {"_id": self.key(tenant, scope, name)},
            {"$set": {**self._ids(tenant, scope, name), **fields}},
            upsert=upsert,
            return_document=ReturnDocument.AFTER,
        )

    async def delete(self, tenant: str, scope: str, name: str) -> bool:
        result = await self._docs.delete_one({"_id": self.key(tenant, scope, name)})
        if result.deleted_count == 0:
            return False
        await self._index.update_one({"_id": f"{tenant}:{scope}"}, {"$pull": {"names": name}})
        return True

    async def _add_to_index(self, tenant: str, scope: str, name: str) -> None:
        await self._index.update_one(
            {"_id": f"{tenant}:{scope}"},
            {"$addToSet": {"names": name}, "$set": {"tenant_id": tenant, "scope": scope}},
            upsert=True,
        )

    @staticmethod
    def _ids(tenant: str, scope: str, name: str) -> dict[str, str]:
        return {"tenant_id": tenant, "scope": scope, "name": name}


class RecipeStore:
    """The service's two collections; documents carry the text, never parsed fields, so keys
    like `rag.autoInject` in params need no escaping in the store."""

    def __init__(self, db: AsyncDatabase[Document]) -> None:
        self.recipes = ScopedCollection(db, "recipes")
        self.manuals = ScopedCollection(db, "manuals")
