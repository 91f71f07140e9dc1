"""Chat feed pages written by two replicas at once (process_service/events/chat_feed.py) against
the real store, through the turn path's commands (vance/store_wire.py): a page number one replica
took is a duplicate to the other, which finds the end again and writes its page after it. Every
message is in exactly one page, and the page numbers run without a gap."""

from __future__ import annotations

import asyncio
from typing import Any

from pymongo import AsyncMongoClient

from process_service.events.chat_feed import END_ID, ChatFeed
from process_service.events.log import CHAT_APPENDED
from process_service.process_model import SessionEvent
from tests.harness import System, eventually
from tests.lifecycle_support import marker
from vance.clock import SystemClock
from vance.store_wire import HotCommands, WirePool, wire_address


def _chat(session_id: str, message_id: str) -> SessionEvent:
    data = {
        "chat_message_id": message_id,
        "think_process_id": "proc_feed",
        "process_name": "chat",
        "role": "USER",
        "content": f"text of {message_id}",
        "created_at_ms": 1,
    }
    return SessionEvent(session_id, CHAT_APPENDED, data, 1)


async def test_two_replicas_writing_pages_at_once_keep_every_message_once(
    system: System,
) -> None:
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(system.config.mongodb_uri)
    # A database of its own: the shared system's session_service reads the shared feed.
    db = client[f"feedtest_{marker()}"]
    address = wire_address(system.config.mongodb_uri)
    assert address is not None, "the embedded store's URI is one the wire path serves"
    hot = HotCommands(db, WirePool(*address, db.name))
    feeds = [ChatFeed(db, SystemClock(), hot=hot) for _ in range(2)]
    writers = [asyncio.create_task(f.run()) for f in feeds]
    try:
        expected = set()
        for rnd in range(6):
            for k, feed in enumerate(feeds):
                for i in range(3):
                    mid = f"msg_{rnd}_{k}_{i}"
                    expected.add(mid)
                    feed.note(f"sess_{k}", _chat(f"sess_{k}", mid))

        async def all_written() -> list[dict[str, Any]] | None:
            pages = await db["chat_feed"].find({"_id": {"$ne": END_ID}}).to_list(None)
            found = [m["_id"] for p in pages for m in p["m"]]
            return pages if sorted(found) == sorted(expected) else None

        pages = await eventually(all_written, what="every message in a page")
        numbers = sorted(int(p["_id"]) for p in pages)
        assert numbers == list(range(1, len(numbers) + 1))
    finally:
        for w in writers:
            w.cancel()
        await asyncio.gather(*writers, return_exceptions=True)
        await hot.close()
        await client.drop_database(db.name)
        await client.close()
