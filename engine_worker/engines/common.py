"""Helpers engines share: turning inbox messages and chat history into model input."""

from __future__ import annotations

import json
from typing import Any

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


def history_to_llm(history: list[ChatMessage]) -> list[dict[str, Any]]:
    return [{"role": _LLM_ROLE[m.role], "content": m.content} for m in history]


def process_event_text(m: ProcessEvent) -> str:
    """Sibling events enter the model input as user-role text in a tag, so the model can tell
    them from the user (seed 000 §3.4)."""
    return (
        f'<process-event sourceProcessId="{m.source_process_id}" type="{m.type.value.lower()}">'
        f"{m.human_summary}</process-event>"
    )


def inbox_to_llm(m: SteerMessage) -> dict[str, Any]:
    """One inbox message as one user-role model message."""
    match m:
        case UserChatInput():
            return {"role": "user", "content": m.content}
        case ProcessEvent():
            return {"role": "user", "content": process_event_text(m)}
        case Reply():
            return {"role": "user", "content": m.content}
        case ToolResult():
            body = m.error if m.error else json.dumps(m.result, default=str)
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
            return {
                "role": "user",
                "content": f'<peer-event session="{m.source_session_id}" kind="{m.peer_kind}">'
                f"{json.dumps(m.payload)}</peer-event>",
            }
        case _:
            raise ValueError(f"unknown inbox message {type(m).__name__}")
