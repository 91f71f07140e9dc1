"""JSON schemas of the tools process_service hosts (REFERENCE.md "Tools")."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from process_service.tools.delegate import TOOL_TIMEOUT_MS
from vance.json_types import JsonObject


class ToolSpec(TypedDict):
    """A tool as registered with tool_service (toolhost.register_forever)."""

    name: str
    description: str
    parameters: JsonObject  # the arguments' JSON Schema, handed to the model as it is
    labels: list[str]
    timeoutMs: NotRequired[int]  # tool_service's bound on one call, when not its default


def _obj(props: JsonObject, required: list[str]) -> JsonObject:
    """The JSON Schema of an arguments object."""
    return {"type": "object", "properties": props, "required": [*required]}


_S: JsonObject = {"type": "string"}

PROCESS_TOOLS: list[ToolSpec] = [
    {
        "name": "process_create",
        "description": (
            "Start a worker process in this session, preferably from a recipe (see recipe_list). "
            "Returns once the worker has started, with its name and status; it runs on its own "
            "lane and its result arrives later as a <process-event>."
        ),
        "parameters": _obj(
            {
                "name": {**_S, "description": "unique name in this session, e.g. paper-diff"},
                "goal": {**_S, "description": "what the worker should achieve"},
                "recipe": {**_S, "description": "recipe name; decides the engine"},
                "engine": {**_S, "description": "engine, when no recipe fits"},
                "title": _S,
                "steerContent": {**_S, "description": "a first message for the worker"},
                "params": {"type": "object", "description": "recipe parameters to override"},
            },
            ["name", "goal"],
        ),
        "labels": ["@process", "@write"],
    },
    {
        "name": "process_create_delegate",
        "description": (
            "Start a worker process from a task description when you do not know which recipe "
            "fits (if you know the recipe name, use process_create). A selector picks the recipe "
            "(decision MATCH) or answers NONE with a rationale. On NONE, by default a new "
            "recipe is designed for the task (this can take minutes) and then spawned; with "
            "asyncFallback the design runs in the background (outcome PENDING) and its result "
            "arrives as a <process-event>; with fallbackOnNone false you decide yourself."
        ),
        "parameters": _obj(
            {
                "name": {**_S, "description": "unique name in this session, e.g. meeting-notes"},
                "task": {**_S, "description": "what should be done, in plain words"},
                "title": _S,
                "steerContent": {**_S, "description": "a first message for the worker"},
                "params": {"type": "object", "description": "recipe parameters to override"},
                "fallbackOnNone": {
                    "type": "boolean",
                    "default": True,
                    "description": "on NONE, design a recipe for the task and spawn it",
                },
                "asyncFallback": {
                    "type": "boolean",
                    "default": False,
                    "description": "return at once (PENDING) instead of waiting for the design",
                },
            },
            ["name", "task"],
        ),
        "labels": ["@process", "@write"],
        "timeoutMs": TOOL_TIMEOUT_MS,
    },
    {
        "name": "process_steer",
        "description": "Send a message to another process of this session (e.g. an answer).",
        "parameters": _obj({"name": _S, "content": _S}, ["name", "content"]),
        "labels": ["@process", "@write"],
    },
    {
        "name": "process_stop",
        "description": "Stop a process of this session. Stopping yourself is refused.",
        "parameters": _obj({"name": _S}, ["name"]),
        "labels": ["@process", "@write"],
    },
    {
        "name": "process_pause",
        "description": (
            "Pause a process of this session: a running turn finishes, then it takes no new "
            "turn until it is resumed; messages sent meanwhile wait. Pausing yourself is refused."
        ),
        "parameters": _obj({"name": _S}, ["name"]),
        "labels": ["@process", "@write"],
    },
    {
        "name": "process_list",
        "description": "The processes of this session with status, engine and goal.",
        "parameters": _obj({"includeTerminated": {"type": "boolean"}}, []),
        "labels": ["@process", "@read"],
    },
    {
        "name": "process_status",
        "description": "Details of one process of this session.",
        "parameters": _obj({"name": _S}, ["name"]),
        "labels": ["@process", "@read"],
    },
    {
        "name": "recipe_list",
        "description": "Recipes available for workers (project, then tenant, then bundled).",
        "parameters": _obj({}, []),
        "labels": ["@recipe", "@read"],
    },
    {
        "name": "manual_list",
        "description": "The manuals your recipe gives you (instructions, spec excerpts).",
        "parameters": _obj({}, []),
        "labels": ["@manual", "@read"],
    },
    {
        "name": "manual_read",
        "description": "The content of one of your manuals, by name (see manual_list).",
        "parameters": _obj({"name": _S}, ["name"]),
        "labels": ["@manual", "@read"],
    },
    {
        "name": "how_do_i",
        "description": (
            "Look up how something works in this system, or a term you do not know: searches "
            "the bundled manuals and documentation and returns the best matching sections "
            "with their titles."
        ),
        "parameters": _obj(
            {
                "question": {**_S, "description": "the question or term, e.g. 'recipe params'"},
                "limit": {"type": "integer", "description": "sections to return, 1 to 5 (3)"},
            },
            ["question"],
        ),
        "labels": ["@manual", "@read"],
    },
    {
        "name": "recipe_describe",
        "description": "The full recipe: default parameters, prompt and tool changes.",
        "parameters": _obj({"name": _S}, ["name"]),
        "labels": ["@recipe", "@read"],
    },
    {
        "name": "slart_context",
        "description": (
            "The engine catalog (engines no worker runs are marked) and the recipes that exist, "
            "to design a new recipe against."
        ),
        "parameters": _obj({}, []),
        "labels": ["@recipe", "@read"],
    },
    {
        "name": "slart_store_recipe",
        "description": (
            "Validate a designed recipe and store it as _slart/<runId>/<name> in this project. "
            "Fails with every problem found (engine, referenced recipes, recipe format)."
        ),
        "parameters": _obj(
            {
                "name": {**_S, "description": "lowercase recipe name, e.g. meeting-notes"},
                "yaml": {**_S, "description": "the recipe document as YAML, without its name"},
            },
            ["name", "yaml"],
        ),
        "labels": ["@recipe", "@write", "@persistent"],
    },
]
