"""The memory and RAG tools (seed 000 §2.2 "MemoryApi"): what Arthur, Ford and Eddie keep and
find beyond their chat. Hosted by process_service's tool host (process_service/tools/process_tools.py hands
every name in KNOWLEDGE_TOOL_NAMES here); every record and chunk is of the calling process's
own scopes: its process, session and project, and its owner's documents."""

from __future__ import annotations

from pydantic import Field, field_validator

from process_service.knowledge.base import Knowledge, MemoryNote
from process_service.knowledge.recall import check_scope
from process_service.process_model import Process
from process_service.tool_args import (
    OptText,
    Text,
    ToolArgs,
    ToolError,
    ToolResult,
    parse_args,
    reason,
)
from process_service.tool_specs import ToolSpec, _obj
from process_service.user_work.args import whole_checked
from vance.errors import VanceError
from vance.json_types import JsonObject, JsonValue

_S: JsonObject = {"type": "string"}
_SCOPE: JsonObject = {
    "type": "string",
    "enum": ["process", "session", "project"],
    "description": "process: your own working notes; session: every process of this session; "
    "project: every later session of this project",
}
MAX_TEXT = 4_000
MAX_TAGS = 10
DEFAULT_RECALL = 5
MAX_RECALL = 50
DEFAULT_TOP_K = 5

KNOWLEDGE_TOOLS: list[ToolSpec] = [
    {
        "name": "memory_remember",
        "description": (
            "Keep a short note for later: a fact, a decision, a result. Project scope is seen "
            "by every later session of this project; keep such notes compact."
        ),
        "parameters": _obj(
            {"scope": _SCOPE, "text": _S, "tags": {"type": "array", "items": _S}},
            ["scope", "text"],
        ),
        "labels": ["@memory", "@write", "@persistent"],
    },
    {
        "name": "memory_recall",
        "description": "Notes of a scope matching a query, best first (no query: newest).",
        "parameters": _obj({"query": _S, "scope": _SCOPE, "limit": {"type": "integer"}}, ["scope"]),
        "labels": ["@memory", "@read"],
    },
    {
        "name": "memory_forget",
        "description": "Delete a note by its id (from memory_remember or memory_recall).",
        "parameters": _obj({"id": _S}, ["id"]),
        "labels": ["@memory", "@write", "@persistent"],
    },
    {
        "name": "rag_query",
        "description": (
            "Search the project's uploaded documents and the user's own documents; the best "
            "passages with their source."
        ),
        "parameters": _obj({"query": _S, "topK": {"type": "integer"}}, ["query"]),
        "labels": ["@rag", "@read"],
    },
]
KNOWLEDGE_TOOL_NAMES = frozenset(t["name"] for t in KNOWLEDGE_TOOLS)


class RememberArgs(ToolArgs):
    text: Text
    tags: list[str] = Field(default_factory=list)
    scope: str = Field("", validate_default=True)

    @field_validator("text")
    @classmethod
    def _compact(cls, value: str) -> str:
        if len(value) > MAX_TEXT:
            raise reason(f"'text' is longer than {MAX_TEXT} characters; keep notes compact")
        return value

    @field_validator("tags", mode="before")
    @classmethod
    def _texts(cls, value: JsonValue) -> JsonValue:
        tags = value or []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise reason("'tags' must be a list of texts")
        if len(tags) > MAX_TAGS:
            raise reason(f"at most {MAX_TAGS} tags")
        return tags

    @field_validator("scope", mode="before")
    @classmethod
    def _scope(cls, value: JsonValue) -> str:
        return _checked_scope(value)


class RecallArgs(ToolArgs):
    limit: int = DEFAULT_RECALL
    query: OptText = ""
    scope: str = Field("", validate_default=True)

    @field_validator("limit", mode="before")
    @classmethod
    def _limit(cls, value: JsonValue) -> int:
        return whole_checked(value, "limit", 1, MAX_RECALL)

    @field_validator("scope", mode="before")
    @classmethod
    def _scope(cls, value: JsonValue) -> str:
        return _checked_scope(value)


class ForgetArgs(ToolArgs):
    id: Text


class RagArgs(ToolArgs):
    top_k: int = DEFAULT_TOP_K
    query: Text

    @field_validator("top_k", mode="before")
    @classmethod
    def _top_k(cls, value: JsonValue) -> int:
        return whole_checked(value, "topK", 1, 50)


def _checked_scope(value: JsonValue) -> str:
    """check_scope (shared with the memory RPCs) as a validator's check."""
    try:
        return check_scope(value)
    except VanceError as exc:
        raise reason(exc.message) from None


class Remembered(ToolResult):
    remembered: MemoryNote


class RecalledNote(MemoryNote):
    score: float


class Recalled(ToolResult):
    OMIT_NONE = frozenset({"note"})

    notes: list[RecalledNote]
    note: str | None = None


class Forgotten(ToolResult):
    forgotten: str


class Chunk(ToolResult):
    source: str
    title: str
    text: str
    score: float


class RagAnswer(ToolResult):
    OMIT_NONE = frozenset({"note"})

    chunks: list[Chunk]
    ranking: str
    note: str | None = None


class KnowledgeTools:
    def __init__(self, knowledge: Knowledge) -> None:
        self._k = knowledge

    async def invoke(self, tool: str, caller: Process, args: JsonObject, key: str) -> ToolResult:
        try:
            if tool == "memory_remember":
                return await self._remember(caller, parse_args(RememberArgs, args), key)
            if tool == "memory_recall":
                return await self._recall(caller, parse_args(RecallArgs, args))
            if tool == "memory_forget":
                forgotten = await self._k.recall.forget(caller, parse_args(ForgetArgs, args).id)
                return Forgotten(forgotten=forgotten.id)
            if tool == "rag_query":
                return await self._rag_query(caller, parse_args(RagArgs, args))
        except VanceError as exc:
            raise ToolError(exc.message) from exc
        raise ToolError(f"process_service does not host {tool!r}")

    async def _remember(self, caller: Process, args: RememberArgs, key: str) -> Remembered:
        record = await self._k.memory.record(
            caller,
            args.scope,
            kind="note",
            title="",
            content=args.text,
            idempotency_key=key,
            tags=[t.strip()[:50] for t in args.tags if t.strip()],
        )
        return Remembered(remembered=MemoryNote.of(record))

    async def _recall(self, caller: Process, args: RecallArgs) -> Recalled:
        found = await self._k.recall.recall(
            caller, args.scope, args.query, limit=args.limit, matching_only=True
        )
        return Recalled(
            notes=[
                RecalledNote(**MemoryNote.of(s.record).model_dump(), score=round(s.score, 3))
                for s in found
            ],
            note=None if found else "nothing recorded matches",
        )

    async def _rag_query(self, caller: Process, args: RagArgs) -> RagAnswer:
        hits, hybrid = await self._k.rag_for(caller, args.query, args.top_k, 0.0)
        return RagAnswer(
            chunks=[
                Chunk(source=h.source, title=h.title, text=h.text, score=h.score) for h in hits
            ],
            ranking="hybrid" if hybrid else "keyword",
            note=None if hits else "no document passage matches",
        )
