"""The user's documents: Markdown bodies at paths, in the `user_documents` collection, one
document per (tenant, user, path). `_id` is the JSON of the three (owner.py), so a read is an
`_id` lookup (docs/architecture.md "Store access"); the index on (tenant_id, user_id, path)
serves listings. Every edit compares and sets a version, so two edits at once both land or
one is told to read again. Files of the exec workspace are readable here as `workspace/...`."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pymongo.asynchronous.database import AsyncDatabase

from process_service.tool_args import ToolError
from process_service.user_work.args import whole
from process_service.user_work.lazy_index import LazyIndex
from process_service.user_work.owner import Owner
from process_service.user_work.workspace import PREFIX, Workspaces
from vance.clock import Clock
from vance.store import Document, is_duplicate_key

MAX_BODY_CHARS = 200_000
MAX_PATH_CHARS = 200
MAX_LISTED = 500
_SEGMENT = re.compile(r"^[^/\x00-\x1f]{1,100}$")


def clean_path(raw: Any, *, allow_workspace: bool = True) -> str:
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


def _body(raw: Any, name: str = "body") -> str:
    if not isinstance(raw, str):
        raise ToolError(f"'{name}' must be text")
    if len(raw) > MAX_BODY_CHARS:
        raise ToolError(f"'{name}' is longer than {MAX_BODY_CHARS} characters")
    return raw


def summary(doc: Document) -> dict[str, Any]:
    return {
        "path": doc["path"],
        "title": doc.get("title") or doc["path"].rsplit("/", 1)[-1],
        "size": doc.get("size", len(doc.get("body") or "")),
        "updatedAt": doc.get("updated_at_ms", 0),
        "source": "documents",
    }


class Documents:
    def __init__(self, db: AsyncDatabase[Document], workspaces: Workspaces, clock: Clock) -> None:
        self._c = db["user_documents"]
        self._workspaces = workspaces
        self._clock = clock
        self._index = LazyIndex(self._c, "path", "owner_path")

    async def create(self, owner: Owner, path: Any, body: Any, title: Any = None) -> Document:
        await self._index.ready()
        clean = clean_path(path, allow_workspace=False)
        now = self._clock.now_ms()
        doc: Document = {
            "_id": owner.doc_id(clean),
            "tenant_id": owner.tenant_id,
            "user_id": owner.user_id,
            "path": clean,
            "title": str(title or "").strip()[:200] or None,
            "body": _body(body),
            "size": len(body),
            "created_at_ms": now,
            "updated_at_ms": now,
            "v": 1,
        }
        try:
            await self._c.insert_one(doc)
        except Exception as exc:
            if is_duplicate_key(exc):
                raise ToolError(f"{clean!r} exists already; change it with doc_edit") from exc
            raise
        return doc

    async def get(self, owner: Owner, path: Any) -> Document:
        clean = clean_path(path)
        if (clean + "/").startswith(PREFIX):
            text, size = await asyncio.to_thread(self._workspaces.read, owner, clean)
            return {
                "path": clean,
                "title": clean.removeprefix(PREFIX),
                "body": text,
                "size": size,
                "source": "workspace",
            }
        doc = await self._c.find_one({"_id": owner.doc_id(clean)})
        if doc is None:
            raise ToolError(f"no document {clean!r}; see doc_list")
        return doc

    async def edit(
        self, owner: Owner, path: Any, text: Any, from_line: Any, to_line: Any
    ) -> Document:
        clean = clean_path(path, allow_workspace=False)
        new_text = _body(text, "text")
        for _ in range(5):  # another edit between our read and write: read again
            doc = await self.get(owner, clean)
            body = _apply(str(doc.get("body") or ""), new_text, from_line, to_line)
            _body(body)
            done = await self._c.update_one(
                {"_id": doc["_id"], "v": doc.get("v", 1)},
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
                doc["body"], doc["size"] = body, len(body)
                return doc
        raise ToolError(f"{clean!r} is being changed by someone else right now; try again")

    async def listing(self, owner: Owner, prefix: Any = None) -> list[dict[str, Any]]:
        await self._index.ready()
        start = str(prefix or "").strip().strip("/")
        query: dict[str, Any] = {"tenant_id": owner.tenant_id, "user_id": owner.user_id}
        docs = await self._c.find(
            query, {"size": 1, "path": 1, "title": 1, "updated_at_ms": 1}
        ).to_list(None)
        found = [summary(d) for d in docs]
        files = await asyncio.to_thread(self._workspaces.files, owner)
        found += [
            {
                "path": f.path,
                "title": f.path.removeprefix(PREFIX),
                "size": f.size,
                "updatedAt": f.updated_at_ms,
                "source": "workspace",
            }
            for f in files
        ]
        if start:
            found = [d for d in found if d["path"] == start or d["path"].startswith(start + "/")]
        return sorted(found, key=lambda d: str(d["path"]))[:MAX_LISTED]

    async def purge(self, owner: Owner, path: Any, prefix: Any) -> list[str]:
        await self._index.ready()
        if path:
            clean = clean_path(path, allow_workspace=False)
            done = await self._c.delete_one({"_id": owner.doc_id(clean)})
            if not done.deleted_count:
                raise ToolError(f"no document {clean!r}; see doc_list")
            return [clean]
        if not prefix:
            raise ToolError("name a 'path' or a 'prefix' to delete")
        folder = clean_path(prefix, allow_workspace=False)
        gone = [d["path"] for d in await self.listing(owner, folder) if d["source"] == "documents"]
        if gone:
            await self._c.delete_many({"_id": {"$in": [owner.doc_id(p) for p in gone]}})
        return gone


def _line(value: Any, name: str) -> int:
    return whole(value, name, 1, 10_000_000)


def split_lines(body: str) -> tuple[list[str], bool]:
    """The body's lines, and whether it ends with a newline (which starts no line of its own)."""
    if not body:
        return [], False
    lines = body.split("\n")
    if lines[-1] == "":
        return lines[:-1], True
    return lines, False


def _apply(body: str, text: str, from_line: Any, to_line: Any) -> str:
    """The body with lines from..to replaced by text, or text appended (no from_line)."""
    lines, trailing = split_lines(body)
    added = text.split("\n") if text else []
    if from_line is None:
        if to_line is not None:
            raise ToolError("'toLine' needs a 'fromLine'")
        lines += added
    else:
        start = _line(from_line, "fromLine")
        end = start if to_line is None else _line(to_line, "toLine")
        if end < start or end > len(lines):
            raise ToolError(
                f"lines {start}..{end} are not in the document, which has {len(lines)} lines"
            )
        lines = lines[: start - 1] + added + lines[end:]
    return "\n".join(lines) + ("\n" if trailing and lines else "")
