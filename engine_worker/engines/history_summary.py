"""The rolling summary of chat history cut from the model's context (seed 000 §3.8): what the
token budget leaves out is not lost but summarised on the process (`chat_history_summary`, and
`chat_history_summary_through`, the last chat message number it covers), and the summary goes
into the truncation note. Each turn adds one line per message newly cut (role and the start of
its text); past `SUMMARY_LIMIT` characters the oldest lines go. No model call: a summary must not
cost a turn a second request, and the lines keep the words a later search of the chat needs."""

from __future__ import annotations

from dataclasses import dataclass

from vance.domain import ChatMessage

SUMMARY_LIMIT = 4_000
LINE_LIMIT = 200


@dataclass(frozen=True)
class Summary:
    text: str
    through: int


def message_number(m: ChatMessage) -> int:
    """Chat message ids are `<process>:<number>` (process_service/store/process_store.py chat_id)."""
    tail = m.id.rpartition(":")[2]
    return int(tail) if tail.isdigit() else 0


def roll(previous: Summary, cut: list[ChatMessage]) -> Summary:
    """The summary with the messages cut now that it does not cover yet."""
    new = [m for m in cut if message_number(m) > previous.through]
    if not new:
        return previous
    lines = [previous.text] if previous.text else []
    for m in new:
        text = " ".join(m.content.split())
        if len(text) > LINE_LIMIT:
            text = text[:LINE_LIMIT] + "..."
        lines.append(f"{m.role.value.lower()}: {text}")
    joined = "\n".join(lines)
    if len(joined) > SUMMARY_LIMIT:
        joined = joined[-SUMMARY_LIMIT:]
        joined = joined[joined.find("\n") + 1 :] if "\n" in joined else joined
    return Summary(joined, max(previous.through, *(message_number(m) for m in new)))
