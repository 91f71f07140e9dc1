"""Fitting chat history into a token budget: the oldest messages go first, with a note."""

from __future__ import annotations

from typing import Any

TRUNCATED_NOTE = "Earlier conversation was truncated."


def estimate_tokens(message: dict[str, Any]) -> int:
    """About four characters a token, plus the message's framing."""
    return len(str(message.get("content") or "")) // 4 + 4


def fit_history(
    system: dict[str, Any],
    history: list[dict[str, Any]],
    turn_input: list[dict[str, Any]],
    budget: int,
) -> list[dict[str, Any]]:
    """The system prompt and this turn's input always stay; history fills what is left."""
    fixed = estimate_tokens(system) + sum(estimate_tokens(m) for m in turn_input)
    room = budget - fixed
    kept: list[dict[str, Any]] = []
    for message in reversed(history):
        cost = estimate_tokens(message)
        if cost > room:
            break
        kept.append(message)
        room -= cost
    kept.reverse()
    if len(kept) < len(history):
        note = {"role": "system", "content": TRUNCATED_NOTE}
        return [system, note, *kept, *turn_input]
    return [system, *kept, *turn_input]
