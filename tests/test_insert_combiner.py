"""The insert combiner's edges (process_service/store/insert_combiner.py), against a recording
stand-in for the store's ordered insert: an insert cancelled before it was sent is never sent
with a later caller's command."""

from __future__ import annotations

import asyncio

import pytest

from process_service.store.insert_combiner import InsertCombiner
from vance.store import Document


async def test_an_insert_cancelled_before_it_was_sent_is_not_sent_later() -> None:
    sent: list[list[str]] = []

    async def insert(docs: list[Document]) -> int:
        sent.append([str(d["_id"]) for d in docs])
        return len(docs)

    combiner = InsertCombiner(insert)
    first = asyncio.create_task(combiner.insert([{"_id": "given-up"}]))
    await asyncio.sleep(0)  # it writes, once the rest of this loop pass has run
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await combiner.insert([{"_id": "kept"}]) == 1
    assert sent == [["kept"]]
