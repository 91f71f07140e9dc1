"""Eddie's action tools: every turn ends with exactly one, standing alone in its step
(engine_worker/engines/loop.py). Schemas for the model and the parsers that check them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from engine_worker.json_types import Json, JsonObject, ModelTool

ANSWER, ASK_USER, RELAY, RELAY_INBOX, MEDIATE = (
    "answer",
    "ask_user",
    "relay",
    "relay_inbox",
    "mediate",
)

_OPTIONS = {
    "type": "array",
    "minItems": 2,
    "maxItems": 4,
    "items": {
        "type": "object",
        "properties": {"label": {"type": "string"}, "description": {"type": "string"}},
        "required": ["label"],
    },
}


def _tool(name: str, description: str, props: JsonObject, required: list[str]) -> ModelTool:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description + " End your turn with it, alone in its step.",
            "parameters": {"type": "object", "properties": props, "required": required},
        },
    }


_S = {"type": "string"}
ACTION_TOOLS: list[ModelTool] = [
    _tool(
        ANSWER,
        "Say something to the user. message: the spoken line (plain sentences, no Markdown, no "
        "ids or URLs). info: optional Markdown shown beside it, never spoken.",
        {"message": _S, "info": _S},
        ["message"],
    ),
    _tool(
        ASK_USER,
        "Ask the user one short question and wait for the answer. options: 2-4 choices "
        "{label, description} when the answer is one of them.",
        {"message": _S, "options": _OPTIONS},
        ["message"],
    ),
    _tool(
        RELAY,
        "Pass a worker's short, speakable output (or its question) on to the user. source: the "
        "worker's process id or name from its <process-event>.",
        {"source": _S, "message": _S},
        ["source"],
    ),
    _tool(
        RELAY_INBOX,
        "Long or written output (Markdown, code, reports): body goes to the user's inbox under "
        "inboxTitle, and you say only the short spoken line.",
        {"spoken": _S, "inboxTitle": _S, "body": _S},
        ["spoken", "inboxTitle", "body"],
    ),
    _tool(
        MEDIATE,
        "Connect the user directly with a worker (target: process id, or project name). reason: "
        "why; voiceAnnouncement: what you say before the switch.",
        {"target": _S, "reason": _S, "voiceAnnouncement": _S},
        ["target", "reason"],
    ),
]


# What the user hears streams as the model writes it (engine_worker/engines/loop.py).
STREAMED = {ANSWER: "message", ASK_USER: "message", RELAY: "message", RELAY_INBOX: "spoken"}


@dataclass
class Action:
    name: str
    args: dict[str, str] = field(default_factory=dict)
    options: list[dict[str, str]] = field(default_factory=list)


def _text(args: JsonObject, key: str, *, required: bool) -> str | None:
    value = args.get(key)
    if value is None or value == "":
        return None if not required else ""
    return value.strip() if isinstance(value, str) else None


def _options(raw: Json) -> list[dict[str, str]] | str:
    if not raw:
        return []
    if not isinstance(raw, list) or not 2 <= len(raw) <= 4:
        return "'options' must list 2 to 4 choices"
    out = []
    for opt in raw:
        if not isinstance(opt, dict) or not isinstance(opt.get("label"), str) or not opt["label"]:
            return "every option needs a 'label'"
        entry = {"label": opt["label"]}
        if isinstance(opt.get("description"), str) and opt["description"]:
            entry["description"] = opt["description"]
        out.append(entry)
    return out


_REQUIRED = {
    ANSWER: (["message"], ["info"]),
    ASK_USER: (["message"], []),
    RELAY: (["source"], ["message"]),
    RELAY_INBOX: (["spoken", "inboxTitle", "body"], []),
    MEDIATE: (["target", "reason"], ["voiceAnnouncement"]),
}


def parser(name: str) -> Callable[[JsonObject], Action | str]:
    required, optional = _REQUIRED[name]

    def parse(arguments: JsonObject) -> Action | str:
        args: dict[str, str] = {}
        for key in required:
            value = _text(arguments, key, required=True)
            if not value:
                return f"{name} needs a non-empty string '{key}'"
            args[key] = value
        for key in optional:
            value = _text(arguments, key, required=False)
            if value:
                args[key] = value
        options: list[dict[str, str]] = []
        if name == ASK_USER:
            parsed = _options(arguments.get("options"))
            if isinstance(parsed, str):
                return parsed
            options = parsed
        return Action(name, args, options)

    return parse


PARSERS = {name: parser(name) for name in _REQUIRED}


def render_options(message: str, options: list[dict[str, str]]) -> str:
    """The question with its choices as a Markdown list (the same rendering as `respond`)."""
    if not options:
        return message
    lines = [message, ""]
    for i, opt in enumerate(options, 1):
        desc = f" — {opt['description']}" if opt.get("description") else ""
        lines.append(f"{i}. **{opt['label']}**{desc}")
    return "\n".join(lines)
