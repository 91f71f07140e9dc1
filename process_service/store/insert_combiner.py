"""Ordered inserts of many callers sent as one command: a group commit across sessions.

Each session's events are already group-committed (process_service/events/log.py): one insert for
what its writers queued meanwhile. At a hosted model's pace a busy replica has hundreds of
sessions each writing a little (a RUNNING event, a batch of chunks, a commit), so the store saw
one insert, one SQLite transaction, per session and step. Here an insert that finds another in
flight waits for it and goes with everything queued meanwhile in the next one; an insert that
finds none goes once the event loop has run what was ready with it: the turns whose reports
came in one worker message (or whose chat insert came back together) queue theirs in that pass,
and all go as one command where the first went alone before. An idle system waits one loop
pass, nothing more. A busy one waits longer, the way a database's group commit delays a commit
while others are active (PostgreSQL's commit_delay with commit_siblings): a command goes no
sooner than GATHER_S after the one before it, so at most one per GATHER_S, each carrying what
the turns of every session queued meanwhile.

The contract is the store's ordered `insert_many` as each caller used it alone: it returns how
many of its documents went in before one whose `_id` exists (all of them when none did), and
raises other errors. In one ordered command the first duplicate stops the rest: the caller
whose document it was gets its count; callers before it got everything; callers after it had
nothing tried, so they go again in the next command, first."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from vance.store import Document  # the store's documents, as ProcessStore built them

# A command goes at least this long after the previous one started (the module's docstring). At
# a hosted model's pace, 200 sessions, 120-130 turns/s on a quiet machine, each combiner sent
# about one command per turn, each the store's CPU (about 0.4 ms) and a SQLite transaction. With
# 8 ms each sends at most 125 a second, and the turns whose commits share one go on together
# (their acks, their answers to the gateway), so the stream messages after carry more turns too:
# about a quarter less server CPU per turn at that pace (docs/performance.md "Batching across
# turns"). A turn waits at most this long per insert, twice on its commit's path (the answer's
# chat, its events) and once before its first chunk (the user's message); 15 ms cut as much CPU
# but put the quiet p50 at 78-91 ms above the model (28-33 without), against issue 28's 100 ms,
# 5 ms went unnoticed (the commands were 8-15 ms apart anyway). A quiet replica never waits.
GATHER_S = 0.008

# The store's ordered insert: how many documents went in before an existing `_id`.
OrderedInsert = Callable[[list[Document]], Awaitable[int]]


@dataclass(eq=False)
class _Request:
    docs: list[Document]
    done: asyncio.Future[int]


class InsertCombiner:
    def __init__(self, insert: OrderedInsert, *, gather_s: float = GATHER_S) -> None:
        self._insert = insert
        self._gather_s = gather_s
        self._last = float("-inf")  # when the last command went (the loop's clock)
        self._queue: list[_Request] = []
        self._writing = False
        self._idle = asyncio.Event()
        self._idle.set()

    async def insert(self, docs: list[Document]) -> int:
        if not docs:
            return 0
        req = _Request(docs, asyncio.get_running_loop().create_future())
        self._queue.append(req)
        try:
            while not req.done.done():
                if self._writing:
                    # The writer sends ours with its next command; if it stops first
                    # (cancelled), the first of us to wake takes over.
                    await self._idle.wait()
                    continue
                await self._write()
        except BaseException:
            # Cancelled before ours was sent (a writer now also waits out a loop pass first):
            # it is not sent later either, after its caller gave it up.
            if req in self._queue:
                self._queue.remove(req)
            raise
        return req.done.result()

    async def _write(self) -> None:
        self._writing = True
        self._idle.clear()
        try:
            # What the rest of this loop pass inserts rides along, and under load what the
            # next GATHER_S inserts (the module's docstring).
            loop = asyncio.get_running_loop()
            await asyncio.sleep(max(0.0, self._last + self._gather_s - loop.time()))
            while self._queue:
                batch, self._queue = self._queue, []
                self._last = loop.time()
                await self._one(batch)
                if self._queue:
                    await asyncio.sleep(max(0.0, self._last + self._gather_s - loop.time()))
        finally:
            self._writing = False
            self._idle.set()

    async def _one(self, batch: list[_Request]) -> None:
        docs = [d for r in batch for d in r.docs]
        try:
            inserted = await self._insert(docs)
        except BaseException as exc:
            failure = exc if isinstance(exc, Exception) else RuntimeError(f"insert cut: {exc!r}")
            for r in batch:
                if not r.done.done():
                    r.done.set_exception(failure)
            if not isinstance(exc, Exception):
                raise  # cancelled: the next waiter takes over what is queued
            return
        untried: list[_Request] = []
        start = 0
        for r in batch:
            end = start + len(r.docs)
            if end <= inserted:
                r.done.set_result(len(r.docs))
            elif start <= inserted:
                r.done.set_result(inserted - start)  # the duplicate is this caller's
            else:
                untried.append(r)
            start = end
        self._queue = untried + self._queue
