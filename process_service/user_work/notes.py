"""The user's scratchpad (one text per user, `user_scratchpads`, `_id` the owner) and facts
(`user_relations`: subject - relation - object with a source, one document per distinct fact,
`_id` the owner and the fact's normalised words, so adding a fact twice keeps one)."""

from __future__ import annotations

import re
from typing import Any

from pymongo import DESCENDING, ReturnDocument
from pymongo.asynchronous.database import AsyncDatabase

from process_service.tool_args import ToolError
from process_service.user_work.args import whole
from process_service.user_work.lazy_index import LazyIndex
from process_service.user_work.owner import Owner
from vance.clock import Clock
from vance.store import Document

MAX_SCRATCHPAD_CHARS = 64_000
MAX_PART_CHARS = 500
MAX_FACTS = 200
_SPACE = re.compile(r"\s+")


def _text(args: dict[str, Any], name: str, *, required: bool = True, limit: int) -> str:
    value = args.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ToolError(f"'{name}' must be a non-empty text")
    if len(value) > limit:
        raise ToolError(f"'{name}' is longer than {limit} characters")
    return value


def norm(value: str) -> str:
    return _SPACE.sub(" ", value.strip()).casefold()


class Scratchpads:
    def __init__(self, db: AsyncDatabase[Document], clock: Clock) -> None:
        self._c = db["user_scratchpads"]
        self._clock = clock

    async def read(self, owner: Owner) -> dict[str, Any]:
        doc = await self._c.find_one({"_id": owner.doc_id()})
        text = str((doc or {}).get("text") or "")
        return {
            "text": text,
            "updatedAt": (doc or {}).get("updated_at_ms"),
            **({} if text else {"note": "the scratchpad is empty"}),
        }

    async def _set(self, owner: Owner, text: str) -> dict[str, Any]:
        if len(text) > MAX_SCRATCHPAD_CHARS:
            raise ToolError(f"the scratchpad holds at most {MAX_SCRATCHPAD_CHARS} characters")
        await self._c.update_one(
            {"_id": owner.doc_id()},
            {"$set": {"text": text, "updated_at_ms": self._clock.now_ms()}},
            upsert=True,
        )
        return {"ok": True, "chars": len(text)}

    async def write(self, owner: Owner, args: dict[str, Any]) -> dict[str, Any]:
        return await self._set(owner, _text(args, "text", limit=MAX_SCRATCHPAD_CHARS))

    async def append(self, owner: Owner, args: dict[str, Any]) -> dict[str, Any]:
        line = _text(args, "text", limit=MAX_SCRATCHPAD_CHARS)
        doc = await self._c.find_one({"_id": owner.doc_id()})
        text = str((doc or {}).get("text") or "")
        joined = f"{text.rstrip(chr(10))}\n{line}" if text else line
        return await self._set(owner, joined)

    async def clear(self, owner: Owner) -> dict[str, Any]:
        await self._c.delete_one({"_id": owner.doc_id()})
        return {"ok": True}


def fact_view(doc: Document) -> dict[str, Any]:
    return {
        "id": doc["_id"],
        "subject": doc["subject"],
        "relation": doc["relation"],
        "object": doc["object"],
        "source": doc.get("source") or None,
        "createdAt": doc.get("created_at_ms"),
    }


class Relations:
    def __init__(self, db: AsyncDatabase[Document], clock: Clock) -> None:
        self._c = db["user_relations"]
        self._clock = clock
        self._index = LazyIndex(self._c, "s", "owner_subject")

    async def add(self, owner: Owner, args: dict[str, Any]) -> dict[str, Any]:
        await self._index.ready()
        parts = {
            k: _text(args, k, limit=MAX_PART_CHARS).strip()
            for k in ("subject", "relation", "object")
        }
        source = _text(args, "source", required=False, limit=MAX_PART_CHARS).strip()
        keys = {
            "s": norm(parts["subject"]),
            "r": norm(parts["relation"]),
            "o": norm(parts["object"]),
        }
        fact_id = owner.doc_id("fact", keys["s"], keys["r"], keys["o"])
        doc = await self._c.find_one_and_update(
            {"_id": fact_id},
            {
                "$set": {**parts, **({"source": source} if source else {})},
                "$setOnInsert": {
                    "tenant_id": owner.tenant_id,
                    "user_id": owner.user_id,
                    **keys,
                    "created_at_ms": self._clock.now_ms(),
                },
            },
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        assert doc is not None  # an upsert returning the document after it
        return fact_view(doc)

    async def query(self, owner: Owner, args: dict[str, Any]) -> dict[str, Any]:
        await self._index.ready()
        query: dict[str, Any] = {"tenant_id": owner.tenant_id, "user_id": owner.user_id}
        for name, key in (("subject", "s"), ("relation", "r"), ("object", "o")):
            value = _text(args, name, required=False, limit=MAX_PART_CHARS)
            if value.strip():
                query[key] = norm(value)
        limit = whole(args.get("limit"), "limit", 1, MAX_FACTS, 50)
        docs = (
            await self._c.find(query).sort("created_at_ms", DESCENDING).limit(limit).to_list(None)
        )
        facts = [fact_view(d) for d in docs]
        return {"facts": facts, **({} if facts else {"note": "no fact matches"})}

    async def remove(self, owner: Owner, args: dict[str, Any]) -> dict[str, Any]:
        fact_id = args.get("id")
        if fact_id:
            if not isinstance(fact_id, str):
                raise ToolError("'id' must be a fact id from relations_query")
            ids = [fact_id]
        else:
            parts = [
                norm(_text(args, k, limit=MAX_PART_CHARS))
                for k in ("subject", "relation", "object")
            ]
            ids = [owner.doc_id("fact", *parts)]
        # The owner is part of the filter: an id of another user's fact removes nothing.
        done = await self._c.delete_one(
            {"_id": ids[0], "tenant_id": owner.tenant_id, "user_id": owner.user_id}
        )
        if not done.deleted_count:
            raise ToolError("no such fact; see relations_query")
        return {"ok": True, "removed": ids[0]}
