"""Session documents a search page read, held per replica for a few seconds, so the next
searches (type-ahead sends one per keystroke, with much the same page) need not read them again:
a session document costs FerretDB ~0.45 ms of CPU (it decodes every field), and a page is 20 of
them, most of a query's store time.

A held document is only reused while the session's card, which every search reads fresh
(store/session_cards.py), vouches for it: its newest line must be older than the read (with
STAMP_SLACK_MS for clocks of other machines) and agree with the document on status, pinned, activity and project.
Every write that changes what a search decides on or shows in a hit's ranking appends a card
line: creation, title, tags and pinned (search/session_metadata.py), RUNNING/IDLE
(lifecycle/engine_rollup.py), close
(lifecycle/transitions.py, lifecycle/batch_transitions.py), archive and reactivate
(search/search_wiring.py), and a delete removes the
lines. So a session closed, archived, renamed, retagged or deleted on any replica is read again
on the next search. What no card line follows (the bind, engine activity, lifecycle settings,
IDLE/SUSPENDED by the sweeps) may show up to HELD_MS late in a hit; a search filtering on
statuses reads the documents (query.py), so that a status filter never relies on a held one.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable

from session_service.domain.models import Session
from session_service.store.session_cards import Card

HELD_MS = 3_000
STAMP_SLACK_MS = 2_000
HELD_SESSIONS = 2_000  # a few MB


class HeldSessions:
    def __init__(
        self,
        *,
        held_ms: int = HELD_MS,
        slack_ms: int = STAMP_SLACK_MS,
        most: int = HELD_SESSIONS,
    ) -> None:
        self._held: OrderedDict[str, tuple[float, int, Session]] = OrderedDict()
        self._held_s = held_ms / 1000
        self._slack_ms = slack_ms
        self._most = most

    def get(self, card: Card) -> Session | None:
        """The held document of the card's session, if it is recent and the card vouches
        for it; otherwise None (and it is dropped)."""
        entry = self._held.get(card.session_id)
        if entry is None:
            return None
        at, read_ms, s = entry
        if (
            time.monotonic() - at < self._held_s
            and card.stamp < read_ms - self._slack_ms
            and card.project_id == s.project_id
            and card.owner == s.owner_user_id
            and card.matches(s)
        ):
            return s
        del self._held[card.session_id]
        return None

    def put(self, sessions: Iterable[Session], read_ms: int) -> None:
        """Documents read by a read that started at `read_ms` (the cards' clock)."""
        at = time.monotonic()
        for s in sessions:
            self._held[s.session_id] = (at, read_ms, s)
            self._held.move_to_end(s.session_id)
        while len(self._held) > self._most:
            self._held.popitem(last=False)

    def drop(self, session_ids: Iterable[str]) -> None:
        for sid in session_ids:
            self._held.pop(sid, None)
