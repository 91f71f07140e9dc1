"""Helpers engines share: turning inbox messages and chat history into model input."""

from __future__ import annotations

import json

from engine_worker.json_types import Json, ModelMessage
from vance.domain import (
    ChatMessage,
    ChatRole,
    ExternalCommand,
    InboxAnswer,
    PeerEvent,
    ProcessEvent,
    Reply,
    SteerMessage,
    ToolResult,
    UserChatInput,
)

_LLM_ROLE = {ChatRole.USER: "user", ChatRole.ASSISTANT: "assistant", ChatRole.SYSTEM: "system"}


def history_to_llm(history: list[ChatMessage]) -> list[ModelMessage]:
    return [{"role": _LLM_ROLE[m.role], "content": m.content} for m in history]


# A worker's payload enters the parent's model input up to this many characters of JSON; a
# larger one is cut with a note, so one chatty worker cannot fill the parent's context.
PAYLOAD_LIMIT = 4_000


STRING_LIMIT = 1_000


def _shorten(value: Json) -> Json:
    """Long strings are cut one by one first, so one big field does not push out the small
    ones (identifiers, counts) that the model needs most."""
    if isinstance(value, str) and len(value) > STRING_LIMIT:
        return f"{value[:STRING_LIMIT]}... [cut: {len(value) - STRING_LIMIT} more characters]"
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    return value


def bounded_json(value: Json, limit: int = PAYLOAD_LIMIT) -> str:
    text = json.dumps(_shorten(value), default=str, ensure_ascii=False)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [cut: {len(text) - limit} more characters]"


def process_event_text(m: ProcessEvent, *, with_payload: bool = True) -> str:
    """Sibling events enter the model input as user-role text in a tag, so the model can tell
    them from the user (seed 000 §3.4); the payload, if any, follows the summary, bounded.
    A hub that relays events (Eddie) renders their payload itself (`with_payload=False`): it
    holds the hub's own bookkeeping, such as the original of a summarised event."""
    body = m.human_summary
    if m.payload and with_payload:
        body += f"\n<payload>{bounded_json(m.payload)}</payload>"
    return (
        f'<process-event sourceProcessId="{m.source_process_id}" type="{m.type.value.lower()}">'
        f"{body}</process-event>"
    )


def inbox_to_llm_messages(m: SteerMessage) -> list[ModelMessage]:
    """One inbox message as model messages. A tool result is a tool message matched to its call
    by `tool_call_id`; the call was made in an earlier turn, whose assistant step is not in the
    chat history, so the call is restated right before its result (a tool message must follow
    the assistant message that asked for it)."""
    if isinstance(m, ToolResult):
        body = (
            json.dumps({"status": m.status.value, "error": m.error})
            if m.error
            else bounded_json(m.result)
        )
        return [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": m.tool_call_id,
                        "type": "function",
                        "function": {"name": m.tool_name, "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": m.tool_call_id, "content": body},
        ]
    return [inbox_to_llm(m)]


def inbox_to_llm(m: SteerMessage) -> ModelMessage:
    """One inbox message as one user-role model message (tool results: `inbox_to_llm_messages`)."""
    match m:
        case UserChatInput():
            return {"role": "user", "content": m.content}
        case ProcessEvent():
            return {"role": "user", "content": process_event_text(m)}
        case Reply():
            return {"role": "user", "content": m.content}
        case ToolResult():
            body = m.error if m.error else bounded_json(m.result)
            return {
                "role": "user",
                "content": f'<tool-result name="{m.tool_name}" status="{m.status.value}">'
                f"{body}</tool-result>",
            }
        case ExternalCommand():
            return {
                "role": "user",
                "content": f'<command name="{m.command}">{json.dumps(m.params)}</command>',
            }
        case InboxAnswer():
            return {
                "role": "user",
                "content": f'<inbox-answer item="{m.inbox_item_id}">'
                f"{json.dumps(m.answer, default=str)}</inbox-answer>",
            }
        case PeerEvent():
            # Only hubs get peer events (Eddie takes them in itself: engines/eddie_peers.py).
            return {
                "role": "user",
                "content": f'<peer-event session="{m.source_session_id}" type="{m.type.value}">'
                f"{m.human_summary}</peer-event>",
            }
        case _:
            raise ValueError(f"unknown inbox message {type(m).__name__}")
