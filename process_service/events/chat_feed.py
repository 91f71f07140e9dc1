"""The chat feed: the chat messages appended in every session, as a durable log of numbered
pages that a reader follows from a position it keeps (`StreamChatFeed`). session_service's
search indexer is its reader: it indexes each page and then stores the page's position, so after
a restart it resumes where it stopped, and nothing is indexed from hints or by polling.

Writing. The event log (events.py) hands over every `chat_message_appended` event once it is
durable (`note`, in memory: nothing is added to the turn's own writes). A writer task inserts
what gathered meanwhile as one page, `_id` = the page number zero-padded, in `chat_feed`, as
soon as the page before it is written: a group commit across sessions, so under load one insert
carries the messages of many turns. Page numbers are taken as event seqs are: the store's
unique `_id` arbitrates between replicas, and a writer that meets a number another replica took
re-reads the end and numbers again. Numbers are therefore contiguous: a reader that meets a
missing one has reached the end. An `end` document keeps a lower bound of the last number,
raised every MARK_EVERY pages, from which the end is found by probing forward (all reads by
`_id`, docs/architecture.md "Store access").

Reading. Pages after the reader's position come from a ring of recently written pages not yet
acknowledged when held, else from the store; at the end the reader waits for this replica's
next page, and with replicas (`poll_s`) looks in the store every `poll_s` for another
replica's. A sole replica (`poll_s=None`) writes every page itself, so its reader reads nothing
while the feed is quiet: an idle system costs the store no reads here (it polled 4 reads a
second before).

Trimming and deleting. The reader acknowledges what it has indexed (`AckChatFeed`, about once
a second); once TRIM_EVERY pages are acknowledged, the pages up to there are deleted, and the
`end` document keeps how far (`trimmed`).
A hard delete of a session (`DeleteSessionData`) scrubs its messages from the pages not yet
trimmed, from the ring and from what is gathered, so nothing of a deleted session stays here.

Known gap: a crash of process_service after a chat message is stored and before its page is
written (one page write, gathered for GATHER_S) leaves that message out of the feed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass

from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import BulkWriteError

from process_service.convert import chat_to_proto
from process_service.events.log import CHAT_APPENDED
from process_service.process_model import SessionEvent
from process_service.store.documents import chat_from_doc
from vance.clock import Clock
from vance.internal.v1 import process_internal_pb2 as pipb

# Document: a page holds chat messages as the feed stores them (its own collection); they
# become records (store_docs.chat_from_doc) when a page goes out.
from vance.store import Document, only_duplicates
from vance.store_wire import HotCommands

logger = logging.getLogger(__name__)

END_ID = "end"
MARK_EVERY = 32
TRIM_EVERY = 32  # acknowledged pages are deleted once this many are due
PAGE_MESSAGES = 500  # at most this many messages in one page
_PROBE = 64
_RING = 256
_IN_BATCH = 500
_RETRY_S = 1.0
_RENUMBER_ATTEMPTS = 8
GATHER_S = 0.25


def page_id(n: int) -> str:
    return f"{n:012d}"


def page_to_proto(page: FeedPage) -> pipb.ChatFeedPage:
    return pipb.ChatFeedPage(
        position=page.position,
        messages=[chat_to_proto(chat_from_doc(m)) for m in page.messages],
    )


@dataclass(frozen=True)
class FeedPage:
    position: int
    messages: list[Document]


class ChatFeed:
    def __init__(
        self,
        db: AsyncDatabase[Document],
        clock: Clock,
        *,
        poll_s: float | None = 0.5,
        hot: HotCommands | None = None,
    ) -> None:
        """`poll_s`: how often a reader at the end looks for other replicas' pages; None when
        this is the only replica (nothing but its own writes can add a page or trim one).
        `hot`: the turn path's commands (vance/store_wire.py), which write the pages: a page
        is written a few times a second under load, and PyMongo spent about 0.3 ms of CPU on
        each insert beyond encoding it."""
        self._pages = db["chat_feed"]
        self._hot_pages = (hot or HotCommands(db)).collection("chat_feed")
        self._clock = clock
        self._poll_s = poll_s
        self._gathered: list[Document] = []
        self._wake = asyncio.Event()
        self._written = asyncio.Event()  # replaced after every page: readers wait on it
        self._last: int | None = None  # last page number, None: find it in the store
        self._ring: OrderedDict[int, list[Document]] = OrderedDict()
        self._trimmed: int | None = None  # pages up to here are deleted; None: read it

    # ---- writing ----

    def note(self, session_id: str, event: SessionEvent) -> None:
        """A durable event of the session's stream; chat messages go into the next page."""
        if event.kind != CHAT_APPENDED:
            return
        data = event.data
        self._gathered.append(
            {
                "_id": data["chat_message_id"],
                "session_id": session_id,
                "think_process_id": data["think_process_id"],
                "process_name": data.get("process_name", ""),
                "role": data["role"],
                "content": data["content"],
                "created_at_ms": data.get("created_at_ms", 0),
            }
        )
        self._wake.set()

    async def run(self) -> None:
        """Until cancelled: writes each gathered batch as a page; a last page when cancelled."""
        try:
            while True:
                await self._wake.wait()
                # Gathers for a moment: under load a page then carries the messages of many
                # turns (one insert for all), and search still finds them well within a second.
                await asyncio.sleep(GATHER_S)
                self._wake.clear()
                await self._write_gathered()
        finally:
            # Once, without retries: the store may be closing too.
            with contextlib.suppress(Exception):
                await asyncio.shield(self._write_gathered(retry=False))

    async def _write_gathered(self, *, retry: bool = True) -> None:
        while self._gathered:
            # Taken out while written, so a scrub meanwhile filters only what is still waiting.
            batch = self._gathered[:PAGE_MESSAGES]
            self._gathered = self._gathered[len(batch) :]
            try:
                await self._append(batch)
            except Exception:
                self._gathered = batch + self._gathered
                if not retry:
                    raise
                logger.exception("writing a chat feed page failed; retrying")
                await asyncio.sleep(_RETRY_S)

    async def _append(self, messages: list[Document]) -> int:
        for _ in range(_RENUMBER_ATTEMPTS):
            if self._last is None:
                self._last = await self.end()
            n = self._last + 1
            try:
                await self._hot_pages.insert_many(
                    [{"_id": page_id(n), "m": messages, "at_ms": self._clock.now_ms()}]
                )
            except BulkWriteError as exc:
                if not only_duplicates(exc):
                    raise
                self._last = None  # another replica took the number: find the end again
                continue
            self._last = n
            self._remember(n, messages)
            if n % MARK_EVERY == 0:
                await self._pages.update_one({"_id": END_ID}, {"$max": {"n": n}}, upsert=True)
            written, self._written = self._written, asyncio.Event()
            written.set()
            return n
        raise RuntimeError("chat feed page numbers kept being taken by other writers")

    def _remember(self, n: int, messages: list[Document]) -> None:
        self._ring[n] = messages
        while len(self._ring) > _RING:
            self._ring.popitem(last=False)

    async def end(self) -> int:
        """The number of the last page in the store (0: none). Trimmed pages are gone, so the
        probe starts after them too."""
        doc = await self._pages.find_one({"_id": END_ID}) or {}
        last = max(int(doc.get("n", 0)), int(doc.get("trimmed", 0)))
        while True:
            ids = [page_id(n) for n in range(last + 1, last + 1 + _PROBE)]
            found = {d["_id"] async for d in self._pages.find({"_id": {"$in": ids}}, {"_id": 1})}
            run = 0
            while run < len(ids) and ids[run] in found:
                run += 1
            last += run
            if run < len(ids):
                return last

    # ---- trimming and scrubbing ----

    async def _trimmed_through(self) -> int:
        if self._trimmed is None:
            doc = await self._pages.find_one({"_id": END_ID})
            self._trimmed = int(doc.get("trimmed", 0)) if doc else 0
        return self._trimmed

    async def trim(self, through: int) -> None:
        """Deletes the pages up to `through` (the reader has indexed them)."""
        # The ring serves readers their next pages without a store read; acknowledged pages
        # are read by no one again (a reader behind reads them from the store until they are
        # deleted), so they leave the ring at once. Kept to the ring's bound instead, they held
        # every chat message of the last 256 pages: a minute's worth at a hosted model's pace,
        # over 5 MB with 200 sessions chatting (issue 28).
        while self._ring and next(iter(self._ring)) <= through:
            self._ring.popitem(last=False)
        first = await self._trimmed_through() + 1
        if through < first + TRIM_EVERY - 1:
            # A few pages more in the store cost nothing; two writes each second the reader
            # acknowledges did (a delete and the mark), under load and at a hosted model's pace.
            return
        for start in range(first, through + 1, _IN_BATCH):
            ids = [page_id(n) for n in range(start, min(through, start + _IN_BATCH - 1) + 1)]
            await self._pages.delete_many({"_id": {"$in": ids}})
        await self._pages.update_one({"_id": END_ID}, {"$max": {"trimmed": through}}, upsert=True)
        self._trimmed = through

    async def scrub(self, session_id: str) -> None:
        """Removes a deleted session's messages from everything the feed still holds."""
        self._gathered = [m for m in self._gathered if m.get("session_id") != session_id]
        for n, messages in self._ring.items():
            self._ring[n] = [m for m in messages if m.get("session_id") != session_id]
        self._trimmed = None  # another replica may have trimmed further
        first = await self._trimmed_through() + 1
        last = await self.end()
        for start in range(first, last + 1, _IN_BATCH):
            ids = [page_id(n) for n in range(start, min(last, start + _IN_BATCH - 1) + 1)]
            async for doc in self._pages.find({"_id": {"$in": ids}}):
                messages = list(doc.get("m") or [])
                kept = [m for m in messages if m.get("session_id") != session_id]
                if len(kept) != len(messages):
                    await self._pages.update_one({"_id": doc["_id"]}, {"$set": {"m": kept}})

    # ---- reading ----

    async def follow(self, after: int) -> AsyncIterator[FeedPage]:
        """Every page after `after`, in order, then each new page as it is written."""
        position = max(0, after)
        quiet = True  # nothing was written here since the last look: check for trimmed pages
        probing = True  # the last store probe found pages: more may follow them
        while True:
            written = self._written
            if quiet:
                # Pages another reader acknowledged are gone: the index they fed is shared,
                # so this reader goes on after them rather than waiting at the gap.
                self._trimmed = None
                position = max(position, await self._trimmed_through())
            elif self._poll_s is None and self._trimmed is not None:
                # The sole writer trims here too (`trim`): its own note of how far is current.
                position = max(position, self._trimmed)
            # Past this replica's last page only another replica's pages can be in the store,
            # and the poll looks for those (quiet): no store read after each page read here.
            probe = probing or self._last is None or position < self._last
            pages = await self._read(position, probe=probe)
            # The trimmed mark is read once per quiet spell, not with every page after it; the
            # store is probed again only right after a probe that found pages (a backlog).
            quiet = False
            probing = probe and bool(pages) and pages[-1].position not in self._ring
            for page in pages:
                yield page
                position = page.position
            if pages:
                continue
            if self._poll_s is None:
                # The sole writer: only this replica's pages (announced by `written`) and its
                # own trims (`trim` keeps `_trimmed`) change the feed.
                await written.wait()
                continue
            try:
                async with asyncio.timeout(self._poll_s):
                    await written.wait()
            except TimeoutError:
                quiet = probing = True

    async def _read(self, position: int, *, probe: bool = True) -> list[FeedPage]:
        held: list[FeedPage] = []
        n = position + 1
        while n in self._ring:
            held.append(FeedPage(n, self._ring[n]))
            n += 1
        if held or not probe:
            return held
        ids = [page_id(k) for k in range(n, n + _PROBE)]
        docs = {d["_id"]: d async for d in self._pages.find({"_id": {"$in": ids}})}
        out: list[FeedPage] = []
        for k, i in zip(range(n, n + _PROBE), ids, strict=True):
            doc = docs.get(i)
            if doc is None:
                break
            out.append(FeedPage(k, list(doc.get("m") or [])))
        return out
