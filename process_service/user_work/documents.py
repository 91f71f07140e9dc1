"""The user's documents: Markdown bodies at paths, in the `user_documents` collection, one
document per (tenant, user, path). `_id` is the JSON of the three (owner.py), so a read is an
`_id` lookup (docs/architecture.md "Store access"); the index on (tenant_id, user_id, path)
serves listings. Every edit compares and sets a version, so two edits at once both land or
one is told to read again. Files of the exec workspace are readable here as `workspace/...`."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from pymongo.asynchronous.database import AsyncDatabase

from process_service.tool_args import ToolError, ToolResult
from process_service.user_work.args import whole
from process_service.user_work.lazy_index import LazyIndex
from process_service.user_work.owner import Owner
from process_service.user_work.workspace import PREFIX, Workspaces
from vance.clock import Clock
from vance.json_types import JsonValue
from vance.store import Document, is_duplicate_key

MAX_BODY_CHARS = 200_000
MAX_PATH_CHARS = 200
MAX_LISTED = 500
_SEGMENT = re.compile(r"^[^/\x00-\x1f]{1,100}$")


@dataclass
class UserDocument:
    """One of the user's documents (a `user_documents` document), or a workspace file read
    as one (source "workspace", no `_id`, never edited)."""

    path: str
    title: str | None
    body: str
    size: int
    source: str = "documents"
    id: str = ""
    updated_at_ms: int | None = None
    version: int = 1

    @classmethod
    def from_doc(cls, doc: Document) -> UserDocument:
        body = str(doc.get("body") or "")
        return cls(
            id=str(doc["_id"]),
            path=str(doc["path"]),
            title=doc.get("title") or None,
            body=body,
            size=int(doc.get("size", len(body))),
            updated_at_ms=doc.get("updated_at_ms"),
            version=int(doc.get("v", 1)),
        )


class DocSummary(ToolResult):
    """A document as doc_list and the doc tools show it."""

    path: str
    title: str
    size: int
    updated_at: int
    source: str

    @classmethod
    def of(cls, doc: UserDocument) -> DocSummary:
        return cls(
            path=doc.path,
            title=doc.title or doc.path.rsplit("/", 1)[-1],
            size=doc.size,
            updated_at=doc.updated_at_ms or 0,
            source="documents",
        )


def clean_path(raw: JsonValue, *, allow_workspace: bool = True) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ToolError("'path' must be a non-empty text such as notes/todo.md")
    path = raw.strip().strip("/")
    segments = path.split("/")
    if len(path) > MAX_PATH_CHARS or any(
        s in (".", "..") or not _SEGMENT.match(s) for s in segments
    ):
        raise ToolError(
            f"bad path {raw!r}: folders and a name joined by '/', no '.' or '..' parts, "
            f"at most {MAX_PATH_CHARS} characters"
        )
    if not allow_workspace and (path + "/").startswith(PREFIX):
        raise ToolError("workspace/ holds the files your scripts write; pick another path")
    return path


def check_body(raw: JsonValue, name: str = "body") -> str:
    if not isinstance(raw, str):
        raise ToolError(f"'{name}' must be text")
    if len(raw) > MAX_BODY_CHARS:
        raise ToolError(f"'{name}' is longer than {MAX_BODY_CHARS} characters")
    return raw


class Documents:
    def __init__(self, db: AsyncDatabase[Document], workspaces: Workspaces, clock: Clock) -> None:
        self._c = db["user_documents"]
        self._workspaces = workspaces
        self._clock = clock
        self._index = LazyIndex(self._c, "path", "owner_path")

    async def create(self, owner: Owner, path: str, body: str, title: str) -> UserDocument:
        """A new document at `path` (checked by clean_path), `body` checked by check_body."""
        await self._index.ready()
        now = self._clock.now_ms()
        doc: Document = {
            "_id": owner.doc_id(path),
            "tenant_id": owner.tenant_id,
            "user_id": owner.user_id,
            "path": path,
            "title": title.strip()[:200] or None,
            "body": body,
            "size": len(body),
            "created_at_ms": now,
            "updated_at_ms": now,
            "v": 1,
        }
        try:
            await self._c.insert_one(doc)
        except Exception as exc:
            if is_duplicate_key(exc):
                raise ToolError(f"{path!r} exists already; change it with doc_edit") from exc
            raise
        return UserDocument.from_doc(doc)

    async def get(self, owner: Owner, path: str) -> UserDocument:
        """The document at `path` (checked by clean_path), or the workspace file there."""
        if (path + "/").startswith(PREFIX):
            text, size = await asyncio.to_thread(self._workspaces.read, owner, path)
            return UserDocument(
                path=path,
                title=path.removeprefix(PREFIX),
                body=text,
                size=size,
                source="workspace",
            )
        doc = await self._c.find_one({"_id": owner.doc_id(path)})
        if doc is None:
            raise ToolError(f"no document {path!r}; see doc_list")
        return UserDocument.from_doc(doc)

    async def edit(
        self, owner: Owner, path: str, text: str, from_line: int | None, to_line: int | None
    ) -> UserDocument:
        """Lines from..to of the document replaced by `text` (appended without from_line)."""
        for _ in range(5):  # another edit between our read and write: read again
            doc = await self.get(owner, path)
            body = _apply(doc.body, text, from_line, to_line)
            check_body(body)
            done = await self._c.update_one(
                {"_id": doc.id, "v": doc.version},
                {
                    "$set": {
                        "body": body,
                        "size": len(body),
                        "updated_at_ms": self._clock.now_ms(),
                    },
                    "$inc": {"v": 1},
                },
            )
            if done.modified_count:
                doc.body, doc.size, doc.version = body, len(body), doc.version + 1
                return doc
        raise ToolError(f"{path!r} is being changed by someone else right now; try again")

    async def listing(self, owner: Owner, prefix: str = "") -> list[DocSummary]:
        await self._index.ready()
        start = prefix.strip().strip("/")
        docs = await self._c.find(
            {"tenant_id": owner.tenant_id, "user_id": owner.user_id},
            {"size": 1, "path": 1, "title": 1, "updated_at_ms": 1},
        ).to_list(None)
        found = [DocSummary.of(UserDocument.from_doc(d)) for d in docs]
        files = await asyncio.to_thread(self._workspaces.files, owner)
        found += [
            DocSummary(
                path=f.path,
                title=f.path.removeprefix(PREFIX),
                size=f.size,
                updated_at=f.updated_at_ms,
                source="workspace",
            )
            for f in files
        ]
        if start:
            found = [d for d in found if d.path == start or d.path.startswith(start + "/")]
        return sorted(found, key=lambda d: d.path)[:MAX_LISTED]

    async def purge(self, owner: Owner, path: str, prefix: str) -> list[str]:
        """Deletes the document at `path`, else every document under `prefix` (both checked
        by clean_path; one is given)."""
        await self._index.ready()
        if path:
            done = await self._c.delete_one({"_id": owner.doc_id(path)})
            if not done.deleted_count:
                raise ToolError(f"no document {path!r}; see doc_list")
            return [path]
        found = await self.listing(owner, prefix)
        gone = [d.path for d in found if d.source == "documents"]
        if gone:
            await self._c.delete_many({"_id": {"$in": [owner.doc_id(p) for p in gone]}})
        return gone


def line_number(value: JsonValue, name: str) -> int:
    return whole(value, name, 1, 10_000_000)


def split_lines(body: str) -> tuple[list[str], bool]:
    """The body's lines, and whether it ends with a newline (which starts no line of its own)."""
    if not body:
        return [], False
    lines = body.split("\n")
    if lines[-1] == "":
        return lines[:-1], True
    return lines, False


def _apply(body: str, text: str, from_line: int | None, to_line: int | None) -> str:
    """The body with lines from..to replaced by text, or text appended (no from_line)."""
    lines, trailing = split_lines(body)
    added = text.split("\n") if text else []
    if from_line is None:
        if to_line is not None:
            raise ToolError("'toLine' needs a 'fromLine'")
        lines += added
    else:
        start = from_line
        end = start if to_line is None else to_line
        if end < start or end > len(lines):
            raise ToolError(
                f"lines {start}..{end} are not in the document, which has {len(lines)} lines"
            )
        lines = lines[: start - 1] + added + lines[end:]
    return "\n".join(lines) + ("\n" if trailing and lines else "")
