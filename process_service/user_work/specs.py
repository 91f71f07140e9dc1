"""JSON schemas of the user's own tools (seed 001 §4 "Default tool families"): documents,
scratchpad, facts, web and sandboxed exec. All carry `@userwork`, which Eddie's pool names
(engine_worker/engines/eddie_work.py); `doc_purge` carries `@userwork-destructive` instead,
because seed 001 §4 keeps destructive bulk operations out of Eddie's reach."""

from __future__ import annotations

from process_service.tool_specs import ToolSpec, _obj
from vance.json_types import JsonObject

_S: JsonObject = {"type": "string"}
_I: JsonObject = {"type": "integer"}
_W = "@userwork"
PATH: JsonObject = {
    **_S,
    "description": "a path such as notes/groceries.md; workspace/... names a file of "
    "your exec workspace (read-only here)",
}
EXEC_TIMEOUT_MS = 180_000  # tool_service's bound for work_exec_run: the longest wait it makes

USER_WORK_TOOLS: list[ToolSpec] = [
    {
        "name": "doc_create",
        "description": "Create a document (Markdown) of the user's, at a path that is free.",
        "parameters": _obj({"path": PATH, "body": _S, "title": _S}, ["path", "body"]),
        "labels": [_W, "@write", "@persistent"],
    },
    {
        "name": "doc_read",
        "description": (
            "Read one of the user's documents, or a file the user's scripts wrote "
            "(workspace/<file>). numbered=true prefixes each line with its number, for doc_edit."
        ),
        "parameters": _obj({"path": PATH, "numbered": {"type": "boolean"}}, ["path"]),
        "labels": [_W, "@read"],
    },
    {
        "name": "doc_edit",
        "description": (
            "Change a document: replace lines fromLine..toLine (1-based, inclusive; toLine "
            "defaults to fromLine) with text, or append text at the end when no fromLine is "
            "given. An empty text with a range deletes those lines."
        ),
        "parameters": _obj(
            {"path": PATH, "text": _S, "fromLine": _I, "toLine": _I}, ["path", "text"]
        ),
        "labels": [_W, "@write", "@persistent"],
    },
    {
        "name": "doc_list",
        "description": (
            "The user's documents (path, title, size), optionally under a folder prefix; "
            "files of the exec workspace are listed as workspace/<file>."
        ),
        "parameters": _obj({"prefix": _S}, []),
        "labels": [_W, "@read"],
    },
    {
        "name": "doc_purge",
        "description": "Delete one document by path, or every document under prefix.",
        "parameters": _obj({"path": _S, "prefix": _S}, []),
        "labels": ["@userwork-destructive", "@write", "@persistent"],
    },
    {
        "name": "scratchpad_read",
        "description": "The user's scratchpad: quick notes kept across sessions.",
        "parameters": _obj({}, []),
        "labels": [_W, "@read"],
    },
    {
        "name": "scratchpad_write",
        "description": "Replace the whole scratchpad with text.",
        "parameters": _obj({"text": _S}, ["text"]),
        "labels": [_W, "@write", "@persistent"],
    },
    {
        "name": "scratchpad_append",
        "description": "Add a line (or lines) at the end of the scratchpad.",
        "parameters": _obj({"text": _S}, ["text"]),
        "labels": [_W, "@write", "@persistent"],
    },
    {
        "name": "scratchpad_clear",
        "description": "Empty the scratchpad.",
        "parameters": _obj({}, []),
        "labels": [_W, "@write", "@persistent"],
    },
    {
        "name": "relations_add",
        "description": (
            "Remember a fact about the user or their world as subject - relation - object, "
            "e.g. user / prefers / tea; source says where it came from."
        ),
        "parameters": _obj(
            {"subject": _S, "relation": _S, "object": _S, "source": _S},
            ["subject", "relation", "object"],
        ),
        "labels": [_W, "@write", "@persistent"],
    },
    {
        "name": "relations_query",
        "description": (
            "Facts matching any of subject, relation, object (case-insensitive, exact words); "
            "none of them: all facts, newest first."
        ),
        "parameters": _obj({"subject": _S, "relation": _S, "object": _S, "limit": _I}, []),
        "labels": [_W, "@read"],
    },
    {
        "name": "relations_remove",
        "description": "Forget a fact, by its id or by subject, relation and object.",
        "parameters": _obj({"id": _S, "subject": _S, "relation": _S, "object": _S}, []),
        "labels": [_W, "@write", "@persistent"],
    },
    {
        "name": "web_search",
        "description": "Search the web; results with title, url and snippet.",
        "parameters": _obj({"query": _S, "limit": _I}, ["query"]),
        "labels": [_W, "@read"],
    },
    {
        "name": "web_fetch",
        "description": "Fetch a web page (http or https) as readable text.",
        "parameters": _obj({"url": _S}, ["url"]),
        "labels": [_W, "@read"],
    },
    {
        "name": "work_exec_run",
        "description": (
            "Run a short python or bash script in the user's sandboxed workspace (no network; "
            "files it writes are readable as workspace/<file> with doc_read). Waits for the "
            "result up to timeoutMs; a longer job answers running, see work_exec_status."
        ),
        "parameters": _obj(
            {
                "language": {"type": "string", "enum": ["python", "bash"]},
                "code": _S,
                "timeoutMs": {**_I, "description": "the run's time limit; killed after it"},
                "waitMs": {
                    **_I,
                    "description": "how long to wait for the result before answering running "
                    "(default: the time limit, at most 60000)",
                },
            },
            ["language", "code"],
        ),
        "labels": [_W, "@executive"],
        "timeoutMs": EXEC_TIMEOUT_MS,
    },
    {
        "name": "work_exec_status",
        "description": "A job's status and output (jobId from work_exec_run).",
        "parameters": _obj({"jobId": _S}, ["jobId"]),
        "labels": [_W, "@read"],
    },
    {
        "name": "work_exec_kill",
        "description": "Stop a running job.",
        "parameters": _obj({"jobId": _S}, ["jobId"]),
        "labels": [_W, "@executive"],
    },
]
USER_WORK_TOOL_NAMES = frozenset(t["name"] for t in USER_WORK_TOOLS)
