"""JSON schemas of the tools by which a user's hubs know what each other did
(process_service/hub/peers.py, hub_activity.py): `peer_notify` is offered to the model
(`@organizational`); `hub_activity_record` only the Eddie engine calls (`@hub`)."""

from __future__ import annotations

from process_service.tool_specs import ToolSpec, _obj
from vance.domain import PeerEventType
from vance.json_types import JsonObject

_S: JsonObject = {"type": "string"}

PEER_TOOLS: list[ToolSpec] = [
    {
        "name": "peer_notify",
        "description": (
            "Tell the user's other hub sessions (their other devices) at once about something "
            "they should know, e.g. the user said they are travelling tomorrow. Project "
            "creation, archiving and process commands are told automatically. type: what it "
            "is; summary: one short line; payload: optional details."
        ),
        "parameters": _obj(
            {
                "type": {"type": "string", "enum": [t.value for t in PeerEventType]},
                "summary": _S,
                "payload": {"type": "object"},
            },
            ["type", "summary"],
        ),
        "labels": ["@organizational", "@write", "@persistent"],
    },
    {
        "name": "hub_activity_record",
        "description": "Record a completed hub turn in the user's activity log.",
        "parameters": _obj(
            {"kind": {"type": "string", "enum": ["USER_STATEMENT", "TOOL_CALL"]}, "summary": _S},
            ["summary"],
        ),
        "labels": ["@hub", "@write"],
    },
]
PEER_TOOL_NAMES = frozenset(t["name"] for t in PEER_TOOLS)
