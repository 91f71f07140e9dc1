"""Feeds the search index from process_service's chat feed (process_service/event_feed.py),
and triggers the metadata auto-suggest when it sees a session's first completed
question-and-answer pair.

The indexer follows the feed from the position it stored, one page at a time: it indexes the
page's messages, session by session, and stores the position it reached about once a second.
After a restart it resumes after the last stored position, so no message is lost; a page
indexed again after a crash changes nothing (message copies are kept by id, posting lists are sets). When
process_service cannot be reached the indexer tries again with a growing pause. Messages of a
session that no longer exists are skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import string
import time
from collections.abc import Iterable
from typing import Any

from session_service.metadata import Metadata
from session_service.models import Session
from session_service.search.cards import ACTIVITY_SLACK_MS
from session_service.search.store import SearchStore, parse_shard
from session_service.search.tokens import tokens
from session_service.store import SessionStore
from session_service.suggest import Suggester
from vance.clients.process import ChatFeedPage, Processes
from vance.clock import Clock
from vance.domain import ChatMessage, ChatRole

logger = logging.getLogger(__name__)

SUGGEST_ATTEMPTS = 3
SUGGEST_TIMEOUT_S = 60.0
MIN_RETRY_S = 0.5
# How often the indexer stores its position and tells process_service (the pages up to there go).
SAVE_EVERY_S = 1.0
MAX_RETRY_S = 10.0
# Sessions of one page indexed at once (each its own reads and compare-and-sets).
PAGE_CONCURRENCY = 4


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
        self._metadata = metadata
        self._processes = processes
        self._suggester = suggester
        self._clock = clock
        self._card_activity: dict[str, int] = {}  # session -> activity its card was given
        # Suggestions wait for a model (seconds): they run beside the feed, not in its way.
        self._background: asyncio.TaskGroup | None = None
        self._suggesting: set[str] = set()

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
        """Indexes page after page. The position is stored (and acknowledged) at most once a
        SAVE_EVERY_S, and when the stream ends: pages indexed again after a crash change
        nothing, so a store write per page would buy nothing."""
        indexed, saved_at = after, time.monotonic()
        try:
            async for page in self._processes.chat_feed(after):
                await self.index_page(page)
                indexed = page.position
                if time.monotonic() - saved_at >= SAVE_EVERY_S:
                    saved_at = time.monotonic()
                    await self._save(indexed)
                    after = indexed
        finally:
            if indexed > after:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._save(indexed))

    async def _save(self, through: int) -> None:
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
        limit = asyncio.Semaphore(PAGE_CONCURRENCY)

        async def one(session_id: str, msgs: list[ChatMessage]) -> None:
            async with limit:
                await self._index_session(session_id, msgs)

        async with asyncio.TaskGroup() as tg:
            for session_id, msgs in by_session.items():
                tg.create_task(one(session_id, msgs))

    async def _index_session(self, session_id: str, msgs: list[ChatMessage]) -> None:
        session = await self._sessions.session(session_id)
        if session is None:
            return
        await self.index_messages(session, msgs)
        if session.metadata.first_qa_at_ms is None:
            chat = [m for m in msgs if m.think_process_id == session.chat_process_id]
            if chat:
                cursor = await self._index.cursor(session.chat_process_id)
                fields = await self._watch_first_pair(session, cursor, chat)
                if fields:
                    await self._index.save_cursor(session.chat_process_id, fields)
        if await self._sessions.sessions.find_one({"_id": session_id}, {"_id": 1}) is None:
            # Deleted while this page indexed it: the delete's purge may have run before.
            await self.purge(session, [m.id for m in msgs])
            return
        if session.session_id in self._suggesting:
            return
        if self._background is None:
            await self._maybe_suggest(session)
            return
        self._suggesting.add(session.session_id)
        self._background.create_task(self._suggest_beside(session))

    async def _suggest_beside(self, session: Session) -> None:
        try:
            await self._maybe_suggest(session)
        except Exception:
            logger.exception("metadata suggestion for %s failed", session.session_id)
        finally:
            self._suggesting.discard(session.session_id)

    async def index_messages(self, session: Session, msgs: list[ChatMessage]) -> None:
        """Message texts, then posting lists for the words new to the session, then the
        session's word list (compare-and-set, retried): a crash in between re-adds postings,
        which is harmless, and never leaves a word listed for the session but not posted."""
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
                for m in msgs
            ]
        )
        sid = session.session_id
        found: dict[str, str] = {}  # word -> first message of this batch holding it
        for m in msgs:
            for word in tokens(m.content):
                found.setdefault(word, m.id)
        for _ in range(5):
            shards = await self._index.word_shards(self._index.shard_id(sid, w) for w in found)
            known = {w for d in shards.values() for w in parse_shard(d)}
            added = {w: mid for w, mid in found.items() if w not in known}
            await self._index.add_conversation(session.tenant_id, sid, list(added))
            changes: dict[str, list[str]] = {}
            for w, mid in added.items():
                changes.setdefault(self._index.shard_id(sid, w), []).append(f"{w}\t{mid}\n")
            created = [shard for shard in changes if shard not in shards]
            if created:
                await self._index.note_letters(sid, (c[len(sid) + 1 :] for c in created))
            writes = [
                (shard, shards[shard].get("v") if shard in shards else None, text)
                for shard, lines in changes.items()
                for text in [str(shards.get(shard, {}).get("p", "")) + "".join(lines)]
            ]
            if await self._index.save_word_shards(writes):
                break
        await self._refresh_card(session)

    async def _refresh_card(self, session: Session) -> None:
        """New messages usually come with activity (the gateway's heartbeats set
        `last_activity_at_ms`; session_service/binding.py owns it): bring the card's ranking
        hint up to date when it is off by the slack or more."""
        hinted = self._card_activity.get(session.session_id, session.created_at_ms)
        if session.last_activity_at_ms - hinted >= ACTIVITY_SLACK_MS:
            await self._sessions.cards.put(session, self._clock.now_ms())
            if len(self._card_activity) > 10_000:
                self._card_activity.clear()  # a bound; forgetting only costs a card write
            self._card_activity[session.session_id] = session.last_activity_at_ms

    async def purge(self, session: Session, message_ids: list[str] | None = None) -> None:
        """Removes everything the index holds of a session: its entries in the posting lists
        and words only it had, the indexed message copies, word lists and chat-process
        documents (a hard delete). Called while process_service still lists the
        session's processes and their chat, or by the indexer with the messages it has just
        indexed for a session deleted meanwhile."""
        sid = session.session_id
        engines = await self._processes.engines(sid, include_terminated=True)
        process_ids = [p.id for p in engines]
        ids = set(message_ids or [])
        for pid in process_ids:
            ids |= {m.id for m in await self._processes.chat(sid, pid)}
        copies = await self._index.messages_by_ids(sorted(ids))
        # Word lists are per first letter: the letters listed for the session, and those of the
        # copies' words and every ASCII one for sessions indexed before letters were listed.
        letters = await self._index.letters(sid)
        letters |= {w[0] for m in copies.values() for w in tokens(str(m.get("x", "")))}
        letters |= set(string.ascii_lowercase + string.digits + "_")
        shard_ids = sorted(self._index.shard_id(sid, c) for c in letters)
        shards = await self._index.word_shards(shard_ids)
        md = session.metadata
        words = {w for d in shards.values() for w in parse_shard(d)}
        words |= set(tokens(md.title or "")) | {w for t in md.tags for w in tokens(t)}
        await self._index.remove_session(
            session.tenant_id, sid, words=words, exact_tags=set(md.tags)
        )
        await self._index.forget(
            sid,
            message_ids=list(copies),
            shard_ids=[*shard_ids, self._index.letters_id(sid)],
            process_ids=process_ids,
        )

    async def _watch_first_pair(
        self, session: Session, cursor: dict[str, Any], new: Iterable[ChatMessage]
    ) -> dict[str, Any]:
        """Remembers the first user message and the answer after it (cursor fields)."""
        if session.metadata.first_qa_at_ms is not None or cursor.get("first_answer"):
            return {}
        question = str(cursor.get("first_user") or "")
        for m in new:
            if m.role is ChatRole.USER and not question:
                question = m.content[:4000]
            elif m.role is ChatRole.ASSISTANT and question:
                await self._sessions.sessions.update_one(
                    {"_id": session.session_id, "metadata.first_qa_at_ms": None},
                    {"$set": {"metadata.first_qa_at_ms": m.created_at_ms}},
                )
                session.metadata.first_qa_at_ms = m.created_at_ms
                return {"first_user": question, "first_answer": m.content[:4000]}
        return {"first_user": question} if question else {}

    async def _maybe_suggest(self, session: Session) -> None:
        md = session.metadata
        if (
            self._suggester is None
            or md.first_qa_at_ms is None
            or md.suggest_done
            or md.suggest_attempts >= SUGGEST_ATTEMPTS
        ):
            return
        if all(f in md.user_fields or getattr(md, f) for f in ("title", "icon", "color")):
            await self._suggest_finished(session.session_id, done=True)
            return  # nothing left to fill: no model call
        cursor = await self._index.cursor(session.chat_process_id)
        try:
            async with asyncio.timeout(SUGGEST_TIMEOUT_S):
                suggestion = await self._suggester.suggest(
                    str(cursor.get("first_user", "")), str(cursor.get("first_answer", ""))
                )
        except (Exception, TimeoutError) as exc:
            logger.warning("metadata suggestion for %s failed: %r", session.session_id, exc)
            await self._suggest_finished(session.session_id, done=False)
            return
        await self._metadata.apply_suggestion(session.session_id, suggestion)
        await self._suggest_finished(session.session_id, done=True)

    async def _suggest_finished(self, session_id: str, *, done: bool) -> None:
        await self._sessions.sessions.update_one(
            {"_id": session_id},
            {"$set": {"metadata.suggest_done": done}, "$inc": {"metadata.suggest_attempts": 1}},
        )
