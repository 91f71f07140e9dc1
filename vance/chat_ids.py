"""The formats of chat message ids, in one place.

A stored chat message is `<process id>:<number>`, its number zero-padded to 8 digits so ids
sort in chat order (process_service/store/process_store.py reads ranges of them by id). A worker names the
messages of a turn `<turn id>:<ordinal>` (the ordinal counts the turn's appends from 1), and
process_service turns the ordinal into the stored number; a redo of the turn reuses the
ordinals, so it writes each message once."""

from __future__ import annotations


def chat_message_id(process_id: str, number: int) -> str:
    return f"{process_id}:{number:08d}"


def parse_chat_message_id(message_id: str) -> tuple[str, int]:
    """(process id, number) of a stored chat message id."""
    process_id, _, number = message_id.rpartition(":")
    return process_id, int(number)


def turn_message_id(turn_id: str, ordinal: int) -> str:
    return f"{turn_id}:{ordinal}"


def turn_message_ordinal(message_id: str) -> int:
    """The ordinal of a worker's `<turn id>:<ordinal>` message id; ValueError when malformed."""
    _, sep, ordinal = message_id.rpartition(":")
    if not sep or not ordinal.isdigit() or int(ordinal) < 1:
        raise ValueError(f"not a turn message id: {message_id!r}")
    return int(ordinal)
