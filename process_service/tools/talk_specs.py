"""JSON schemas of the tools for talking to projects (process_service/hub/talk.py) and of plan
mode (process_service/lifecycle/plans.py). `@organizational` and `@planmode` tools are offered to the
model; `@hub` and `@internal` ones only engines call."""

from __future__ import annotations

from process_service.tool_specs import ToolSpec, _obj
from vance.json_types import JsonObject

_S: JsonObject = {"type": "string"}
_OPTIONS: JsonObject = {"type": "array", "items": {"type": "object"}}
_STATUS: JsonObject = {"type": "string", "enum": ["pending", "in_progress", "done", "skipped"]}

TALK_TOOLS: list[ToolSpec] = [
    {
        "name": "project_steer",
        "description": (
            "Tell a project's chat something on the user's behalf (it reads it as the user's "
            "words). project: the project name; message: what to say, in the user's words. "
            "processId: another process of that project instead of its chat."
        ),
        "parameters": _obj({"project": _S, "message": _S, "processId": _S}, ["project", "message"]),
        "labels": ["@organizational", "@write", "@persistent"],
    },
    {
        "name": "answer_question",
        "description": (
            "Pass the user's answer to one open worker question (askId from the open questions "
            "listed in your turn) back to the worker that asked it."
        ),
        "parameters": _obj({"askId": _S, "message": _S}, ["askId", "message"]),
        "labels": ["@organizational", "@write", "@persistent"],
    },
    {
        "name": "hub_ask_open",
        "description": "Keep a worker's question open until the user answers it.",
        "parameters": _obj(
            {
                "askId": _S,
                "processId": _S,
                "project": _S,
                "source": _S,
                "question": _S,
                "options": _OPTIONS,
            },
            ["askId", "processId"],
        ),
        "labels": ["@hub", "@write"],
    },
    {
        "name": "hub_asks",
        "description": "The open worker questions of this hub.",
        "parameters": _obj({}, []),
        "labels": ["@hub", "@read"],
    },
]

PLAN_TOOLS: list[ToolSpec] = [
    {
        "name": "todo_update",
        "description": (
            "While executing an approved plan: mark a todo in_progress when you start it and "
            "done (or skipped) when it is finished. id: the todo's id (t1, t2, ...). todos: "
            "several updates at once, [{id, status}]."
        ),
        "parameters": _obj(
            {
                "id": _S,
                "status": _STATUS,
                "todos": {
                    "type": "array",
                    "items": _obj({"id": _S, "status": _STATUS}, ["id", "status"]),
                },
            },
            [],
        ),
        "labels": ["@planmode", "@write"],
    },
    {
        "name": "plan_store",
        "description": "Store a proposed plan and tell the user's client (engines only).",
        "parameters": _obj(
            {"title": _S, "steps": {"type": "array", "items": {}}}, ["title", "steps"]
        ),
        "labels": ["@internal", "@write"],
    },
]
TALK_TOOL_NAMES = frozenset(t["name"] for t in TALK_TOOLS)
PLAN_TOOL_NAMES = frozenset(t["name"] for t in PLAN_TOOLS)
