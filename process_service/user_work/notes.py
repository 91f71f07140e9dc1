"""The user's scratchpad (one text per user, `user_scratchpads`, `_id` the owner) and facts
(`user_relations`: subject - relation - object with a source, one document per distinct fact,
`_id` the owner and the fact's normalised words, so adding a fact twice keeps one)."""

from __future__ import annotations

import re

from pydantic import ValidationInfo, field_validator
from pymongo import DESCENDING, ReturnDocument
from pymongo.asynchronous.database import AsyncDatabase

from process_service.tool_args import (
    ToolArgs,
    ToolError,
    ToolResult,
    parse_args,
    reason,
    reasoned,
)
from process_service.user_work.args import whole_checked
from process_service.user_work.lazy_index import LazyIndex
from process_service.user_work.owner import Owner
from vance.clock import Clock
from vance.json_types import JsonObject, JsonValue
from vance.store import Document

MAX_SCRATCHPAD_CHARS = 64_000
MAX_PART_CHARS = 500
MAX_FACTS = 200
_SPACE = re.compile(r"\s+")


def _text(value: JsonValue, name: str, *, required: bool = True, limit: int) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ToolError(f"'{name}' must be a non-empty text")
    if len(value) > limit:
        raise ToolError(f"'{name}' is longer than {limit} characters")
    return value


def norm(value: str) -> str:
    return _SPACE.sub(" ", value.strip()).casefold()


def _checked(value: JsonValue, name: str, *, required: bool = True, limit: int) -> str:
    return reasoned(lambda: _text(value, name, required=required, limit=limit))


class TextArgs(ToolArgs):
    NULL_WHEN_ABSENT = ("text",)

    text: str

    @field_validator("text", mode="before")
    @classmethod
    def _check(cls, value: JsonValue) -> str:
        return _checked(value, "text", limit=MAX_SCRATCHPAD_CHARS)


class AddArgs(ToolArgs):
    NULL_WHEN_ABSENT = ("subject", "relation", "object")

    subject: str
    relation: str
    object: str
    source: str = ""

    @field_validator("subject", "relation", "object", "source", mode="before")
    @classmethod
    def _part(cls, value: JsonValue, info: ValidationInfo) -> str:
        name = str(info.field_name)
        return _checked(value, name, required=name != "source", limit=MAX_PART_CHARS).strip()


class QueryArgs(ToolArgs):
    subject: str = ""
    relation: str = ""
    object: str = ""
    limit: int = 50

    @field_validator("subject", "relation", "object", mode="before")
    @classmethod
    def _part(cls, value: JsonValue, info: ValidationInfo) -> str:
        return _checked(value, str(info.field_name), required=False, limit=MAX_PART_CHARS)

    @field_validator("limit", mode="before")
    @classmethod
    def _limit(cls, value: JsonValue) -> int:
        return whole_checked(value, "limit", 1, MAX_FACTS, 50)


class RemoveArgs(ToolArgs):
    """A fact by its id, else by its three parts."""

    NULL_WHEN_ABSENT = ("subject", "relation", "object")

    id: str = ""
    subject: str
    relation: str
    object: str

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, value: JsonValue) -> str:
        if value and not isinstance(value, str):
            raise reason("'id' must be a fact id from relations_query")
        return value if isinstance(value, str) else ""

    @field_validator("subject", "relation", "object", mode="before")
    @classmethod
    def _part(cls, value: JsonValue, info: ValidationInfo) -> str:
        if info.data.get("id"):
            return ""  # the id names the fact
        return norm(_checked(value, str(info.field_name), limit=MAX_PART_CHARS))


class Written(ToolResult):
    ok: bool
    chars: int


class Done(ToolResult):
    ok: bool


class Scratchpad(ToolResult):
    OMIT_NONE = frozenset({"note"})

    text: str
    updated_at: int | None
    note: str | None = None


class Fact(ToolResult):
    """A stored fact (a `user_relations` document) as the model sees it."""

    id: str
    subject: str
    relation: str
    object: str
    source: str | None
    created_at: int | None

    @classmethod
    def from_doc(cls, doc: Document) -> Fact:
        return cls(
            id=str(doc["_id"]),
            subject=str(doc["subject"]),
            relation=str(doc["relation"]),
            object=str(doc["object"]),
            source=doc.get("source") or None,
            created_at=doc.get("created_at_ms"),
        )


class Facts(ToolResult):
    OMIT_NONE = frozenset({"note"})

    facts: list[Fact]
    note: str | None = None


class FactAdded(ToolResult):
    fact: Fact


class FactRemoved(ToolResult):
    ok: bool
    removed: str


class Scratchpads:
    def __init__(self, db: AsyncDatabase[Document], clock: Clock) -> None:
        self._c = db["user_scratchpads"]
        self._clock = clock

    async def read(self, owner: Owner) -> Scratchpad:
        doc = await self._c.find_one({"_id": owner.doc_id()})
        text = str((doc or {}).get("text") or "")
        return Scratchpad(
            text=text,
            updated_at=(doc or {}).get("updated_at_ms"),
            note=None if text else "the scratchpad is empty",
        )

    async def _set(self, owner: Owner, text: str) -> Written:
        if len(text) > MAX_SCRATCHPAD_CHARS:
            raise ToolError(f"the scratchpad holds at most {MAX_SCRATCHPAD_CHARS} characters")
        await self._c.update_one(
            {"_id": owner.doc_id()},
            {"$set": {"text": text, "updated_at_ms": self._clock.now_ms()}},
            upsert=True,
        )
        return Written(ok=True, chars=len(text))

    async def write(self, owner: Owner, args: JsonObject) -> Written:
        return await self._set(owner, parse_args(TextArgs, args).text)

    async def append(self, owner: Owner, args: JsonObject) -> Written:
        line = parse_args(TextArgs, args).text
        doc = await self._c.find_one({"_id": owner.doc_id()})
        text = str((doc or {}).get("text") or "")
        joined = f"{text.rstrip(chr(10))}\n{line}" if text else line
        return await self._set(owner, joined)

    async def clear(self, owner: Owner) -> Done:
        await self._c.delete_one({"_id": owner.doc_id()})
        return Done(ok=True)


class Relations:
    def __init__(self, db: AsyncDatabase[Document], clock: Clock) -> None:
        self._c = db["user_relations"]
        self._clock = clock
        self._index = LazyIndex(self._c, "s", "owner_subject")

    async def add(self, owner: Owner, args: JsonObject) -> FactAdded:
        parsed = parse_args(AddArgs, args)
        await self._index.ready()
        parts = {"subject": parsed.subject, "relation": parsed.relation, "object": parsed.object}
        source = parsed.source
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
        return FactAdded(fact=Fact.from_doc(doc))

    async def query(self, owner: Owner, args: JsonObject) -> Facts:
        parsed = parse_args(QueryArgs, args)
        await self._index.ready()
        query: dict[str, str] = {"tenant_id": owner.tenant_id, "user_id": owner.user_id}
        for value, key in ((parsed.subject, "s"), (parsed.relation, "r"), (parsed.object, "o")):
            if value.strip():
                query[key] = norm(value)
        docs = (
            await self._c.find(query)
            .sort("created_at_ms", DESCENDING)
            .limit(parsed.limit)
            .to_list(None)
        )
        facts = [Fact.from_doc(d) for d in docs]
        return Facts(facts=facts, note=None if facts else "no fact matches")

    async def remove(self, owner: Owner, args: JsonObject) -> FactRemoved:
        parsed = parse_args(RemoveArgs, args)
        if parsed.id:
            ids = [parsed.id]
        else:
            ids = [owner.doc_id("fact", parsed.subject, parsed.relation, parsed.object)]
        # The owner is part of the filter: an id of another user's fact removes nothing.
        done = await self._c.delete_one(
            {"_id": ids[0], "tenant_id": owner.tenant_id, "user_id": owner.user_id}
        )
        if not done.deleted_count:
            raise ToolError("no such fact; see relations_query")
        return FactRemoved(ok=True, removed=ids[0])
