"""A hard delete's share of engine memory (seed 002 §11: "session-scoped MemoryDocuments of the
Session"): the records, heads and idempotency claims of every process of the session (process
scope, `p:<processId>`) and of the session itself (session scope, `s:<sessionId>`).

Project-scope records stay: they are the project's facts, meant to outlive the session that
found them (process_service/knowledge/memory_store.py). The records are found by the `_id` prefix of their
scope key, the one indexed field of the embedded store, in one query per collection."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pymongo.asynchronous.database import AsyncDatabase

from vance.store import Document


def session_scope_keys(session_id: str, process_ids: Iterable[str]) -> list[str]:
    return [f"p:{pid}" for pid in process_ids] + [f"s:{session_id}"]


async def delete_session_memory(
    db: AsyncDatabase[Document], session_id: str, process_ids: Iterable[str]
) -> int:
    """Deletes the session's memory; returns how many records went."""
    keys = session_scope_keys(session_id, process_ids)
    prefix = {"$regex": "^(" + "|".join(re.escape(k) for k in keys) + "):"}
    records = await db["memory_records"].delete_many(
        {"$or": [{"_id": prefix}, {"session_id": session_id}]}
    )
    await db["memory_heads"].delete_many({"_id": {"$in": keys}})
    await db["memory_keys"].delete_many({"_id": prefix})
    return int(records.deleted_count)
