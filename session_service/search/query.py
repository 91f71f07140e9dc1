"""Listing and searching sessions: title and tags (title weighs
most) and the conversation, with snippets; scoped to the user, filtered, ranked."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace

from session_service.access import Actor
from session_service.models import Session, SessionStatus
from session_service.search.cards import Card
from session_service.search.store import Posting, SearchStore, shard_lookup
from session_service.search.tokens import QueryTerm, Snippet, query_terms, snippet, tokens
from session_service.store import SessionStore
from vance.clock import Clock
from vance.errors import InvalidArgumentError, PermissionDeniedError

TITLE_WEIGHT = 10
TAG_WEIGHT = 5
CONVERSATION_WEIGHT = 1
MAX_EXPANSIONS = 32  # words a trailing prefix may stand for; the shortest are kept
MAX_LIMIT = 200
SNIPPETS_PER_HIT = 3
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


@dataclass(frozen=True)
class MessageSnippet:
    message_id: str
    process_name: str
    role: str
    created_at_ms: int
    snippet: Snippet


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


class SessionSearch:
    def __init__(self, sessions: SessionStore, index: SearchStore, clock: Clock) -> None:
        self._sessions = sessions
        self._cards = sessions.cards
        self._index = index
        self._clock = clock

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
        asked = {st.value for st in f.statuses}
        return {
            sid: c
            for sid, c in cards.items()
            if (not f.project_id or c.project_id == f.project_id)
            and all(sid in ids for ids in tagged)
            and (c.status != "CLOSED" or "CLOSED" in asked)
            and (c.status != "ARCHIVED" or f.include_archived or "ARCHIVED" in asked)
            # Another user's hub sessions stay out of an admin's lists (session_service/home.py).
            and not (viewer and c.owner != viewer and c.project_id == f"_user_{c.owner}")
        }

    async def list_sessions(
        self, tenant: str, actor: Actor, f: SessionFilter, *, limit: int = 0
    ) -> list[Session]:
        """Sessions in the default order: pinned first, then by last activity."""
        f = self._visible(actor, f)
        cards = await self._cards_in_scope(tenant, f, actor.user_id)
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
        terms = query_terms(query)
        if not terms:
            listed = await self.list_sessions(tenant, actor, f, limit=limit)
            return SearchResult([SessionHit(s) for s in listed])
        # The cards and the postings are independent reads: overlap them.
        cards, (words, postings) = await asyncio.gather(
            self._cards_in_scope(tenant, f, actor.user_id), self._postings(tenant, terms)
        )
        matched = _candidates(words, postings, set(cards))
        ranked = sorted(
            matched,
            key=lambda sid: (sum(matched[sid]), cards[sid].pinned, cards[sid].last_activity_at_ms),
            reverse=True,
        )
        hits: list[SessionHit] = []
        located: dict[str, list[str]] = {}
        start = 0
        # Page by page down the ranking until `limit` sessions pass the check against their
        # documents (title and tag lists may hold stale entries, cards stale statuses). Where
        # each page's snippets are is read at the same time as its session documents.
        while len(hits) < limit and start < len(ranked):
            chunk = ranked[start : start + limit - len(hits) + 4]
            start += len(chunk)
            sessions, where = await asyncio.gather(
                self._page(tenant, f, chunk, cards, len(chunk)),
                self._locate(chunk, words, postings),
            )
            located |= where
            for s in sessions:
                hit = _score(s, terms, words, postings)
                if hit is not None:
                    hits.append(hit)
        hits.sort(key=lambda h: (h.score, *default_order(h.session)), reverse=True)
        page = hits[:limit]
        await self._add_snippets(page, located, terms)
        return SearchResult(page)

    async def _page(
        self, tenant: str, f: SessionFilter, ids: list[str], cards: dict[str, Card], limit: int
    ) -> list[Session]:
        """The first `limit` of `ids` whose session documents pass the filter, reading a few
        more than needed per round; stale cards met on the way are rewritten."""
        out: list[Session] = []
        start = 0
        while len(out) < limit and start < len(ids):
            chunk = ids[start : start + limit - len(out) + 4]
            start += len(chunk)
            docs = {s.session_id: s for s in await self._sessions.sessions_by_ids(chunk)}
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
                await self._cards.put_many(stale, self._clock.now_ms())
            for owner, sids in gone.items():
                await self._cards.remove(tenant, owner, sids)
        return out[:limit]

    async def _postings(
        self, tenant: str, terms: list[QueryTerm]
    ) -> tuple[list[list[str]], dict[str, Posting]]:
        words = [await self._expand(tenant, t) for t in terms]
        return words, await self._index.postings_for(tenant, {w for ws in words for w in ws})

    async def _expand(self, tenant: str, term: QueryTerm) -> list[str]:
        if not term.prefix:
            return [term.text]
        words = await self._index.words_with_prefix(tenant, term.text)
        words.add(term.text)
        return sorted(words, key=lambda w: (len(w), w))[:MAX_EXPANSIONS]

    async def _locate(
        self, sids: list[str], words: list[list[str]], postings: dict[str, Posting]
    ) -> dict[str, list[str]]:
        """Per session: a message holding each query word found in its conversation."""
        needed = {
            sid: [w for ws in words for w in ws if sid in postings[w].conversation] for sid in sids
        }
        shards = await self._index.word_shards(
            self._index.shard_id(sid, w) for sid, ws in needed.items() for w in ws
        )
        out: dict[str, list[str]] = {}
        for sid, ws in needed.items():
            ids: list[str] = []
            for w in ws:
                mid = shard_lookup(shards.get(self._index.shard_id(sid, w)), w)
                if mid and mid not in ids:
                    ids.append(mid)
                if len(ids) == SNIPPETS_PER_HIT:
                    break
            out[sid] = ids
        return out

    async def _add_snippets(
        self, hits: list[SessionHit], located: dict[str, list[str]], terms: list[QueryTerm]
    ) -> None:
        wanted = [h for h in hits if "conversation" in h.matched]
        ids = [m for h in wanted for m in located.get(h.session.session_id, [])]
        texts = await self._index.messages_by_ids(ids) if ids else {}
        for h in wanted:
            for mid in located.get(h.session.session_id, []):
                m = texts.get(mid)
                if m is not None:
                    h.snippets.append(
                        MessageSnippet(
                            message_id=mid,
                            process_name=str(m.get("p", "")),
                            role=str(m.get("r", "")),
                            created_at_ms=int(m.get("at", 0)),
                            snippet=snippet(str(m.get("x", "")), terms),
                        )
                    )


def _candidates(
    words: list[list[str]], postings: dict[str, Posting], scope: set[str] | None
) -> dict[str, list[int]]:
    """Sessions holding every query word somewhere, with the best weight each word has there
    (title and tag lists may hold stale entries; `_score` checks them against the session)."""
    result: dict[str, list[int]] | None = None
    for ws in words:
        weights: dict[str, int] = {}
        for w in ws:
            p = postings[w]
            for ids, weight in (
                (p.title, TITLE_WEIGHT),
                (p.tags, TAG_WEIGHT),
                (p.conversation, CONVERSATION_WEIGHT),
            ):
                for sid in ids if scope is None else ids & scope:
                    if weights.get(sid, 0) < weight:
                        weights[sid] = weight
        if result is None:
            result = {sid: [w] for sid, w in weights.items()}
        else:
            result = {sid: [*ws_, weights[sid]] for sid, ws_ in result.items() if sid in weights}
        if not result:
            return {}
    return result or {}


def _score(
    s: Session, terms: list[QueryTerm], words: list[list[str]], postings: dict[str, Posting]
) -> SessionHit | None:
    """The session's score from its current title and tags and the conversation lists:
    per query word 10 for the title, 5 for a tag, 1 for the conversation."""
    title = set(tokens(s.metadata.title or ""))
    tag_words = {w for t in s.metadata.tags for w in tokens(t)}
    hit = SessionHit(s)
    fields: set[str] = set()
    for term, ws in zip(terms, words, strict=True):
        in_title = any(term.matches(t) for t in title)
        in_tags = any(term.matches(t) for t in tag_words)
        in_conv = any(s.session_id in postings[w].conversation for w in ws)
        if not (in_title or in_tags or in_conv):
            return None
        hit.score += TITLE_WEIGHT * in_title + TAG_WEIGHT * in_tags + CONVERSATION_WEIGHT * in_conv
        fields |= {
            n for n, on in (("title", in_title), ("tags", in_tags), ("conversation", in_conv)) if on
        }
    hit.matched = [n for n in ("title", "tags", "conversation") if n in fields]
    return hit
