"""The user's own tools (specs.py), dispatched for process_service's tool host
(process_service/tools/process_tools.py hands every name in USER_WORK_TOOL_NAMES here). Each call works on the
calling process's owner's things only (owner.py) and reads the tenant's settings fresh
(vance/work_settings.py), so an admin's change applies to the next call."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pymongo.asynchronous.database import AsyncDatabase

from process_service.process_model import Process
from process_service.tool_args import ToolError, ToolResult, parse_args
from process_service.user_work.doc_models import (
    CreateArgs,
    DocCreated,
    DocEdited,
    DocList,
    DocPurged,
    DocRead,
    EditArgs,
    ListArgs,
    PurgeArgs,
    ReadArgs,
)
from process_service.user_work.documents import (
    DocSummary,
    Documents,
    UserDocument,
    split_lines,
)
from process_service.user_work.notes import (
    Done,
    FactAdded,
    FactRemoved,
    Facts,
    Relations,
    Scratchpad,
    Scratchpads,
    Written,
)
from process_service.user_work.owner import Owner
from process_service.user_work.sandbox import JobView, Sandbox
from process_service.user_work.workspace import PREFIX, Workspaces
from vance.clock import Clock
from vance.json_types import JsonObject
from vance.store import Document
from vance.v1 import session_pb2 as spb
from vance.v1 import session_pb2_grpc
from vance.work_settings import EXEC_ENABLED, WorkSettings

if TYPE_CHECKING:
    from process_service.user_work import web


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
        self.on_document: Callable[[Owner, str, UserDocument | None], Awaitable[None]] | None = None

    async def _changed(self, owner: Owner, path: str, doc: UserDocument | None) -> None:
        if self.on_document is not None:
            await self.on_document(owner, path, doc)

    async def settings(self, tenant: str) -> WorkSettings:
        found = await self._sessions.GetSettings(spb.GetSettingsRequest(tenant_id=tenant))
        return WorkSettings.from_values(dict(found.effective))

    async def invoke(self, tool: str, caller: Process, args: JsonObject, key: str) -> ToolResult:
        owner = Owner.of(caller)
        handler = getattr(self, f"_{tool}")
        result: ToolResult = await handler(owner, args, key)
        return result

    async def _doc_create(self, owner: Owner, args: JsonObject, key: str) -> DocCreated:
        parsed = parse_args(CreateArgs, args)
        doc = await self.documents.create(owner, parsed.path, parsed.body, parsed.title)
        await self._changed(owner, doc.path, doc)
        return DocCreated(created=DocSummary.of(doc))

    async def _doc_read(self, owner: Owner, args: JsonObject, key: str) -> DocRead:
        parsed = parse_args(ReadArgs, args)
        doc = await self.documents.get(owner, parsed.path)
        body = doc.body
        lines, _ = split_lines(body)
        if parsed.numbered:
            body = "\n".join(f"{i}: {line}" for i, line in enumerate(lines, 1))
        return DocRead(
            path=doc.path,
            title=doc.title or doc.path,
            body=body,
            lines=len(lines),
            source=doc.source,
            updated_at=doc.updated_at_ms,
        )

    async def _doc_edit(self, owner: Owner, args: JsonObject, key: str) -> DocEdited:
        parsed = parse_args(EditArgs, args)
        doc = await self.documents.edit(
            owner, parsed.path, parsed.text, parsed.from_line, parsed.to_line
        )
        await self._changed(owner, doc.path, doc)
        return DocEdited(edited=DocSummary.of(doc), lines=len(split_lines(doc.body)[0]))

    async def _doc_list(self, owner: Owner, args: JsonObject, key: str) -> DocList:
        found = await self.documents.listing(owner, parse_args(ListArgs, args).prefix)
        return DocList(documents=found, note=None if found else "no documents yet")

    async def _doc_purge(self, owner: Owner, args: JsonObject, key: str) -> DocPurged:
        parsed = parse_args(PurgeArgs, args)
        if not parsed.path and not parsed.prefix:
            raise ToolError("name a 'path' or a 'prefix' to delete")
        deleted = await self.documents.purge(owner, parsed.path, parsed.prefix)
        for path in deleted:
            await self._changed(owner, path, None)
        return DocPurged(deleted=deleted)

    async def _scratchpad_read(self, owner: Owner, args: JsonObject, key: str) -> Scratchpad:
        return await self._scratchpads.read(owner)

    async def _scratchpad_write(self, owner: Owner, args: JsonObject, key: str) -> Written:
        return await self._scratchpads.write(owner, args)

    async def _scratchpad_append(self, owner: Owner, args: JsonObject, key: str) -> Written:
        return await self._scratchpads.append(owner, args)

    async def _scratchpad_clear(self, owner: Owner, args: JsonObject, key: str) -> Done:
        return await self._scratchpads.clear(owner)

    async def _relations_add(self, owner: Owner, args: JsonObject, key: str) -> FactAdded:
        return await self._relations.add(owner, args)

    async def _relations_query(self, owner: Owner, args: JsonObject, key: str) -> Facts:
        return await self._relations.query(owner, args)

    async def _relations_remove(self, owner: Owner, args: JsonObject, key: str) -> FactRemoved:
        return await self._relations.remove(owner, args)

    async def _web_search(self, owner: Owner, args: JsonObject, key: str) -> web.SearchResults:
        # Imported on first use: httpx, BeautifulSoup and markdownify are a fifth of
        # process_service's start (docs/operations.md "Failure model": restart time).
        from process_service.user_work import web

        return await web.search(await self.settings(owner.tenant_id), args)

    async def _web_fetch(self, owner: Owner, args: JsonObject, key: str) -> web.FetchedPage:
        from process_service.user_work import web

        return await web.fetch(await self.settings(owner.tenant_id), args)

    async def _work_exec_run(self, owner: Owner, args: JsonObject, key: str) -> JobView:
        settings = await self.settings(owner.tenant_id)
        if not settings.exec_enabled:
            raise ToolError(
                "running scripts is off for this tenant; a tenant admin turns it on with the "
                f"setting {EXEC_ENABLED}=true"
            )
        result = await self.sandbox.run(owner, settings, args, key)
        files = await asyncio.to_thread(self.workspaces.files, owner)
        result.files = [f.path for f in files][:50]
        result.read_files_with = f"doc_read {PREFIX}<file>"
        return result

    async def _work_exec_status(self, owner: Owner, args: JsonObject, key: str) -> JobView:
        return self.sandbox.job(owner, args.get("jobId")).view()

    async def _work_exec_kill(self, owner: Owner, args: JsonObject, key: str) -> JobView:
        return await self.sandbox.kill(owner, args.get("jobId"))

    async def close(self) -> None:
        await self.sandbox.close()
