"""A gateway's follow stream under load (process_service/events/follow.py, GATHER_S): what the
event loop writes within GATHER_S after a message rides with the next one, so a stream busy with
many sessions' chunks sends a message per GATHER_S at most, not one per loop pass; every event
still arrives once, in seq order per session, and a quiet stream's event goes at once. An
EventLog on the real store, as process_service builds it (one replica)."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from typing import Any

import pytest

from process_service.events import follow
from process_service.events.follow import FollowStream
from process_service.events.log import EventLog
from process_service.store.process_store import ProcessStore
from tests.harness import System
from tests.lifecycle_support import store
from vance.clock import SystemClock


def _chunk(text: str) -> dict[str, Any]:  # JSON: a stream chunk's data (runtime/turns.py)
    return {"think_process_id": "p", "process_name": "chat", "role": "ASSISTANT", "chunk": text}


# The gathering for this test: long enough that "at once" (a quiet stream) and "a gathering
# later" (a busy one) stay apart on a loaded machine, where the shipped 4 ms would not.
GATHER_S = 0.5


async def test_a_busy_follow_stream_gathers_loop_passes_and_loses_nothing(
    system: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follow, "GATHER_S", GATHER_S)
    sids = [f"sess_fg{uuid.uuid4().hex[:10]}" for _ in range(3)]
    async with store(system) as db:
        log = EventLog(ProcessStore(db), SystemClock(), chunk_window_s=600, sole_writer=True)
        for sid in sids:
            await log.publish(sid, "progress", {"status": "RUNNING"})
        loop = asyncio.get_running_loop()
        async with asyncio.TaskGroup() as tasks:
            stream = FollowStream(log, tasks)
            for key, sid in enumerate(sids):
                stream.add(key, sid, 0)
            replies = stream.replies()
            # The replays (each session's RUNNING event) come first.
            got: dict[int, list[int]] = {k: [] for k in range(len(sids))}
            while sum(map(len, got.values())) < len(sids):
                for key, events in (await asyncio.wait_for(anext(replies), 10)).events.items():
                    got[key] += [e.seq for e in events]
            # A quiet stream: the next event goes without waiting for a gathering.
            await asyncio.sleep(2 * GATHER_S)
            log.chunk(sids[0], _chunk("first"))
            await log.flush(sids[0])  # the session's first chunk claims a block of seqs
            sent = loop.time()
            first = await asyncio.wait_for(anext(replies), 10)
            assert loop.time() - sent < GATHER_S
            got[0] += [e.seq for e in first.events[0]]

            # Busy: a chunk of another session every loop pass.
            async def produce() -> int:
                n = 300
                for i in range(n):
                    sid = sids[i % len(sids)]
                    log.chunk(sid, _chunk(f"c{i}"))
                    await log.flush(sid)  # nothing to write once the session's seqs are claimed
                    await asyncio.sleep(0)
                return n

            producer = tasks.create_task(produce())
            times: list[float] = []
            total = len(sids) + 1
            while not producer.done() or sum(map(len, got.values())) < total + producer.result():
                reply = await asyncio.wait_for(anext(replies), 10)
                times.append(loop.time())
                for key, events in reply.events.items():
                    got[key] += [e.seq for e in events]
            stream.close()
            stream.detach_all()
        n = producer.result()
        assert sum(map(len, got.values())) == total + n
        for seqs in got.values():
            assert seqs == sorted(set(seqs))
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert all(g >= GATHER_S * 0.9 for g in gaps), gaps
        assert n > 3 * len(times), (n, len(times))  # many loop passes per message
