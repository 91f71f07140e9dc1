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
from typing import Any

from pymongo.asynchronous.database import AsyncDatabase

from process_service.process_model import Process
from process_service.tool_args import ToolError
from process_service.tool_args import arg_str as _str
from process_service.user_work.lazy_index import LazyIndex
from vance.clock import Clock
from vance.domain import PeerEventType
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


@dataclass
class Fact:
    """One organizational call as the log and the peers read it; `peer` is the peer event type
    it is pushed to the other hubs with, None for what waits for their next turn."""

    kind: ActivityKind
    summary: str
    refs: list[dict[str, str]] = field(default_factory=list)
    peer: PeerEventType | None = None


def _cut(text: Any, n: int = _TEXT) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def describe(tool: str, args: dict[str, Any], result: Any) -> Fact | None:
    """The fact of a successful organizational (or user-work writing) call; None for reads."""
    r = result if isinstance(result, dict) else {}
    project = str(r.get("project") or args.get("name") or args.get("project") or "")
    pref = [{"type": "project", "id": project}] if project else []
    match tool:
        case "project_create":
            task = _cut(args.get("steerContent"))
            text = f"created the project {project}" + (f" for: {task}" if task else "")
            chat = (
                [{"type": "process", "id": str(r["chatProcessId"])}]
                if r.get("chatProcessId")
                else []
            )
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
            refs = [{"type": "process", "id": pid}]
            text = f"{command} the process {pid} (now {r.get('status', '?')})"
            return Fact(ActivityKind.PROCESS_CHANGED, text, refs, PeerEventType.PROCESS_CHANGED)
        case "process_observe":
            pid = str(r.get("processId", ""))
            text = f"listens to the process {pid} in mode {r.get('channelMode', '')}"
            return Fact(ActivityKind.PROCESS_OBSERVED, text, [{"type": "process", "id": pid}])
        case "process_create" | "process_create_delegate":
            nested = r.get("process")
            spawned: dict[str, Any] = nested if isinstance(nested, dict) else r
            name = str(spawned.get("name") or args.get("name") or "")
            text = f"started the worker {name}: {_cut(args.get('goal') or args.get('task'))}"
            refs = [{"type": "process_name", "id": name}]  # a name in the hub's session
            return Fact(ActivityKind.PROCESS_SPAWNED, text, refs, PeerEventType.PROCESS_SPAWNED)
        case "answer_question":
            text = f"passed the user's answer on to {r.get('project') or r.get('processId')}"
            return Fact(ActivityKind.QUESTION_ANSWERED, text, pref)
        case "inbox_forward_to_user":
            text = f"put '{_cut(args.get('title'), 60)}' into the user's inbox"
            return Fact(
                ActivityKind.INBOX_FORWARDED, text, [{"type": "inbox", "id": str(r.get("id", ""))}]
            )
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
                [{"type": "document", "id": path}],
            )
        case _:
            return None


def entry_view(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "atMs": int(doc["ts"]),
        "kind": doc["kind"],
        "summary": doc["summary"],
        "hubSessionId": doc.get("session_id", ""),
        "eddieProcessId": doc.get("eddie_process_id", ""),
        "refs": doc.get("refs") or [],
    }


class ActivityLog:
    def __init__(self, db: AsyncDatabase[Document], clock: Clock) -> None:
        self._col = db["eddie_activity"]
        self._index = LazyIndex(self._col, "ts", "eddie_activity_owner_ts")
        self._clock = clock

    async def record(
        self, caller: Process, fact: Fact, key: str, *, at_ms: int = 0
    ) -> dict[str, Any]:
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
            "refs": fact.refs,
        }
        try:
            await self._col.insert_one(doc)
        except Exception as exc:
            if not is_duplicate_key(exc):
                raise
        return doc

    async def peers(
        self, caller: Process, *, since_ms: int = 0, limit: int = PEER_LIMIT
    ) -> list[dict[str, Any]]:
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
        return [entry_view(d) async for d in cursor]

    async def invoke_record(self, caller: Process, args: dict[str, Any], key: str) -> Any:
        """`hub_activity_record`: the engine's entry for a completed turn."""
        kind = _str(args, "kind", required=False) or ActivityKind.USER_STATEMENT.value
        if kind not in (ActivityKind.USER_STATEMENT.value, ActivityKind.TOOL_CALL.value):
            raise ToolError("kind must be USER_STATEMENT or TOOL_CALL")
        fact = Fact(ActivityKind(kind), _str(args, "summary"))
        doc = await self.record(caller, fact, key)
        return {"id": doc["_id"], "atMs": doc["ts"]}
