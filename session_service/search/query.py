"""Listing and searching sessions, scoped to the caller, filtered and ranked.

A search runs its stages (stage.py; today the full-text one, fulltext.py) beside the read of
the session cards in the caller's scope (store/session_cards.py), ranks the candidates by the
most each may score, then reads the session documents of the best ones a page at a time, beside where their
snippets are, until the page is full and no candidate left may outrank it. Every session
returned has passed the filter on its own document. A query without words lists instead.

Who sees what: a tenant admin any session of the tenant, in every project (the cross-project
search); anyone else their own sessions, in every project unless the filter names one.
Another user's hub sessions stay out of an admin's lists (session_service/hub/home.py). CLOSED
sessions are never listed or found, whatever the filter.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from session_service.access.actor import Actor
from session_service.domain.models import Session, SessionStatus
from session_service.search.fulltext import FullTextStage
from session_service.search.held import HeldSessions
from session_service.search.index_store import SearchStore
from session_service.search.stage import MessageSnippet, SearchStage, StageFindings
from session_service.store.session_cards import Card
from session_service.store.session_store import SessionStore
from vance.clock import Clock
from vance.errors import InvalidArgumentError, PermissionDeniedError

__all__ = ["MessageSnippet", "SearchResult", "SessionFilter", "SessionHit", "SessionSearch"]

MAX_LIMIT = 200
VISIBLE = frozenset(
    {SessionStatus.INIT, SessionStatus.RUNNING, SessionStatus.IDLE, SessionStatus.SUSPENDED}
)


@dataclass(frozen=True)
class SessionFilter:
    project_id: str = ""
    owner_user_id: str = ""
    statuses: tuple[SessionStatus, ...] = ()  # empty: RUNNING/IDLE/SUSPENDED (+ARCHIVED if asked)
    tags: tuple[str, ...] = ()  # all of them
    include_archived: bool = False

    def admits(self, s: Session) -> bool:
        if s.status is SessionStatus.CLOSED:
            return False  # a closed session is over: never listed, whatever was asked
        if self.statuses:
            if s.status not in self.statuses:
                return False
        elif s.status not in VISIBLE and not (
            self.include_archived and s.status is SessionStatus.ARCHIVED
        ):
            return False
        return (
            (not self.project_id or s.project_id == self.project_id)
            and (not self.owner_user_id or s.owner_user_id == self.owner_user_id)
            and all(t in s.metadata.tags for t in self.tags)
        )


@dataclass
class SessionHit:
    session: Session
    score: int = 0
    matched: list[str] = field(default_factory=list)  # "title", "tags", "conversation"
    snippets: list[MessageSnippet] = field(default_factory=list)


@dataclass
class SearchResult:
    hits: list[SessionHit]


def default_order(s: Session) -> tuple[bool, int]:
    """Pinned first, then by last activity."""
    return (s.metadata.pinned, s.last_activity_at_ms)


def _hit_order(h: SessionHit) -> tuple[int, bool, int]:
    return (h.score, *default_order(h.session))


class SessionSearch:
    def __init__(
        self,
        sessions: SessionStore,
        index: SearchStore,
        clock: Clock,
        *,
        stages: Sequence[SearchStage] | None = None,
        held: HeldSessions | None = None,
    ) -> None:
        self._sessions = sessions
        self._cards = sessions.cards
        self._index = index
        self._clock = clock
        self._stages: tuple[SearchStage, ...] = tuple(stages or (FullTextStage(index),))
        self._held = held or HeldSessions()

    def _visible(self, actor: Actor, f: SessionFilter) -> SessionFilter:
        """The filter with the caller's scope: a user who is not an admin sees their own."""
        if actor.sees_all:
            return f
        if f.owner_user_id and f.owner_user_id != actor.user_id:
            raise PermissionDeniedError(
                "only a tenant admin sees other users' sessions", reason="owner_filter_denied"
            )
        return replace(f, owner_user_id=actor.user_id)

    async def _cards_in_scope(
        self, tenant: str, f: SessionFilter, viewer: str = ""
    ) -> dict[str, Card]:
        """Cards that may pass the filter. Only ARCHIVED, CLOSED and gone sessions are
        left out here (their cards are rewritten at those transitions); everything else is
        checked against the session documents of the page."""
        tagged = [await self._index.tagged(tenant, t) for t in f.tags]
        cards = (
            await self._cards.of_owner(tenant, f.owner_user_id)
            if f.owner_user_id
            else await self._cards.of_tenant(tenant)
        )
        gone = {"CLOSED"}
        if not (f.include_archived or SessionStatus.ARCHIVED in f.statuses):
            gone.add("ARCHIVED")
        # An admin's search checks a thousand cards or more: a plain loop, no per-card strings.
        out: dict[str, Card] = {}
        for sid, c in cards.items():
            if (
                c.status in gone
                or (f.project_id and c.project_id != f.project_id)
                or (tagged and not all(sid in ids for ids in tagged))
            ):
                continue
            # Another user's hub sessions stay out of an admin's lists
            # (session_service/hub/home.py).
            if (
                viewer
                and c.owner != viewer
                and c.project_id.startswith("_user_")
                and c.project_id[6:] == c.owner
            ):
                continue
            out[sid] = c
        return out

    async def list_sessions(
        self, tenant: str, actor: Actor, f: SessionFilter, *, limit: int = 0
    ) -> list[Session]:
        """Sessions in the default order: pinned first, then by last activity."""
        f = self._visible(actor, f)
        return await self._list(
            tenant, f, await self._cards_in_scope(tenant, f, actor.user_id), limit
        )

    async def _list(
        self, tenant: str, f: SessionFilter, cards: dict[str, Card], limit: int
    ) -> list[Session]:
        ranked = sorted(
            cards.values(), key=lambda c: (c.pinned, c.last_activity_at_ms), reverse=True
        )
        found = await self._page(
            tenant, f, [c.session_id for c in ranked], cards, limit or len(ranked)
        )
        found.sort(key=default_order, reverse=True)
        return found

    async def search(
        self, tenant: str, actor: Actor, query: str, f: SessionFilter, *, limit: int = 20
    ) -> SearchResult:
        if limit < 0 or limit > MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be 0..{MAX_LIMIT}", reason="bad_limit")
        limit = limit or 20
        f = self._visible(actor, f)
        # The cards and the stages' index reads are independent: overlap them.
        cards, findings = await asyncio.gather(
            self._cards_in_scope(tenant, f, actor.user_id), self._find(tenant, query)
        )
        if not findings:
            listed = await self._list(tenant, f, cards, limit)
            return SearchResult([SessionHit(s) for s in listed])
        per_stage = [x.bounds(cards.keys()) for x in findings]
        bounds: dict[str, int] = {}
        for found in per_stage:
            for sid, n in found.items():
                bounds[sid] = bounds.get(sid, 0) + n
        ranked = sorted(
            bounds,
            key=lambda sid: (bounds[sid], cards[sid].pinned, cards[sid].last_activity_at_ms),
            reverse=True,
        )
        hits: list[SessionHit] = []
        start = 0
        # A page of documents at a time (title and tag lists may hold stale entries, cards
        # stale statuses), until the page is full and the best candidate left cannot beat
        # its last hit. Where each page's snippets are is read beside its documents.
        while start < len(ranked):
            if len(hits) >= limit and bounds[ranked[start]] <= hits[limit - 1].score:
                break
            chunk = ranked[start : start + max(limit - len(hits), 4)]
            start += len(chunk)
            sessions, snippets = await asyncio.gather(
                self._page(tenant, f, chunk, cards, len(chunk), held=True),
                asyncio.gather(*(x.snippets(chunk) for x in findings)),
            )
            for s in sessions:
                hit = _check(s, findings, per_stage, snippets)
                if hit is not None:
                    hits.append(hit)
            hits.sort(key=_hit_order, reverse=True)
        return SearchResult(hits[:limit])

    async def _find(self, tenant: str, query: str) -> list[StageFindings]:
        found = await asyncio.gather(*(stage.find(tenant, query) for stage in self._stages))
        return [x for x in found if x is not None]

    async def _page(
        self,
        tenant: str,
        f: SessionFilter,
        ids: list[str],
        cards: dict[str, Card],
        limit: int,
        *,
        held: bool = False,
    ) -> list[Session]:
        """The first `limit` of `ids` whose session documents pass the filter, reading a few
        more than needed per round; stale cards met on the way are rewritten. `held`: a
        document this replica read moments ago may stand in for its read (held.py)."""
        out: list[Session] = []
        start = 0
        # A status filter may ask for what no card line follows (SUSPENDED by a sweep): it
        # reads every document (held.py).
        reuse = held and not f.statuses
        while len(out) < limit and start < len(ids):
            chunk = ids[start : start + limit - len(out) + 4]
            start += len(chunk)
            docs: dict[str, Session] = {}
            if reuse:
                for sid in chunk:
                    s = self._held.get(cards[sid])
                    if s is not None:
                        docs[sid] = s
            wanted = [sid for sid in chunk if sid not in docs]
            if wanted:
                read_ms = self._clock.now_ms()
                fresh = await self._sessions.sessions_by_ids(wanted)
                self._held.put(fresh, read_ms)
                docs |= {s.session_id: s for s in fresh}
            stale: list[tuple[Session, str]] = []
            gone: dict[str, set[str]] = {}  # owner -> sessions whose document is gone
            for sid in chunk:
                s = docs.get(sid)
                if s is None:
                    gone.setdefault(cards[sid].owner, set()).add(sid)
                    continue
                if not cards[sid].matches(s):
                    stale.append((s, ""))
                if s.tenant_id == tenant and f.admits(s):
                    out.append(s)
            if stale:
                self._held.drop(s.session_id for s, _ in stale)
                await self._cards.put_many(stale, self._clock.now_ms())
            for owner, sids in gone.items():
                self._held.drop(sids)
                await self._cards.remove(tenant, owner, sids)
        return out[:limit]


def _check(
    s: Session,
    findings: list[StageFindings],
    per_stage: list[dict[str, int]],
    snippets: list[dict[str, list[MessageSnippet]]],
) -> SessionHit | None:
    """The session's hit: the sum of the scores of the stages that found it, the fields any
    matched in, and their snippets where it matched in the conversation; None when none of
    them matches it on its document."""
    hit: SessionHit | None = None
    matched: set[str] = set()
    for x, found, where in zip(findings, per_stage, snippets, strict=True):
        m = x.check(s) if s.session_id in found else None
        if m is None:
            continue
        hit = hit or SessionHit(s)
        hit.score += m.score
        matched |= m.matched
        if "conversation" in m.matched:
            hit.snippets += where.get(s.session_id, [])
    if hit is not None:
        hit.matched = [n for n in ("title", "tags", "conversation") if n in matched]
    return hit
