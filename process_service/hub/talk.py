"""Eddie talking to projects on the user's behalf (docs/architecture.md "Eddie"): `project_steer`
says something to a project's chat, and the questions workers ask the hub are kept as *asks*,
each with its own id, so the user's answer goes to the question it answers (by the option
clicked, the only open question, or Eddie's choice), never to whatever came last.

An ask is stored per hub process in `hub_asks` under `<hub process>:<ask id>`. It is opened when
Eddie's turn meets a worker's BLOCKED event (`hub_ask_open`), superseded by a newer question of
the same worker, closed when answered, and dropped as stale once the worker is no longer
BLOCKED (answered elsewhere, stopped): `hub_asks` reads the workers' statuses with the asks."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import grpc
from pydantic import Field, field_validator
from pymongo.asynchronous.database import AsyncDatabase

from process_service.process_model import Process
from process_service.store.process_store import ProcessStore
from process_service.tool_args import (
    OptText,
    Text,
    ToolArgs,
    ToolError,
    ToolResult,
    parse_args,
    rpc_details,
)
from vance.domain import ProcessStatus
from vance.json_types import JsonObject, JsonValue
from vance.store import Document

if TYPE_CHECKING:
    from process_service.hub.tools import HubTools

MAX_OPEN = 20  # open asks shown to Eddie; older ones stay stored and answerable by id


class SteerArgs(ToolArgs):
    project: Text
    message: Text
    process_id: OptText = ""


class AskArgs(ToolArgs):
    ask_id: Text
    process_id: Text
    # The worker's answer options as it sent them (strings or objects): shown to Eddie as
    # they are; anything but a list counts as none.
    options: list[JsonValue] = Field(default_factory=list)
    project: OptText = ""
    source: OptText = ""
    question: OptText = ""

    @field_validator("options", mode="before")
    @classmethod
    def _list(cls, value: JsonValue) -> JsonValue:
        return value if isinstance(value, list) else []


class AnswerArgs(ToolArgs):
    ask_id: Text
    message: Text


class ProjectSteered(ToolResult):
    project: str
    process_id: str
    process_name: str
    outcome: str


class AskOpened(ToolResult):
    ask_id: str


class Ask(ToolResult):
    """An open question of a worker, as Eddie sees it (a `hub_asks` document)."""

    ask_id: str
    process_id: str
    project: str | None
    source: str | None
    question: str
    options: list[JsonValue]  # as the worker sent them

    @classmethod
    def from_doc(cls, d: Document) -> Ask:
        return cls(
            ask_id=str(d["ask_id"]),
            process_id=str(d["process_id"]),
            project=d.get("project") or None,
            source=d.get("source") or None,
            question=d.get("question") or "",
            options=d.get("options") or [],
        )


class OpenAsks(ToolResult):
    asks: list[Ask]


class Answered(ToolResult):
    ask_id: str
    process_id: str
    project: str | None
    outcome: str


def forwarded_by(caller: Process) -> dict[str, str]:
    """The hop tag of the user's words Eddie passes on (seed 001 §7.3)."""
    return {
        "engine": str(caller.engine or "eddie"),
        "processId": caller.id,
        "viaSession": caller.session_id,
    }


class HubTalk:
    def __init__(self, db: AsyncDatabase[Document], store: ProcessStore, hub: HubTools) -> None:
        self._asks = db["hub_asks"]
        self._observations = db["observations"]
        self._store = store
        self._hub = hub

    async def invoke(self, tool: str, caller: Process, args: JsonObject, key: str) -> ToolResult:
        handler = getattr(self, f"_{tool}")
        try:
            result: ToolResult = await handler(caller, args, key)
        except grpc.aio.AioRpcError as exc:  # session_service, read by project_open
            raise ToolError(rpc_details(exc)) from exc
        return result

    async def _chat_of(self, caller: Process, project: str) -> Process:
        """The process Eddie talks to in a project: the one of it Eddie observes (connected by
        project_create or project_open), else the chat of its most recent session."""
        async for doc in self._observations.find({f"observers.{caller.id}.project": project}):
            try:
                found = await self._hub.owned(caller, str(doc["_id"]))
            except ToolError:
                continue
            if not found.closed:
                return found
        opened = await self._hub.project_open(caller, project)
        chat = opened.connected_to
        if not chat:
            raise ToolError(f"project {project!r} has no open chat; project_open shows it")
        return await self._hub.owned(caller, chat)

    async def _project_steer(self, caller: Process, args: JsonObject, key: str) -> ProjectSteered:
        """The user's words to a project's chat, as USER_CHAT_INPUT from the user with
        `forwardedBy` naming Eddie. processId may name another process of that project."""
        parsed = parse_args(SteerArgs, args)
        project, message, process_id = parsed.project, parsed.message, parsed.process_id
        if process_id:
            target = await self._hub.owned(caller, process_id)
            if target.project_id != project:
                raise ToolError(f"process {process_id!r} is not in project {project!r}")
        else:
            target = await self._chat_of(caller, project)
        outcome = await self._hub.say(caller, target, message, key, forwarded=forwarded_by(caller))
        return ProjectSteered(
            project=project,
            process_id=target.id,
            process_name=target.name,
            outcome=outcome,
        )

    async def _hub_ask_open(self, caller: Process, args: JsonObject, key: str) -> AskOpened:
        """A worker's question reached this hub: kept until answered or stale. Idempotent."""
        parsed = parse_args(AskArgs, args)
        hub, ask_id, process_id = caller.id, parsed.ask_id, parsed.process_id
        await self._asks.update_one(
            {"_id": f"{hub}:{ask_id}"},
            {
                "$setOnInsert": {
                    "hub": hub,
                    "ask_id": ask_id,
                    "process_id": process_id,
                    "project": parsed.project,
                    "source": parsed.source,
                    "question": parsed.question,
                    "options": parsed.options,
                    "open": True,
                    "created_ms": int(time.time() * 1000),
                }
            },
            upsert=True,
        )
        # The worker asks anew: its older question is superseded, not left to be answered.
        await self._asks.update_many(
            {"hub": hub, "process_id": process_id, "open": True, "ask_id": {"$ne": ask_id}},
            {"$set": {"open": False, "closed": "superseded"}},
        )
        return AskOpened(ask_id=ask_id)

    async def _hub_asks(self, caller: Process, args: JsonObject, key: str) -> OpenAsks:
        return OpenAsks(asks=await self.open_asks(caller.id))

    async def open_asks(self, hub: str) -> list[Ask]:
        docs = (
            await self._asks.find({"hub": hub, "open": True})
            .sort("created_ms", 1)
            .to_list(MAX_OPEN)
        )
        if not docs:
            return []
        ids = list({str(d["process_id"]) for d in docs})
        statuses = await self._store.statuses(ids)
        stale = [
            d["_id"]
            for d in docs
            if statuses.get(str(d["process_id"])) is not ProcessStatus.BLOCKED
        ]
        if stale:
            await self._asks.update_many(
                {"_id": {"$in": stale}}, {"$set": {"open": False, "closed": "stale"}}
            )
        return [Ask.from_doc(d) for d in docs if d["_id"] not in stale]

    async def _answer_question(self, caller: Process, args: JsonObject, key: str) -> Answered:
        """The user's answer to one open question, to the worker that asked it."""
        parsed = parse_args(AnswerArgs, args)
        ask_id, message = parsed.ask_id, parsed.message
        hub = caller.id
        doc = await self._asks.find_one({"_id": f"{hub}:{ask_id}"})
        if doc is None or (not doc.get("open") and doc.get("answer_key") != key):
            raise ToolError(f"no open question {ask_id!r}; the open ones are listed in the turn")
        target = await self._hub.owned(caller, str(doc["process_id"]))
        outcome = await self._hub.say(
            caller, target, message, key, forwarded=forwarded_by(caller), ask_id=ask_id
        )
        await self._asks.update_one(
            {"_id": doc["_id"]},
            {"$set": {"open": False, "closed": "answered", "answer_key": key, "answer": message}},
        )
        return Answered(
            ask_id=ask_id,
            process_id=str(doc["process_id"]),
            project=doc.get("project") or None,
            outcome=outcome,
        )
