"""The full-text search stage: the words of a query in sessions' titles (weighing most), tags
and conversations, from the posting lists of the index (index_store.py), with snippets of the
messages that hold them (words.py says which message, index_store.py keeps its text).

Every word of the query must match somewhere; the last one also matches as a prefix (type-ahead)
unless the query ends with a space, standing for at most MAX_EXPANSIONS words of the tenant's
vocabulary (the shortest).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from session_service.domain.models import Session
from session_service.search.index_store import Posting, SearchStore
from session_service.search.stage import MessageSnippet, StageMatch
from session_service.search.tokens import QueryTerm, query_terms, snippet, tokens
from session_service.search.words import shard_lookup

TITLE_WEIGHT = 10
TAG_WEIGHT = 5
CONVERSATION_WEIGHT = 1
MAX_EXPANSIONS = 32  # words a trailing prefix may stand for; the shortest are kept
SNIPPETS_PER_HIT = 3


class FullTextStage:
    def __init__(self, index: SearchStore) -> None:
        self._index = index

    async def find(self, tenant: str, query: str) -> FullTextFindings | None:
        terms = query_terms(query)
        if not terms:
            return None
        words = [await self._expand(tenant, t) for t in terms]
        postings = await self._index.postings_for(tenant, {w for ws in words for w in ws})
        return FullTextFindings(self._index, terms, words, postings)

    async def _expand(self, tenant: str, term: QueryTerm) -> list[str]:
        if not term.prefix:
            return [term.text]
        words = await self._index.words_with_prefix(tenant, term.text)
        words.add(term.text)
        return sorted(words, key=lambda w: (len(w), w))[:MAX_EXPANSIONS]


class FullTextFindings:
    def __init__(
        self,
        index: SearchStore,
        terms: list[QueryTerm],
        words: list[list[str]],
        postings: dict[str, Posting],
    ) -> None:
        self._index = index
        self._terms = terms
        self._words = words  # per term: the index words it stands for
        self._postings = postings

    def bounds(self, scope: Collection[str]) -> dict[str, int]:
        """Sessions holding every query word somewhere, each with the sum per word of the
        weights of the lists holding it (title and tag lists may hold stale entries: `check`
        reads the session's own)."""
        result: dict[str, int] | None = None
        for ws in self._words:
            ps = [self._postings[w] for w in ws]
            weights: dict[str, int] = {}
            for holding, weight in (
                (set[str]().union(*(p.title for p in ps)), TITLE_WEIGHT),
                (set[str]().union(*(p.tags for p in ps)), TAG_WEIGHT),
                (set[str]().union(*(p.conversation for p in ps)), CONVERSATION_WEIGHT),
            ):
                for sid in holding.intersection(scope if result is None else result):
                    weights[sid] = weights.get(sid, 0) + weight
            result = (
                weights
                if result is None
                else {sid: n + weights[sid] for sid, n in result.items() if sid in weights}
            )
            if not result:
                return {}
        return result or {}

    def check(self, s: Session) -> StageMatch | None:
        """The score from the session's current title and tags and the conversation lists:
        per query word 10 for the title, 5 for a tag, 1 for the conversation."""
        title = set(tokens(s.metadata.title or ""))
        tag_words = {w for t in s.metadata.tags for w in tokens(t)}
        score = 0
        fields: set[str] = set()
        for term, ws in zip(self._terms, self._words, strict=True):
            in_title = any(term.matches(t) for t in title)
            in_tags = any(term.matches(t) for t in tag_words)
            in_conv = self._in_conversation(s.session_id, ws)
            if not (in_title or in_tags or in_conv):
                return None
            score += TITLE_WEIGHT * in_title + TAG_WEIGHT * in_tags + CONVERSATION_WEIGHT * in_conv
            fields |= {
                n
                for n, on in (("title", in_title), ("tags", in_tags), ("conversation", in_conv))
                if on
            }
        return StageMatch(score, frozenset(fields))

    def _in_conversation(self, session_id: str, ws: list[str]) -> bool:
        return any(session_id in self._postings[w].conversation for w in ws)

    async def snippets(self, session_ids: Sequence[str]) -> dict[str, list[MessageSnippet]]:
        """Per session: the message each query word's conversation list names (at most
        SNIPPETS_PER_HIT), with the query words highlighted. Lists written before they named a
        message send the lookup to the session's word lists."""
        located: dict[str, list[str]] = {}
        unnamed: list[tuple[str, str]] = []
        for sid in session_ids:
            ids: list[str] = []
            for ws in self._words:
                for w in ws:
                    if sid not in self._postings[w].conversation:
                        continue
                    mid = self._postings[w].conversation[sid]
                    if not mid:
                        unnamed.append((sid, w))
                    elif mid not in ids and len(ids) < SNIPPETS_PER_HIT:
                        ids.append(mid)
            if ids:
                located[sid] = ids
        if unnamed:
            await self._look_up(unnamed, located)
        wanted = [m for ids in located.values() for m in ids]
        texts = await self._index.messages_by_ids(wanted) if wanted else {}
        out: dict[str, list[MessageSnippet]] = {}
        for sid, ids in located.items():
            for mid in ids:
                m = texts.get(mid)
                if m is not None:
                    out.setdefault(sid, []).append(
                        MessageSnippet(
                            message_id=mid,
                            process_name=str(m.get("p", "")),
                            role=str(m.get("r", "")),
                            created_at_ms=int(m.get("at", 0)),
                            snippet=snippet(str(m.get("x", "")), self._terms),
                        )
                    )
        return out

    async def _look_up(self, pairs: list[tuple[str, str]], located: dict[str, list[str]]) -> None:
        words = self._index.words
        shards = await words.shards(words.shard_id(sid, w) for sid, w in pairs)
        for sid, w in pairs:
            ids = located.setdefault(sid, [])
            mid = shard_lookup(shards.get(words.shard_id(sid, w)), w)
            if mid and mid not in ids and len(ids) < SNIPPETS_PER_HIT:
                ids.append(mid)
