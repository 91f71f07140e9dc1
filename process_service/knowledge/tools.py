"""The memory and RAG tools (seed 000 §2.2 "MemoryApi"): what Arthur, Ford and Eddie keep and
find beyond their chat. Hosted by process_service's tool host (process_service/tools.py hands
every name in KNOWLEDGE_TOOL_NAMES here); every record and chunk is of the calling process's
own scopes: its process, session and project, and its owner's documents."""

from __future__ import annotations

from typing import Any

from process_service.knowledge.base import Knowledge, record_view
from process_service.knowledge.recall import check_scope
from process_service.process_model import Process
from process_service.tool_args import ToolError, arg_str
from process_service.tool_specs import _obj
from process_service.user_work.args import whole
from vance.errors import VanceError

_S = {"type": "string"}
_SCOPE = {
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

KNOWLEDGE_TOOLS: list[dict[str, Any]] = [
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
KNOWLEDGE_TOOL_NAMES = frozenset(str(t["name"]) for t in KNOWLEDGE_TOOLS)


class KnowledgeTools:
    def __init__(self, knowledge: Knowledge) -> None:
        self._k = knowledge

    async def invoke(self, tool: str, caller: Process, args: dict[str, Any], key: str) -> Any:
        try:
            if tool == "memory_remember":
                return await self._remember(caller, args, key)
            if tool == "memory_recall":
                return await self._recall(caller, args)
            if tool == "memory_forget":
                forgotten = await self._k.recall.forget(caller, arg_str(args, "id"))
                return {"forgotten": forgotten.id}
            if tool == "rag_query":
                return await self._rag_query(caller, args)
        except VanceError as exc:
            raise ToolError(exc.message) from exc
        raise ToolError(f"process_service does not host {tool!r}")

    async def _remember(self, caller: Process, args: dict[str, Any], key: str) -> Any:
        text = arg_str(args, "text")
        if len(text) > MAX_TEXT:
            raise ToolError(f"'text' is longer than {MAX_TEXT} characters; keep notes compact")
        tags = args.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise ToolError("'tags' must be a list of texts")
        if len(tags) > MAX_TAGS:
            raise ToolError(f"at most {MAX_TAGS} tags")
        record = await self._k.memory.record(
            caller,
            check_scope(args.get("scope")),
            kind="note",
            title="",
            content=text,
            idempotency_key=key,
            tags=[t.strip()[:50] for t in tags if t.strip()],
        )
        return {"remembered": record_view(record)}

    async def _recall(self, caller: Process, args: dict[str, Any]) -> Any:
        limit = whole(args.get("limit", DEFAULT_RECALL), "limit", 1, MAX_RECALL)
        query = arg_str(args, "query", required=False)
        found = await self._k.recall.recall(
            caller, check_scope(args.get("scope")), query, limit=limit, matching_only=True
        )
        return {
            "notes": [{**record_view(s.record), "score": round(s.score, 3)} for s in found],
            **({} if found else {"note": "nothing recorded matches"}),
        }

    async def _rag_query(self, caller: Process, args: dict[str, Any]) -> Any:
        top_k = whole(args.get("topK", DEFAULT_TOP_K), "topK", 1, 50)
        hits, hybrid = await self._k.rag_for(caller, arg_str(args, "query"), top_k, 0.0)
        return {
            "chunks": [
                {"source": h.source, "title": h.title, "text": h.text, "score": h.score}
                for h in hits
            ],
            "ranking": "hybrid" if hybrid else "keyword",
            **({} if hits else {"note": "no document passage matches"}),
        }
