"""The LLM auto-suggest of a session's title, icon and color: one small model
call after the first completed question-and-answer pair."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from session_service.domain.models import AccentColor
from session_service.search.session_metadata import (
    ICON_MAX,
    TITLE_MAX,
    Suggestion,
    is_emoji,
)
from vance.llm import ModelClient, ModelReply

logger = logging.getLogger(__name__)

SUGGEST_TIER = "default:fast"
EXCERPT_CHARS = 1_500
TOOL_NAME = "set_session_metadata"

_COLORS = [c.value for c in AccentColor]
SYSTEM_PROMPT = (
    "You name chat sessions for a list of conversations. From the start of a conversation, "
    f"call {TOOL_NAME} once with: title (at most 60 characters, the topic, no quotes), icon "
    f"(exactly one emoji), color (one of: {', '.join(_COLORS)}). If you cannot call tools, "
    'answer with only the JSON object {"title": ..., "icon": ..., "color": ...}.'
)
# JSON boundary: an OpenAI-style tool schema, sent to the model as it is.
TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Sets the title, icon and accent color of the session.",
        "parameters": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "maxLength": 60},
                "icon": {"type": "string", "description": "one emoji"},
                "color": {"type": "string", "enum": _COLORS},
            },
            "required": ["title", "icon", "color"],
        },
    },
}
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class Suggester:
    """Asks the model; returns only values that pass the same checks a user's patch must."""

    def __init__(self, model: ModelClient) -> None:
        self._model = model

    async def suggest(self, question: str, answer: str) -> Suggestion:
        reply = await self._model.complete(
            tier=SUGGEST_TIER,
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {
                    "role": "user",
                    "content": "Conversation start:\n\nUser: "
                    + question[:EXCERPT_CHARS]
                    + "\n\nAssistant: "
                    + answer[:EXCERPT_CHARS],
                },
            ],
            tools=[TOOL],
            temperature=0.2,
        )
        return parse_suggestion(reply)


def parse_suggestion(reply: ModelReply) -> Suggestion:
    """The tool call's arguments, else a JSON object in the text; invalid fields are dropped
    one by one, so a good title survives a bad color."""
    data: dict[str, Any] = {}  # JSON boundary: the model's arguments, checked field by field
    call = next((c for c in reply.tool_calls if c.name == TOOL_NAME), None)
    if call is not None:
        data = call.arguments
    else:
        found = _JSON_OBJECT.search(reply.text or "")
        if found:
            try:
                parsed = json.loads(found.group())
                data = parsed if isinstance(parsed, dict) else {}
            except json.JSONDecodeError:
                data = {}
    if not data:
        logger.info("the model suggested no session metadata")
    title = " ".join(str(data.get("title") or "").split()).strip("\"'")[:TITLE_MAX] or None
    icon = str(data.get("icon") or "").strip()
    color = str(data.get("color") or "").strip().lower()
    return Suggestion(
        title=title,
        icon=icon if icon and len(icon) <= ICON_MAX and is_emoji(icon) else None,
        color=AccentColor(color) if color in _COLORS else None,
    )
