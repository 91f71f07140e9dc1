"""Feeds the search index from the sessions' chat messages, and triggers the metadata
auto-suggest when it sees a session's first completed question-and-answer pair.

How session_service learns of new messages: the gateway reports user activity on a session
(`NoteSessionActivity`, after each steer); the session becomes *dirty*. Marks are gathered in
memory and written once per feed tick, in one bulk write for all sessions marked meanwhile: a
write per steer cost a store command per turn and, running beside the turn's own lane take,
held it up in the store's write queue. A mark is a hint, as the note itself is: one lost
in a crash delays indexing until the session's next steer. A background loop reads
the dirty sessions' processes from process_service and, for each process whose `updated_at_ms`
moved (every turn commit moves it), the chat messages past the process's cursor
(`ListChatMessages`, newest first, widening until the cursor is covered). A session stays dirty,
polled with backoff, until all its processes are quiet (nothing running, nothing pending), so
answers that arrive after the client left, and work of child processes, are indexed too.
"""

from __future__ import annotations

import asyncio
import logging
import string
from collections.abc import Iterable
from typing import Any

from session_service.cards import ACTIVITY_SLACK_MS
from session_service.metadata import Metadata
from session_service.models import Session
from session_service.search_store import SearchStore, parse_shard
from session_service.store import SessionStore
from session_service.suggest import Suggester
from session_service.tokens import tokens
from vance.clients.process import Processes
from vance.clock import Clock
from vance.domain import ChatMessage, ChatRole, ProcessStatus, ThinkProcess

logger = logging.getLogger(__name__)

MAX_BACKOFF_MS = 5_000
INDEX_DELAY_MS = 1_000
MIN_BACKOFF_MS = 500
# A session whose processes stay busy this long without a new message is dropped from the
# dirty set; the next steer brings it back.
MAX_WATCH_MS = 30 * 60_000
SUGGEST_ATTEMPTS = 3
SUGGEST_TIMEOUT_S = 60.0
_FIRST_LIMIT = 32
_QUIET = {ProcessStatus.IDLE, ProcessStatus.BLOCKED, ProcessStatus.CLOSED}
_PARKED = {ProcessStatus.PAUSED, ProcessStatus.SUSPENDED}


def message_number(message_id: str) -> int:
    """Chat message ids are `<process>:<n:08d>` (process_service/store.py)."""
    return int(message_id.rsplit(":", 1)[1])


def is_quiet(p: ThinkProcess) -> bool:
    """Nothing will append to this process's chat without a new steer."""
    return p.status in _PARKED or (p.status in _QUIET and p.pending_count == 0)


class SearchFeed:
    def __init__(
        self,
        *,
        sessions: SessionStore,
        index: SearchStore,
        metadata: Metadata,
        processes: Processes,
        suggester: Suggester | None,
        clock: Clock,
        tick_s: float = 0.2,
        concurrency: int = 4,
    ) -> None:
        self._sessions = sessions
        self._index = index
        self._metadata = metadata
        self._processes = processes
        self._suggester = suggester
        self._clock = clock
        self._tick_s = tick_s
        self._concurrency = concurrency
        self._inflight: set[str] = set()
        self._marks: dict[str, tuple[str, int]] = {}  # session -> (tenant, marked at), unwritten
        self._card_activity: dict[str, int] = {}  # session -> activity its card was given

    def mark(self, tenant: str, session_id: str) -> None:
        """Noted now, written with the next tick's marks (the earliest time kept)."""
        self._marks.setdefault(session_id, (tenant, self._clock.now_ms()))

    def forget(self, session_id: str) -> None:
        """A deleted session's unwritten mark must not bring back a dirty document."""
        self._marks.pop(session_id, None)

    async def flush_marks(self) -> None:
        if not self._marks:
            return
        marks, self._marks = self._marks, {}
        # Due a little later: the steer that made the session dirty has just started its turn,
        # and a pass now would find it running and only reschedule (measured: 2-4 passes per
        # turn under load). Search results lag a turn's end by about a second.
        await self._index.mark_dirty_many(
            [(tenant, sid, at, at + INDEX_DELAY_MS) for sid, (tenant, at) in marks.items()]
        )

    async def run(self) -> None:
        """Until cancelled: writes the gathered marks and feeds due dirty sessions, at most
        `concurrency` at a time; a last write of the marks when cancelled."""
        try:
            await self._loop()
        finally:
            try:
                await self.flush_marks()
            except Exception:
                logger.exception("writing the last activity marks failed")

    async def _loop(self) -> None:
        async with asyncio.TaskGroup() as tg:
            while True:
                try:
                    await self.flush_marks()
                except Exception:
                    logger.exception("writing activity marks failed")
                try:
                    dirty = await self._index.dirty_sessions()
                except Exception:
                    logger.exception("reading the dirty sessions failed")
                    dirty = []
                now = self._clock.now_ms()
                for doc in sorted(dirty, key=lambda d: int(d.get("due_ms", 0))):
                    sid = str(doc["_id"])
                    if len(self._inflight) >= self._concurrency:
                        break
                    if sid in self._inflight or int(doc.get("due_ms", 0)) > now:
                        continue
                    self._inflight.add(sid)
                    tg.create_task(self._feed_guarded(doc))
                await asyncio.sleep(self._tick_s)

    async def _feed_guarded(self, doc: dict[str, Any]) -> None:
        sid = str(doc["_id"])
        try:
            await self.feed(doc)
        except Exception as exc:
            # process_service restarting, a store hiccup: try again after a pause.
            logger.warning("indexing session %s failed: %r", sid, exc)
            await self._index.reschedule(sid, self._clock.now_ms() + MAX_BACKOFF_MS, MAX_BACKOFF_MS)
        finally:
            self._inflight.discard(sid)

    async def feed(self, dirty: dict[str, Any]) -> None:
        """One pass over one dirty session."""
        sid = str(dirty["_id"])
        version = int(dirty.get("v", 0))
        session = await self._sessions.session(sid)
        if session is None:
            await self._index.clear_dirty(sid, version)
            return
        procs = await self._processes.engines(sid, include_terminated=True)
        progressed = False
        for p in procs:
            if p.status is ProcessStatus.RUNNING:
                continue  # its messages are indexed after the turn commits
            cursor = await self._index.cursor(p.id)
            if cursor.get("updated_at_ms") == p.updated_at_ms:
                continue
            after = int(cursor.get("n", 0))
            new = await self._new_messages(p, after)
            fields: dict[str, Any] = {"updated_at_ms": p.updated_at_ms}
            if new:
                progressed = True
                await self.index_messages(session, new)
                fields["n"] = max(after, *(message_number(m.id) for m in new))
                if p.id == session.chat_process_id:
                    fields |= await self._watch_first_pair(session, cursor, new)
            await self._index.save_cursor(p.id, fields)
        if progressed and await self._sessions.session(sid) is None:
            # Deleted while this pass indexed it: the delete's purge may have run before.
            await self.purge(session, [p.id for p in procs])
            return
        await self._maybe_suggest(session)
        now = self._clock.now_ms()
        if all(is_quiet(p) for p in procs):
            await self._index.clear_dirty(sid, version)
        elif progressed:
            await self._index.reschedule(sid, now, 0, watched_ms=now)
        elif now - int(dirty.get("watched_ms", now)) > MAX_WATCH_MS:
            logger.info("session %s busy for long without new messages; not watched", sid)
            await self._index.clear_dirty(sid, version)
        else:
            backoff = min(max(2 * int(dirty.get("backoff_ms", 0)), MIN_BACKOFF_MS), MAX_BACKOFF_MS)
            await self._index.reschedule(sid, now + backoff, backoff)

    async def _new_messages(self, p: ThinkProcess, after: int) -> list[ChatMessage]:
        """Messages numbered past `after`: the newest few, widened until they reach it."""
        limit = _FIRST_LIMIT
        while True:
            msgs = await self._processes.chat(p.session_id, p.id, limit=limit)
            reached = not msgs or message_number(msgs[0].id) <= after + 1
            if reached or limit == 0:
                return [m for m in msgs if message_number(m.id) > after]
            limit = 0 if limit >= 2048 else limit * 4

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

    async def purge(self, session: Session, process_ids: list[str] | None = None) -> None:
        """Removes everything the index holds of a session: its entries in the posting lists
        and words only it had, the indexed message copies, word lists, cursors and dirty mark
        (a hard delete, seed 002 §11.4). Called while process_service still lists the
        session's processes, or by a feed pass that finds its session deleted meanwhile."""
        sid = session.session_id
        self.forget(sid)
        if process_ids is None:
            engines = await self._processes.engines(sid, include_terminated=True)
            process_ids = [p.id for p in engines]
        cursors = {p: await self._index.cursor(p) for p in process_ids}
        ids = [f"{p}:{n:08d}" for p, c in cursors.items() for n in range(1, int(c["n"]) + 1)]
        copies = await self._index.messages_by_ids(ids)
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
