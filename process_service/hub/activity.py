"""The hubs' activity log (seed 001 §6.2, docs/architecture.md "Hubs that know what each other
did"): what each Eddie process of a user did, one line per entry, append-only, so the user's
other hubs know it on their next turn and can recap it.

An entry is written once per completed Eddie turn (`hub_activity_record`, called by the engine)
and right after each organizational tool call (`after_tool`, from ProcessTools). Its `_id` is
the writing process plus the call's idempotency key, so a redone turn writes it once. Read: the
peers' entries (same tenant and user, another Eddie process) of the last 3 days, at most 50,
newest first; one index on (tenant_id, user_id, ts) serves exactly that query (the process
filter is applied to what the index yields). Nothing is deleted: older entries stay stored,
the read window hides them (seed 001 §10)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import field_validator
from pymongo.asynchronous.database import AsyncDatabase

from process_service.process_model import Process
from process_service.tool_args import (
    OptText,
    Text,
    ToolArgs,
    ToolResult,
    parse_args,
    reason,
)
from process_service.user_work.lazy_index import LazyIndex
from vance.clock import Clock
from vance.domain import PeerEventType
from vance.json_types import JsonObject, JsonValue
from vance.store import Document, is_duplicate_key

logger = logging.getLogger(__name__)

WINDOW_MS = 3 * 24 * 3600 * 1000  # the peers' entries read: the last 3 days ...
PEER_LIMIT = 50  # ... at most this many, newest first
SUMMARY_CHARS = 300
_TEXT = 100  # characters of a user's words or a task quoted in a summary


class ActivityKind(StrEnum):
    PROJECT_CREATED = "PROJECT_CREATED"
    PROJECT_OPENED = "PROJECT_OPENED"
    PROJECT_ARCHIVED = "PROJECT_ARCHIVED"
    PROJECT_STEERED = "PROJECT_STEERED"
    PROCESS_SPAWNED = "PROCESS_SPAWNED"
    PROCESS_CHANGED = "PROCESS_CHANGED"
    PROCESS_OBSERVED = "PROCESS_OBSERVED"
    QUESTION_ANSWERED = "QUESTION_ANSWERED"
    INBOX_FORWARDED = "INBOX_FORWARDED"
    FACT_RECORDED = "FACT_RECORDED"
    DOCUMENT_WRITTEN = "DOCUMENT_WRITTEN"
    PEER_NOTIFIED = "PEER_NOTIFIED"
    USER_STATEMENT = "USER_STATEMENT"
    TOOL_CALL = "TOOL_CALL"


# The kinds a bootstrap recap speaks about: what changed the user's projects and processes.
RECAP_KINDS = frozenset(
    {
        ActivityKind.PROJECT_CREATED,
        ActivityKind.PROJECT_ARCHIVED,
        ActivityKind.PROCESS_SPAWNED,
        ActivityKind.PROCESS_CHANGED,
        ActivityKind.PEER_NOTIFIED,
    }
)


class Ref(ToolResult):
    """What an entry is about: a project, a process (by id, or by name in the hub's session),
    an inbox item, a document."""

    type: str
    id: str


def _refs(*pairs: tuple[str, str]) -> list[Ref]:
    return [Ref(type=t, id=i) for t, i in pairs]


@dataclass
class Fact:
    """One organizational call as the log and the peers read it; `peer` is the peer event type
    it is pushed to the other hubs with, None for what waits for their next turn."""

    kind: ActivityKind
    summary: str
    refs: list[Ref] = field(default_factory=list)
    peer: PeerEventType | None = None


def _cut(text: JsonValue, n: int = _TEXT) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def describe(tool: str, args: JsonObject, result: ToolResult) -> Fact | None:
    """The fact of a successful organizational (or user-work writing) call; None for reads.

    It reads the call as the model wrote and saw it, as JSON: the tools it covers live in
    several modules (hub_tools, hub_talk, tools, user_work), which it does not import."""
    r = result.to_json()
    project = str(r.get("project") or args.get("name") or args.get("project") or "")
    pref = _refs(("project", project)) if project else []
    match tool:
        case "project_create":
            task = _cut(args.get("steerContent"))
            text = f"created the project {project}" + (f" for: {task}" if task else "")
            chat = _refs(("process", str(r["chatProcessId"]))) if r.get("chatProcessId") else []
            return Fact(
                ActivityKind.PROJECT_CREATED, text, pref + chat, PeerEventType.PROJECT_CREATED
            )
        case "project_archive":
            text = f"archived the project {project}"
            return Fact(ActivityKind.PROJECT_ARCHIVED, text, pref, PeerEventType.PROJECT_ARCHIVED)
        case "project_open":
            return Fact(ActivityKind.PROJECT_OPENED, f"opened the project {project}", pref)
        case "project_steer":
            text = f"told the project {project}: {_cut(args.get('message'))}"
            return Fact(ActivityKind.PROJECT_STEERED, text, pref)
        case "process_command":
            pid, command = str(r.get("processId", "")), str(args.get("command", "")).lower()
            refs = _refs(("process", pid))
            text = f"{command} the process {pid} (now {r.get('status', '?')})"
            return Fact(ActivityKind.PROCESS_CHANGED, text, refs, PeerEventType.PROCESS_CHANGED)
        case "process_observe":
            pid = str(r.get("processId", ""))
            text = f"listens to the process {pid} in mode {r.get('channelMode', '')}"
            return Fact(ActivityKind.PROCESS_OBSERVED, text, _refs(("process", pid)))
        case "process_create" | "process_create_delegate":
            nested = r.get("process")
            spawned = nested if isinstance(nested, dict) else r
            name = str(spawned.get("name") or args.get("name") or "")
            text = f"started the worker {name}: {_cut(args.get('goal') or args.get('task'))}"
            refs = _refs(("process_name", name))  # a name in the hub's session
            return Fact(ActivityKind.PROCESS_SPAWNED, text, refs, PeerEventType.PROCESS_SPAWNED)
        case "answer_question":
            text = f"passed the user's answer on to {r.get('project') or r.get('processId')}"
            return Fact(ActivityKind.QUESTION_ANSWERED, text, pref)
        case "inbox_forward_to_user":
            text = f"put '{_cut(args.get('title'), 60)}' into the user's inbox"
            return Fact(ActivityKind.INBOX_FORWARDED, text, _refs(("inbox", str(r.get("id", "")))))
        case "relations_add":
            fact = " ".join(_cut(args.get(k), 60) for k in ("subject", "relation", "object"))
            return Fact(ActivityKind.FACT_RECORDED, f"noted the fact: {fact}")
        case "relations_remove":
            return Fact(ActivityKind.FACT_RECORDED, "removed a fact")
        case "doc_create" | "doc_edit":
            verb = "wrote" if tool == "doc_create" else "edited"
            path = _cut(args.get("path"), 80)
            return Fact(
                ActivityKind.DOCUMENT_WRITTEN,
                f"{verb} the document {path}",
                _refs(("document", path)),
            )
        case _:
            return None


class ActivityEntry(ToolResult):
    """One entry of the log as a hub reads it (`peerActivity` of hub_context)."""

    at_ms: int
    kind: str
    summary: str
    hub_session_id: str
    eddie_process_id: str
    refs: list[Ref]

    @classmethod
    def from_doc(cls, doc: Document) -> ActivityEntry:
        return cls(
            at_ms=int(doc["ts"]),
            kind=str(doc["kind"]),
            summary=str(doc["summary"]),
            hub_session_id=str(doc.get("session_id", "")),
            eddie_process_id=str(doc.get("eddie_process_id", "")),
            refs=[Ref.model_validate(r) for r in doc.get("refs") or []],
        )


@dataclass(frozen=True)
class Recorded:
    """An entry as written: its `_id` (the process and the call's key) and its time."""

    id: str
    at_ms: int


class RecordArgs(ToolArgs):
    kind: OptText = ""  # USER_STATEMENT when not given
    summary: Text

    @field_validator("kind")
    @classmethod
    def _engine_kind(cls, kind: str) -> str:
        if kind and kind not in (ActivityKind.USER_STATEMENT.value, ActivityKind.TOOL_CALL.value):
            raise reason("kind must be USER_STATEMENT or TOOL_CALL")
        return kind


class RecordedResult(ToolResult):
    id: str
    at_ms: int


class ActivityLog:
    def __init__(self, db: AsyncDatabase[Document], clock: Clock) -> None:
        self._col = db["eddie_activity"]
        self._index = LazyIndex(self._col, "ts", "eddie_activity_owner_ts")
        self._clock = clock

    async def record(self, caller: Process, fact: Fact, key: str, *, at_ms: int = 0) -> Recorded:
        """Appends one entry (once per key)."""
        doc: Document = {
            "_id": f"{caller.id}:{key}",
            "tenant_id": caller.tenant_id,
            "user_id": caller.owner_user_id,
            "session_id": caller.session_id,
            "eddie_process_id": caller.id,
            "ts": at_ms or self._clock.now_ms(),
            "kind": fact.kind.value,
            "summary": fact.summary[:SUMMARY_CHARS],
            "refs": [r.model_dump() for r in fact.refs],
        }
        try:
            await self._col.insert_one(doc)
        except Exception as exc:
            if not is_duplicate_key(exc):
                raise
        return Recorded(id=str(doc["_id"]), at_ms=int(doc["ts"]))

    async def peers(
        self, caller: Process, *, since_ms: int = 0, limit: int = PEER_LIMIT
    ) -> list[ActivityEntry]:
        """The other hubs' entries of this user, newest first."""
        await self._index.ready()
        floor = max(since_ms, self._clock.now_ms() - WINDOW_MS)
        cursor = (
            self._col.find(
                {
                    "tenant_id": caller.tenant_id,
                    "user_id": caller.owner_user_id,
                    "ts": {"$gte": floor},
                    "eddie_process_id": {"$ne": caller.id},
                }
            )
            .sort("ts", -1)
            .limit(limit)
        )
        return [ActivityEntry.from_doc(d) async for d in cursor]

    async def invoke_record(self, caller: Process, args: JsonObject, key: str) -> RecordedResult:
        """`hub_activity_record`: the engine's entry for a completed turn."""
        parsed = parse_args(RecordArgs, args)
        kind = ActivityKind(parsed.kind or ActivityKind.USER_STATEMENT.value)
        done = await self.record(caller, Fact(kind, parsed.summary), key)
        return RecordedResult(id=done.id, at_ms=done.at_ms)
