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


async def test_callers_gathered_by_the_window_share_one_command_in_order() -> None:
    """Within the window of the previous command (a busy replica), callers of later loop
    passes (turns whose reports came in different worker messages) ride in one command, in
    the order they came, each told its own count; the first duplicate stops the rest, which go
    again next."""
    sent: list[list[str]] = []

    async def insert(docs: list[Document]) -> int:
        sent.append([str(d["_id"]) for d in docs])
        # An existing id stops an ordered insert: "b2" is there already.
        ids = [str(d["_id"]) for d in docs]
        return ids.index("b2") if "b2" in ids else len(docs)

    combiner = InsertCombiner(insert, gather_s=0.2)
    assert await combiner.insert([{"_id": "quiet"}]) == 1

    async def later(passes: int, ids: list[str]) -> int:
        for _ in range(passes):
            await asyncio.sleep(0)
        return await combiner.insert([{"_id": i} for i in ids])

    counts = await asyncio.gather(later(0, ["a"]), later(2, ["b1", "b2"]), later(5, ["c"]))
    # One command for the three (the window), then "c" again, untried after the duplicate.
    assert sent == [["quiet"], ["a", "b1", "b2", "c"], ["c"]]
    assert list(counts) == [1, 1, 1]
