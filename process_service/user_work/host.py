"""The user's own tools (specs.py), dispatched for process_service's tool host
(process_service/tools.py hands every name in USER_WORK_TOOL_NAMES here). Each call works on the
calling process's owner's things only (owner.py) and reads the tenant's settings fresh
(vance/work_settings.py), so an admin's change applies to the next call."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pymongo.asynchronous.database import AsyncDatabase

from process_service.process_model import Process
from process_service.tool_args import ToolError
from process_service.user_work import web
from process_service.user_work.documents import Documents, split_lines, summary
from process_service.user_work.notes import Relations, Scratchpads
from process_service.user_work.owner import Owner
from process_service.user_work.sandbox import Sandbox
from process_service.user_work.workspace import PREFIX, Workspaces
from vance.clock import Clock
from vance.store import Document
from vance.v1 import session_pb2 as spb
from vance.v1 import session_pb2_grpc
from vance.work_settings import EXEC_ENABLED, WorkSettings


class UserWork:
    def __init__(
        self,
        db: AsyncDatabase[Document],
        sessions: session_pb2_grpc.SessionServiceAsyncStub,
        clock: Clock,
        workspace_root: Path,
    ) -> None:
        self.workspaces = Workspaces(workspace_root)
        self.documents = Documents(db, self.workspaces, clock)
        self._scratchpads = Scratchpads(db, clock)
        self._relations = Relations(db, clock)
        self.sandbox = Sandbox(self.workspaces)
        self._sessions = sessions
        # Told of every document a doc tool created, changed or deleted (None), so the RAG
        # index follows (process_service/knowledge/base.py); set at wiring.
        self.on_document: Callable[[Owner, str, Document | None], Awaitable[None]] | None = None

    async def _changed(self, owner: Owner, path: str, doc: Document | None) -> None:
        if self.on_document is not None:
            await self.on_document(owner, path, doc)

    async def settings(self, tenant: str) -> WorkSettings:
        found = await self._sessions.GetSettings(spb.GetSettingsRequest(tenant_id=tenant))
        return WorkSettings.from_values(dict(found.effective))

    async def invoke(self, tool: str, caller: Process, args: dict[str, Any], key: str) -> Any:
        owner = Owner.of(caller)
        handler = getattr(self, f"_{tool}")
        return await handler(owner, args, key)

    async def _doc_create(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        doc = await self.documents.create(
            owner, args.get("path"), args.get("body"), args.get("title")
        )
        await self._changed(owner, doc["path"], doc)
        return {"created": summary(doc)}

    async def _doc_read(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        doc = await self.documents.get(owner, args.get("path"))
        body = str(doc.get("body") or "")
        lines, _ = split_lines(body)
        if args.get("numbered") is True:
            body = "\n".join(f"{i}: {line}" for i, line in enumerate(lines, 1))
        return {
            "path": doc["path"],
            "title": doc.get("title") or doc["path"],
            "body": body,
            "lines": len(lines),
            "source": doc.get("source") or "documents",
            "updatedAt": doc.get("updated_at_ms"),
        }

    async def _doc_edit(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        doc = await self.documents.edit(
            owner, args.get("path"), args.get("text"), args.get("fromLine"), args.get("toLine")
        )
        await self._changed(owner, doc["path"], doc)
        return {"edited": summary(doc), "lines": len(split_lines(str(doc.get("body") or ""))[0])}

    async def _doc_list(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        found = await self.documents.listing(owner, args.get("prefix"))
        return {"documents": found, **({} if found else {"note": "no documents yet"})}

    async def _doc_purge(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        deleted = await self.documents.purge(owner, args.get("path"), args.get("prefix"))
        for path in deleted:
            await self._changed(owner, path, None)
        return {"deleted": deleted}

    async def _scratchpad_read(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        return await self._scratchpads.read(owner)

    async def _scratchpad_write(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        return await self._scratchpads.write(owner, args)

    async def _scratchpad_append(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        return await self._scratchpads.append(owner, args)

    async def _scratchpad_clear(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        return await self._scratchpads.clear(owner)

    async def _relations_add(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        return {"fact": await self._relations.add(owner, args)}

    async def _relations_query(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        return await self._relations.query(owner, args)

    async def _relations_remove(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        return await self._relations.remove(owner, args)

    async def _web_search(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        return await web.search(await self.settings(owner.tenant_id), args)

    async def _web_fetch(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        return await web.fetch(await self.settings(owner.tenant_id), args)

    async def _work_exec_run(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        settings = await self.settings(owner.tenant_id)
        if not settings.exec_enabled:
            raise ToolError(
                "running scripts is off for this tenant; a tenant admin turns it on with the "
                f"setting {EXEC_ENABLED}=true"
            )
        result = await self.sandbox.run(owner, settings, args, key)
        files = await asyncio.to_thread(self.workspaces.files, owner)
        result["files"] = [f.path for f in files][:50]
        result["readFilesWith"] = f"doc_read {PREFIX}<file>"
        return result

    async def _work_exec_status(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        return self.sandbox.job(owner, args.get("jobId")).view()

    async def _work_exec_kill(self, owner: Owner, args: dict[str, Any], key: str) -> Any:
        return await self.sandbox.kill(owner, args.get("jobId"))

    async def close(self) -> None:
        await self.sandbox.close()
