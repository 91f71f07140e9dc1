"""Fitting chat history into a token budget: the oldest messages go first, always with a note
(which carries the rolling summary of what was cut, when there is one)."""

from __future__ import annotations

from engine_worker.json_types import ModelMessage

TRUNCATED_NOTE = "Earlier conversation was truncated."


def estimate_tokens(message: ModelMessage) -> int:
    """About four characters a token, plus the message's framing."""
    return len(str(message.get("content") or "")) // 4 + 4


def truncation_note(summary: str) -> ModelMessage:
    text = TRUNCATED_NOTE
    if summary:
        text += f" A summary of it, oldest first:\n{summary}"
    return {"role": "system", "content": text}


def fit(
    system: ModelMessage,
    history: list[ModelMessage],
    turn_input: list[ModelMessage],
    budget: int,
    *,
    summary: str = "",
    older_unread: bool = False,
) -> tuple[list[ModelMessage], int]:
    """The model input and how many of the oldest history messages were cut. The system prompt
    and this turn's input always stay; history fills what is left. `older_unread`: the history
    given is only the newest part of the chat, so something was cut in any case."""
    fixed = estimate_tokens(system) + sum(estimate_tokens(m) for m in turn_input)
    if not older_unread and fixed + sum(estimate_tokens(m) for m in history) <= budget:
        return [system, *history, *turn_input], 0
    note = truncation_note(summary)
    room = budget - fixed - estimate_tokens(note)
    kept: list[ModelMessage] = []
    for message in reversed(history):
        cost = estimate_tokens(message)
        if cost > room:
            break
        kept.append(message)
        room -= cost
    kept.reverse()
    return [system, note, *kept, *turn_input], len(history) - len(kept)


def fit_history(
    system: ModelMessage,
    history: list[ModelMessage],
    turn_input: list[ModelMessage],
    budget: int,
) -> list[ModelMessage]:
    return fit(system, history, turn_input, budget)[0]


def history_limit(budget: int) -> int:
    """How many of the newest messages can matter: every message costs at least four tokens,
    so reading more than this could never add one to the model input."""
    return max(1, budget // 4) + 1
