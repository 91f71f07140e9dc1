"""Feeds the search index from process_service's chat feed (process_service/events/chat_feed.py),
and hands each session's first question-and-answer pair to the metadata auto-suggest
(first_pair.py).

The indexer follows the feed from the position it stored and stores the position it reached
about once a second. After a restart it resumes after the last stored position, so no message
is lost; a page indexed again after a crash changes nothing (message copies are kept by id,
posting lists are sets). When process_service cannot be reached the indexer tries again with a
growing pause. Pages that arrived while the indexer was busy are indexed together.

A page costs the store two writes, whatever its number of messages and sessions: the message
copies, and the posting lists of the words new to their sessions. It reads nothing for a
session this replica knows: which words a session has is remembered (words.py KnownWords), and
so is the tenant of a session with nothing left to watch for its first pair (`_settled`: its
tenant never changes); a session not settled yet is read before its page. Card activity is
read again only when a session's messages are a minute newer than its last check.

A session hard-deleted while a page with its messages was on its way (its purge ran before the
page was indexed) is found in the store's list of recent deletes, read once a second before the
position is stored, and purged again; its later messages are skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import string
import time
from typing import TypeVar

from session_service.domain.models import Session
from session_service.search.first_pair import FirstPairs
from session_service.search.index_store import SearchStore, deleted_key
from session_service.search.session_metadata import Metadata
from session_service.search.suggest import Suggester
from session_service.search.tokens import tokens
from session_service.search.words import KnownWords, parse_shard
from session_service.store.raw import Bson
from session_service.store.session_cards import ACTIVITY_SLACK_MS
from session_service.store.session_store import SessionStore
from vance.clients.process import ChatFeedPage, Processes
from vance.clock import Clock
from vance.domain import ChatMessage

logger = logging.getLogger(__name__)

MIN_RETRY_S = 0.5
# How often the indexer stores its position and tells process_service (the pages up to there
# go), after looking for deletes among the sessions indexed since the last time.
SAVE_EVERY_S = 1.0
MAX_RETRY_S = 10.0
_REMEMBERED = 50_000  # settled sessions and card hints held, each a few dozen bytes
_QUEUED_PAGES = 64  # pages read ahead of the indexing (at most PAGE_MESSAGES each)
_BATCH_MESSAGES = 2_000  # queued pages indexed together up to about this many messages
_NEVER = -(2**62)

V = TypeVar("V")


class SearchIndexer:
    def __init__(
        self,
        *,
        sessions: SessionStore,
        index: SearchStore,
        metadata: Metadata,
        processes: Processes,
        suggester: Suggester | None,
        clock: Clock,
    ) -> None:
        self._sessions = sessions
        self._index = index
        self._processes = processes
        self._clock = clock
        self._pairs = FirstPairs(
            sessions=sessions, index=index, metadata=metadata, suggester=suggester
        )
        self._known = KnownWords()
        self._settled: dict[str, str] = {}  # session -> tenant, nothing to watch any more
        self._card_activity: dict[str, int] = {}  # session -> activity its card was given
        self._card_checked: dict[str, int] = {}  # session -> its newest message when read
        # Sessions indexed since deletes were last looked for: tenant and message ids.
        self._indexed: dict[str, tuple[str, list[str]]] = {}
        self._gone: set[str] = set()  # hard-deleted sessions' keys, as last read
        # Suggestions wait for a model (seconds): they run beside the feed, not in its way.
        self._background: asyncio.TaskGroup | None = None

    async def run(self) -> None:
        """Until cancelled: follows the chat feed from the stored position."""
        async with asyncio.TaskGroup() as tg:
            self._background = tg
            try:
                await self._follow()
            finally:
                self._background = None

    async def _follow(self) -> None:
        pause = MIN_RETRY_S
        while True:
            try:
                await self._follow_from(await self._index.feed_position())
            except Exception as exc:
                # process_service restarting, a store hiccup: resume from the stored position.
                logger.warning("following the chat feed failed (%r); retrying in %.1fs", exc, pause)
            await asyncio.sleep(pause)
            pause = min(2 * pause, MAX_RETRY_S)

    async def _follow_from(self, after: int) -> None:
        """Reads the feed into a queue beside the indexing, so that pages arriving while a
        page is indexed are indexed together."""
        pages: asyncio.Queue[ChatFeedPage | None] = asyncio.Queue(_QUEUED_PAGES)
        async with asyncio.TaskGroup() as tg:
            reader = tg.create_task(self._read(after, pages))
            try:
                await self._index_from(after, pages)
            finally:
                reader.cancel()

    async def _read(self, after: int, pages: asyncio.Queue[ChatFeedPage | None]) -> None:
        async for page in self._processes.chat_feed(after):
            await pages.put(page)
        await pages.put(None)  # the stream ended

    async def _index_from(self, after: int, pages: asyncio.Queue[ChatFeedPage | None]) -> None:
        """Indexes what the queue brings. The position is stored (and acknowledged) at most
        once a SAVE_EVERY_S, and when the stream ends: pages indexed again after a crash
        change nothing, so a store write per page would buy nothing."""
        indexed, saved_at = after, time.monotonic()
        try:
            while True:
                try:
                    first = await asyncio.wait_for(pages.get(), SAVE_EVERY_S)
                except TimeoutError:
                    first = ChatFeedPage(position=indexed, messages=[])
                if first is None:
                    return
                batch = [first]
                while sum(len(p.messages) for p in batch) < _BATCH_MESSAGES:
                    try:
                        more = pages.get_nowait()
                    except asyncio.QueueEmpty:
                        break
                    if more is None:
                        pages.put_nowait(None)  # ends the stream after this batch
                        break
                    batch.append(more)
                if any(p.messages for p in batch):
                    await self.index_page(
                        ChatFeedPage(
                            position=batch[-1].position,
                            messages=[m for p in batch for m in p.messages],
                        )
                    )
                indexed = batch[-1].position
                if time.monotonic() - saved_at >= SAVE_EVERY_S:
                    saved_at = time.monotonic()
                    await self._save(indexed, after)
                    after = indexed
        finally:
            if indexed > after or self._indexed:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._save(indexed, after))

    async def _save(self, through: int, saved: int) -> None:
        """Purges what was indexed of sessions deleted meanwhile, then stores the position:
        a crash before it re-indexes those pages, and looks again."""
        await self.sweep_deleted()
        if through > saved:
            await self._index.save_feed_position(through)
            await self._ack(through)

    async def _ack(self, through: int) -> None:
        """Lets process_service delete the pages indexed so far; a lost ack only keeps them a
        little longer (the next one covers them)."""
        try:
            await self._processes.ack_chat_feed(through)
        except Exception as exc:
            logger.warning("acknowledging the chat feed up to %d failed: %r", through, exc)

    async def index_page(self, page: ChatFeedPage) -> None:
        by_session: dict[str, list[ChatMessage]] = {}
        for m in page.messages:
            by_session.setdefault(m.session_id, []).append(m)
        if self._gone:
            by_session = {
                sid: msgs for sid, msgs in by_session.items() if deleted_key(sid) not in self._gone
            }
        unsettled = [sid for sid in by_session if sid not in self._settled]
        read = {s.session_id: s for s in await self._sessions.sessions_by_ids(unsettled)}
        tenants = {sid: t for sid in by_session if (t := self._settled.get(sid))}
        tenants |= {sid: s.tenant_id for sid, s in read.items()}
        todo = {sid: msgs for sid, msgs in by_session.items() if sid in tenants}
        if not todo:
            return
        await self.index_messages(tenants, todo)
        for sid, msgs in todo.items():
            self._indexed.setdefault(sid, (tenants[sid], []))[1].extend(m.id for m in msgs)
        await self._pairs.watch((read[sid], msgs) for sid, msgs in todo.items() if sid in read)
        await self._refresh_cards(todo, read)
        for s in read.values():
            if self._pairs.settled(s):
                _remember(self._settled, s.session_id, s.tenant_id)
            else:
                await self._pairs.suggest(s, self._background)

    async def index_messages(
        self, tenants: dict[str, str], by_session: dict[str, list[ChatMessage]]
    ) -> None:
        """Message texts, then the posting lists of the words new to each session: a posting
        names a message whose copy is stored, and a hard delete finds every word posted for a
        session in its copies (`purge`)."""
        await self._index.save_messages(
            [
                {
                    "_id": m.id,
                    "s": m.session_id,
                    "p": m.process_name,
                    "r": m.role.value.lower(),
                    "x": m.content,
                    "at": m.created_at_ms,
                }
                for msgs in by_session.values()
                for m in msgs
            ]
        )
        found: dict[str, dict[str, str]] = {}  # session -> word -> first message holding it
        for sid, msgs in by_session.items():
            words = found.setdefault(sid, {})
            for m in msgs:
                for word in tokens(m.content):
                    words.setdefault(word, m.id)
        new = self._known.new_words(found)
        if not new:
            return
        postings: dict[str, dict[str, list[str]]] = {}
        for sid, words in new.items():
            per_word = postings.setdefault(tenants[sid], {})
            for w, mid in words.items():
                per_word.setdefault(w, []).append(f"{sid}/{mid}")
        await self._index.add_conversation(postings)
        self._known.learn(new)

    async def _refresh_cards(
        self, todo: dict[str, list[ChatMessage]], read: dict[str, Session]
    ) -> None:
        """New messages usually come with activity (the gateway's heartbeats set
        `last_activity_at_ms`; session_service/lifecycle/connection_binding.py owns it): bring a
        card's ranking hint up to date when it is off by the slack or more. A session is read
        for it (unless the page read it anyway) when its newest message is ACTIVITY_SLACK_MS
        past its last check: the first time this replica meets it, then about once a minute
        of chat."""
        newest = {sid: max(m.created_at_ms for m in msgs) for sid, msgs in todo.items()}
        due = [
            sid
            for sid, at in newest.items()
            if at - self._card_checked.get(sid, _NEVER) >= ACTIVITY_SLACK_MS
        ]
        if not due:
            return
        unread = [sid for sid in due if sid not in read]
        docs = [read[sid] for sid in due if sid in read]
        docs += await self._sessions.sessions_by_ids(unread) if unread else []
        stale = [
            s
            for s in docs
            if s.last_activity_at_ms - self._card_activity.get(s.session_id, s.created_at_ms)
            >= ACTIVITY_SLACK_MS
        ]
        if stale:
            await self._sessions.cards.put_many(((s, "") for s in stale), self._clock.now_ms())
        for s in stale:
            _remember(self._card_activity, s.session_id, s.last_activity_at_ms)
        for sid in due:
            _remember(self._card_checked, sid, newest[sid])

    async def sweep_deleted(self) -> None:
        """Purges again what was indexed of sessions hard-deleted meanwhile (their delete's
        purge may have run before these pages were indexed), and skips their later messages."""
        if not self._indexed:
            return
        self._gone = await self._index.deleted_sessions()
        for sid in [sid for sid in self._indexed if deleted_key(sid) in self._gone]:
            tenant, message_ids = self._indexed[sid]
            await self.purge(_stub(sid, tenant), message_ids)
        self._indexed.clear()

    async def deleted(self, session: Session) -> None:
        """A hard delete: the session is listed as deleted for every replica's indexer first,
        then purged."""
        self._gone.add(deleted_key(session.session_id))
        await self._index.note_deleted(session.session_id)
        await self.purge(session)

    def forget_session(self, session: Session) -> None:
        """An archived session's chat is over: what this replica remembers of it goes (its
        known words, settled mark, card activity, first-pair cursor). Should it be reactivated,
        each is read again once."""
        self._forget(session.session_id)
        self._pairs.forget([session.chat_process_id])

    def _forget(self, sid: str) -> None:
        """What this replica remembers of a session's indexing (archive and hard delete)."""
        self._known.forget(sid)
        self._settled.pop(sid, None)
        self._card_activity.pop(sid, None)
        self._card_checked.pop(sid, None)

    async def purge(self, session: Session, message_ids: list[str] | None = None) -> None:
        """Removes everything the index holds of a session: its entries in the posting lists
        and words only it had, the indexed message copies, word lists and chat-process
        documents (a hard delete). Called while process_service still lists the
        session's processes and their chat, or by the indexer with the messages it has just
        indexed for a session deleted meanwhile."""
        sid = session.session_id
        self._forget(sid)
        engines = await self._processes.engines(sid, include_terminated=True)
        process_ids = [p.id for p in engines]
        self._pairs.forget(process_ids)
        ids = set(message_ids or [])
        for pid in process_ids:
            ids |= {m.id for m in await self._processes.chat(sid, pid)}
        copies = await self._index.messages_by_ids(sorted(ids))
        # Every word posted for the session is in a copy (its text, or `w` for the rest of a
        # long message); sessions indexed before copies were the source also have word lists,
        # per first letter: those listed for the session, those of the copies' words and every
        # ASCII one for sessions indexed before letters were listed.
        words = {w for m in copies.values() for w in _copy_words(m)}
        letters = await self._index.words.letters(sid)
        letters |= {w[0] for w in words}
        letters |= set(string.ascii_lowercase + string.digits + "_")
        shards = await self._index.words.shards(self._index.words.shard_id(sid, c) for c in letters)
        md = session.metadata
        words |= {w for d in shards.values() for w in parse_shard(d)}
        words |= set(tokens(md.title or "")) | {w for t in md.tags for w in tokens(t)}
        await self._index.remove_session(
            session.tenant_id, sid, words=words, exact_tags=set(md.tags)
        )
        await self._index.forget(
            sid, message_ids=list(copies), letters=letters, process_ids=process_ids
        )


def _remember(held: dict[str, V], key: str, value: V) -> None:
    if len(held) > _REMEMBERED:
        held.clear()  # a bound; forgetting only costs a read or a card write
    held[key] = value


def _copy_words(copy: Bson) -> list[str]:
    """The words a message copy was indexed by (index_store.py `save_messages`)."""
    return [*tokens(str(copy.get("x", ""))), *str(copy.get("w", "")).split()]


def _stub(session_id: str, tenant: str) -> Session:
    """A session known only by id and tenant (settled, and gone by the time it was re-read):
    enough to purge what this page indexed of it."""
    return Session(session_id=session_id, tenant_id=tenant, project_id="", owner_user_id="")
