"""The process document every turn reads and rewrites twice (the lane take and the commit,
process_service/store/transitions.py) carries no empty fields (issue 28, the store's CPU per
turn): spec fields still at "" or 0 are left out at spawn, and a commit that drained no
client-chosen keys drops `drained_keys` instead of writing an empty list. What a user would
notice is unchanged: the process reads back whole, and a key a turn drained is still refused
when sent again."""

from __future__ import annotations

import uuid
from typing import Any

from pymongo import AsyncMongoClient

from process_service.process_model import InboxMessage, Lane, MessageKind, Process
from process_service.store.process_store import ProcessStore
from process_service.store.transitions import TurnEnd
from tests.harness import System
from vance.domain import ProcessStatus

EMPTY_SPEC = (
    "goal",
    "parent_process_id",
    "close_detail",
    "chat_history_summary",
    "chat_history_summary_through",
    "last_suspend_cause",
    "persistent_tool_calls",
    "connection_profile",
    "close_reason",
)


def _message(key: str, *, keyed: bool) -> InboxMessage:
    body: dict[str, Any] = {"id": key, "idempotency_key": key, "kind": "USER_CHAT_INPUT"}
    return InboxMessage(id=key, key=key, kind=MessageKind.USER_CHAT_INPUT, keyed=keyed, body=body)


def _end(drained: list[str], chat_count: int) -> TurnEnd:
    return TurnEnd(
        status=ProcessStatus.IDLE,
        close_reason=None,
        close_detail="",
        chat_count=chat_count,
        drained_keys=drained,
        now_ms=2_000,
    )


async def test_a_process_document_holds_no_empty_fields_and_reads_back_whole(
    system: System,
) -> None:
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(system.config.mongodb_uri)
    try:
        # A database of its own: in the system's, process_service's dispatcher would find the
        # process this test leaves wanting a turn (its messages are bare, no engine could run
        # them) and hand it to a worker of the shared system.
        db = client[f"doc_shape_{uuid.uuid4().hex[:8]}"]
        store = ProcessStore(db)
        pid = f"proc_shape_{uuid.uuid4().hex[:12]}"
        spawned = Process(
            id=pid,
            session_id=f"sess_{pid}",
            name="chat",
            engine="arthur",
            tenant_id="default",
            title="Session chat",
            engine_version="1.0.0",
            params={"model": "default:chat"},
            created_at_ms=1_000,
            updated_at_ms=1_000,
        )
        await store.insert_process(spawned)
        raw = await db["processes"].find_one({"_id": pid})
        assert raw is not None
        assert not [f for f in EMPTY_SPEC if f in raw], raw
        assert raw["title"] == "Session chat" and raw["tenant_id"] == "default"
        assert await store.get(pid) == spawned

        # A turn that drained a client-chosen key keeps it; the next resend is refused.
        assert await store.push_pending(pid, _message("k1", keyed=True)) is not None
        lane = Lane("turn_1", 1, "worker-1", 60_000)
        assert await store.take_lane(pid, lane, 1_500) is not None
        after = await store.commit_turn(
            pid, ("turn_1", 1), _end(["k1"], 2), [], unless_pause_requested=True
        )
        assert after is not None and after.drained_keys == ("k1",)
        assert await store.push_pending(pid, _message("k1", keyed=True)) is None

        # A plain turn drains no keys: the field goes, and the process reads as before.
        assert await store.push_pending(pid, _message("k2", keyed=False)) is not None
        lane = Lane("turn_2", 1, "worker-1", 60_000)
        assert await store.take_lane(pid, lane, 2_500) is not None
        after = await store.commit_turn(
            pid, ("turn_2", 1), _end([], 4), [], unless_pause_requested=True
        )
        assert after is not None
        assert after.drained_keys == () and after.chat_count == 4 and after.lane is None
        assert after.status is ProcessStatus.IDLE and after.started
        raw = await db["processes"].find_one({"_id": pid})
        assert raw is not None and "drained_keys" not in raw, raw
        assert not [f for f in EMPTY_SPEC if f in raw], raw
        # A message arrives as before, and fields written later read back.
        assert await store.push_pending(pid, _message("k3", keyed=True)) is not None
        await store.count_persistent_call(pid)
        read = await store.get(pid)
        assert read is not None and read.persistent_tool_calls == 1
        assert read.pending_keys == ("k3",) and read.wake
    finally:
        await client.close()
