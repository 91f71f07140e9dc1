"""The first completed question-and-answer pair of each session's chat, seen as the indexer
indexes it: it sets `metadata.first_qa_at_ms` and triggers the metadata auto-suggest
(session_service/search/suggest.py), which runs beside the feed (seconds of a model call).

What the indexer keeps of a chat process (its first question, then its answer) is a document
in `search_cursors` under the process id; it is also held here, bounded, so the pages of a
chat that has asked but not been answered yet cost no read.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import replace

from session_service.domain.models import Session
from session_service.search.index_store import FirstPairCursor, SearchStore
from session_service.search.session_metadata import Metadata
from session_service.search.suggest import Suggester
from session_service.store.session_store import SessionStore
from vance.domain import ChatMessage, ChatRole

logger = logging.getLogger(__name__)

SUGGEST_ATTEMPTS = 3
SUGGEST_TIMEOUT_S = 60.0
# Suggestions that run at once; the rest wait in order. Every session's first pair comes within
# seconds of the others' when many sessions start together (800 clients at realpace800), and a
# suggestion each at once held 800 model calls in session_service (their tasks, connections and
# request bodies: ~14 KiB of Python objects each, tracemalloc), and as many in the model's
# queue. More than a few: 200 sessions started together still have their titles within a few
# model calls' time (with 16 at once, 200 suggestions at realpace200 ran ~20 s, into the
# measured window).
SUGGEST_AT_ONCE = 64
_HELD = 1024
_TRIED = 10_000


class FirstPairs:
    def __init__(
        self,
        *,
        sessions: SessionStore,
        index: SearchStore,
        metadata: Metadata,
        suggester: Suggester | None,
    ) -> None:
        self._sessions = sessions
        self._index = index
        self._metadata = metadata
        self._suggester = suggester
        # chat process -> its cursor
        self._held: OrderedDict[str, FirstPairCursor] = OrderedDict()
        self._suggesting: set[str] = set()  # running or waiting: started no second time
        self._waiting: deque[Session] = deque()  # for one of the runners (SUGGEST_AT_ONCE)
        self._runners = 0
        # session -> (attempts this replica made, whether one of them finished it): a page's
        # session document may have been read before this replica's suggestion ended, and
        # must not start another one.
        self._tried: OrderedDict[str, tuple[int, bool]] = OrderedDict()

    def settled(self, s: Session) -> bool:
        """Nothing left to watch or suggest for this session."""
        md = s.metadata
        return md.first_qa_at_ms is not None and (self._suggester is None or self._over(s))

    def _over(self, s: Session) -> bool:
        """No suggestion is left to make: one finished it, or all attempts are spent (as the
        document says, or as this replica knows if the document was read before)."""
        tried, done = self._tried.get(s.session_id, (0, False))
        md = s.metadata
        return md.suggest_done or done or max(md.suggest_attempts, tried) >= SUGGEST_ATTEMPTS

    async def watch(self, batch: Iterable[tuple[Session, list[ChatMessage]]]) -> None:
        """Looks for the first pair in the chat messages of sessions that have none yet. What
        a page moved is stored in one bulk write per collection, whatever its number of
        sessions: the cursors first, then the sessions' first-pair marks, so a session marked
        has its answer stored for the suggestion."""
        todo = [
            (s, chat)
            for s, msgs in batch
            if s.metadata.first_qa_at_ms is None
            for chat in [[m for m in msgs if m.think_process_id == s.chat_process_id]]
            if chat
        ]
        if not todo:
            return
        unheld = [s.chat_process_id for s, _ in todo if s.chat_process_id not in self._held]
        if unheld:
            for pid, held in (await self._index.cursors_of(unheld)).items():
                self._hold(pid, held)
        moved: dict[str, FirstPairCursor] = {}  # chat process -> its cursor, as it moved
        marks: dict[str, int] = {}  # session -> when its first pair was answered
        for s, chat in todo:
            cursor = self._held.get(s.chat_process_id) or FirstPairCursor()
            found = next_cursor(s, cursor, chat)
            if found is None:
                continue
            moved[s.chat_process_id], answered_at = found
            if answered_at is not None:
                marks[s.session_id] = answered_at
        await self._index.save_cursors(moved)
        for pid, cursor in moved.items():
            self._hold(pid, cursor)
        await self._sessions.mark_first_pairs(marks)
        for s, _ in todo:
            if s.session_id in marks:
                s.metadata.first_qa_at_ms = marks[s.session_id]

    def _hold(self, process_id: str, cursor: FirstPairCursor) -> None:
        self._held[process_id] = cursor
        self._held.move_to_end(process_id)
        while len(self._held) > _HELD:
            self._held.popitem(last=False)

    def forget(self, process_ids: Iterable[str]) -> None:
        """An archived or deleted session's chat processes: their cursors go, and a suggestion
        still waiting for them is not made (the session's page met again starts it anew)."""
        gone = set(process_ids)
        for pid in gone:
            self._held.pop(pid, None)
        dropped = [s for s in self._waiting if s.chat_process_id in gone]
        if dropped:
            self._waiting = deque(s for s in self._waiting if s.chat_process_id not in gone)
            self._suggesting.difference_update(s.session_id for s in dropped)

    async def suggest(self, session: Session, background: asyncio.TaskGroup | None) -> None:
        """Starts the suggestion for a session that has its first pair, beside the feed (in
        `background`, at most SUGGEST_AT_ONCE at a time, the rest in the order they came)
        unless one runs or waits already; without a background group, waits for it."""
        if session.session_id in self._suggesting or not self._due(session):
            return
        if background is None:
            await self.suggest_now(session)
            return
        self._suggesting.add(session.session_id)
        self._waiting.append(session)
        if self._runners < SUGGEST_AT_ONCE:
            self._runners += 1
            background.create_task(self._run_waiting())

    def _due(self, session: Session) -> bool:
        return (
            self._suggester is not None
            and session.metadata.first_qa_at_ms is not None
            and not self._over(session)
        )

    async def _run_waiting(self) -> None:
        """One runner: the waiting suggestions one after the other, until none waits."""
        try:
            while self._waiting:
                session = self._waiting.popleft()
                try:
                    await self.suggest_now(session)
                except Exception:
                    logger.exception("metadata suggestion for %s failed", session.session_id)
                finally:
                    self._suggesting.discard(session.session_id)
        finally:
            self._runners -= 1

    async def suggest_now(self, session: Session) -> None:
        md = session.metadata
        if self._suggester is None or not self._due(session):
            return
        if all(f in md.user_fields or getattr(md, f) for f in ("title", "icon", "color")):
            await self._finished(session.session_id, done=True)
            return  # nothing left to fill: no model call
        # Held since the page that found the answer (watch), unless this replica has not seen
        # that page (a restart, another replica's feed) or has let it go.
        cursor = self._held.get(session.chat_process_id)
        if cursor is None or not cursor.first_answer:
            cursor = await self._index.cursor(session.chat_process_id)
        try:
            async with asyncio.timeout(SUGGEST_TIMEOUT_S):
                suggestion = await self._suggester.suggest(cursor.first_user, cursor.first_answer)
        except (Exception, TimeoutError) as exc:
            logger.warning("metadata suggestion for %s failed: %r", session.session_id, exc)
            await self._finished(session.session_id, done=False)
            return
        await self._metadata.apply_suggestion(session.session_id, suggestion, known=session)
        await self._finished(session.session_id, done=True)
        self._held.pop(session.chat_process_id, None)  # its last reader is done

    async def _finished(self, session_id: str, *, done: bool) -> None:
        await self._sessions.count_suggestion(session_id, done=done)
        tried, was_done = self._tried.pop(session_id, (0, False))
        self._tried[session_id] = (tried + 1, was_done or done)
        while len(self._tried) > _TRIED:
            self._tried.popitem(last=False)


def next_cursor(
    session: Session, cursor: FirstPairCursor, new: Iterable[ChatMessage]
) -> tuple[FirstPairCursor, int | None] | None:
    """The cursor to store when it moved (the first user message, then the answer after it)
    with the answer's time once there is one; None when nothing new was seen.

    An assistant message answers the question when it comes after the question in `new`, or
    was written after it: a page read again after a restart holds Arthur's greeting, written
    before the question, and the greeting must not become the answer."""
    if session.metadata.first_qa_at_ms is not None or cursor.first_answer:
        return None
    asked = cursor if cursor.first_user else None
    after = False  # the question itself was met in `new`
    for m in new:
        if m.role is ChatRole.USER:
            if asked is None:
                asked = FirstPairCursor(m.content[:4000], "", m.id, m.created_at_ms)
            after = after or m.id == asked.first_user_id
        elif m.role is ChatRole.ASSISTANT and asked is not None:
            if after or m.created_at_ms > asked.first_user_at_ms:
                return replace(asked, first_answer=m.content[:4000]), m.created_at_ms
    return (asked, None) if asked is not None and asked != cursor else None
