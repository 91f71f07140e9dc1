"""JSON schemas of the hub tools (process_service/hub/tools.py). The `@organizational` ones are
offered to the model; the `@hub` ones the Eddie engine calls itself."""

from __future__ import annotations

from process_service.tool_specs import ToolSpec, _obj
from vance.json_types import JsonObject

_S: JsonObject = {"type": "string"}
_ORG = ["@organizational"]
MODE: JsonObject = {"type": "string", "enum": ["verbatim", "milestones", "summary", "inbox"]}

HUB_TOOLS: list[ToolSpec] = [
    {
        "name": "project_create",
        "description": (
            "Create a project for real work on a topic, with its own session and chat (Arthur). "
            "steerContent is passed to that chat as the user's words. You hear back when it is "
            "blocked or done. A name that exists is refused: open it instead."
        ),
        "parameters": _obj(
            {
                "name": {**_S, "description": "short id, e.g. security_audit"},
                "title": _S,
                "recipe": {**_S, "description": "recipe of the project's chat; default arthur"},
                "steerContent": {**_S, "description": "the task, as the user's words"},
            },
            ["name"],
        ),
        "labels": [*_ORG, "@write", "@persistent"],
    },
    {
        "name": "project_list",
        "description": "The user's projects. kind: NORMAL (default), SYSTEM or ALL.",
        "parameters": _obj({"kind": _S}, []),
        "labels": [*_ORG, "@read"],
    },
    {
        "name": "project_open",
        "description": (
            "A project's metadata, open sessions and processes; connects you to its chat (you "
            "hear its milestones)."
        ),
        "parameters": _obj({"name": _S}, ["name"]),
        "labels": [*_ORG, "@read"],
    },
    {
        "name": "project_archive",
        "description": "Archive a project (it is not deleted).",
        "parameters": _obj({"name": _S}, ["name"]),
        "labels": [*_ORG, "@write", "@persistent"],
    },
    {
        "name": "process_observe",
        "description": (
            "How you hear from a worker process: verbatim (everything), milestones (status "
            "changes, default), summary (milestones, condensed), inbox (to the user's inbox)."
        ),
        "parameters": _obj({"processId": _S, "channelMode": MODE}, ["processId", "channelMode"]),
        "labels": [*_ORG, "@write"],
    },
    {
        "name": "process_command",
        "description": "Stop, pause or resume a worker process in one of the user's projects.",
        "parameters": _obj(
            {"processId": _S, "command": {"type": "string", "enum": ["stop", "pause", "resume"]}},
            ["processId", "command"],
        ),
        "labels": [*_ORG, "@write", "@persistent"],
    },
    {
        "name": "inbox_forward_to_user",
        "description": "Put a text (Markdown) into the user's inbox to read later.",
        "parameters": _obj({"title": _S, "body": _S}, ["title", "body"]),
        "labels": [*_ORG, "@write", "@persistent"],
    },
    {
        "name": "hub_switch_to",
        "description": "Send the user's client a switch-to towards a worker session.",
        "parameters": _obj(
            {"target": _S, "reason": _S, "voiceAnnouncement": _S}, ["target", "reason"]
        ),
        "labels": ["@hub", "@write"],
    },
    {
        "name": "hub_context",
        "description": "The hub's language and voice rules for this turn.",
        "parameters": _obj({}, []),
        "labels": ["@hub", "@read"],
    },
    {
        "name": "hub_voice_rules_store",
        "description": "Store bootstrapped voice rules for a language at the tenant level.",
        "parameters": _obj({"language": _S, "rules": _S}, ["language", "rules"]),
        "labels": ["@hub", "@write", "@persistent"],
    },
]
HUB_TOOL_NAMES = frozenset(t["name"] for t in HUB_TOOLS)
