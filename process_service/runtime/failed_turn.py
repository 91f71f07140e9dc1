"""What a chat's turn that failed for good leaves in the chat (Lanes.end_failed).

A process without a parent (a session's chat: Arthur's, Eddie's) is the user's conversation:
when a turn fails every attempt (the model provider answered 503 through every retry, the
worker died each time), closing it STALE would refuse every later message. Its turn ends
instead, like a commit that answered nothing: the user messages the turn took stay in the
chat (written here when no attempt got to write them), a system message says why no answer
came, and the next message the user sends is answered with that history, its model reading
the unanswered message and the notice. docs/architecture.md "Lanes, leases and exactly-once
effects"; docs/protocol.md "A turn that failed".
"""

from __future__ import annotations

from dataclasses import replace

from process_service.models import TurnRef
from process_service.process_model import ChatRecord, MessageKind
from process_service.store.process_store import ProcessStore
from vance.chat_ids import chat_message_id, parse_chat_message_id
from vance.domain import ChatRole

# How far past the committed count a failed turn's attempts may have written (as far as a
# session's deletion looks, process_store._CHAT_SLACK).
_REACH = 256
# `meta.error` of the notice, for clients that show it as an error (web/src/chat.ts).
TURN_FAILED = "turn_failed"


def failure_detail(error: str, attempts: int, *, retried: bool) -> str:
    """The failure in words, before redaction: as a STALE close's detail says it."""
    return f"turn failed {attempts} times: {error}" if retried else error


def notice_text(detail: str) -> str:
    """The system message after the unanswered messages; the next turn's model reads it too,
    so it knows the message before it got no answer."""
    return (
        f"No answer came: {detail}. Your messages are kept in this chat; the next one you "
        "send is answered with them in view."
    )


async def write_failed_chat(
    store: ProcessStore, ref: TurnRef, detail: str, now_ms: int
) -> list[ChatRecord]:
    """Writes the failed turn's chat after what its attempts wrote: each user message it took
    that no attempt wrote (a worker that died before its report went out), then the notice.
    Returns the records written, for their events; `ref.highest_chat` covers them and what
    the attempts wrote, so the turn's end commits it all. Done again (process_service died
    before the turn's end was stored), it finds its own records and writes nothing twice."""
    first = ref.chat_base + 1
    found = await store.chat_range(ref.process_id, first, ref.chat_base + _REACH)
    mine = f"{ref.turn_id}:"
    turn = [r for r in found if r.turn_key.startswith(mine)]
    highest = max((parse_chat_message_id(r.id)[1] for r in found), default=ref.chat_base)
    said = {r.content for r in turn if r.role is ChatRole.USER}
    keys = {r.turn_key for r in turn}
    wanted: list[ChatRecord] = []
    for m in ref.owned:
        content = str(m.body.get("content") or "")
        if m.kind is MessageKind.USER_CHAT_INPUT and content and content not in said:
            wanted.append(_record(ref, f"{mine}unsaid:{m.id}", ChatRole.USER, content, {}, now_ms))
    notice = notice_text(detail)
    meta = {"error": TURN_FAILED, "detail": detail}
    wanted.append(_record(ref, f"{mine}failed", ChatRole.SYSTEM, notice, meta, now_ms))
    written: list[ChatRecord] = []
    n = highest + 1
    for record in wanted:
        if record.turn_key in keys:
            continue
        stored, n = await _insert_from(store, record, n)
        if stored is not None:
            written.append(stored)
        highest = max(highest, n)
        n += 1
    ref.highest_chat = max(ref.highest_chat, highest)
    return written


async def _insert_from(
    store: ProcessStore, record: ChatRecord, n: int
) -> tuple[ChatRecord | None, int]:
    """Inserts at the first free number from `n` (a late report of a lost attempt may have
    taken one meanwhile); None when the record is there already."""
    while True:
        placed = replace(record, id=chat_message_id(record.think_process_id, n))
        if await store.insert_chats([placed]):
            return placed, n
        existing = await store.get_chat(placed.id)
        if existing is not None and existing.turn_key == record.turn_key:
            return None, n
        n += 1


def _record(
    ref: TurnRef, key: str, role: ChatRole, content: str, meta: dict[str, str], now_ms: int
) -> ChatRecord:
    return ChatRecord(
        id="",
        session_id=ref.session_id,
        think_process_id=ref.process_id,
        process_name=ref.process_name,
        role=role,
        content=content,
        created_at_ms=now_ms,
        meta=dict(meta),
        turn_key=key,
    )
