"""The session search index: token posting lists, a prefix vocabulary, the indexed message
texts, and the indexer's position in the chat feed (the per-session word lists are words.py).
Every read is by _id (the embedded store indexes nothing else, docs/architecture.md "Store
access"). Conversation lists and the vocabulary are packed lists (store/packed_lists.py).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from pymongo import UpdateOne

from session_service.search.tokens import tokens
from session_service.search.words import SessionWords
from session_service.store.packed_lists import (
    Appends,
    add_packed,
    compact,
    entries,
    packed,
    remove_packed,
)
from session_service.store.raw import Bson, Collection, Db
from vance.store import is_duplicate_key

MESSAGE_TEXT_CHARS = 4_000
HELD_MESSAGES = 10_000  # at most ~40 MB of text (4,000 characters each), mostly far less
_IN_BATCH = 500
_BULK = 200
# The chat feed position and the recent deletes live beside the per-process documents:
# process ids never hold a colon (vance/ids.py), so they cannot meet one.
FEED_POSITION_ID = "feed:chat"
DELETED_ID = "feed:deleted"
# How long a hard-deleted session is listed in DELETED_ID: far longer than a chat feed page
# takes from its write to its indexing (process_service scrubs a deleted session's messages
# from the pages not yet sent, so only pages already on their way can still bring them).
DELETED_KEEP_MS = 600_000
_CAS_ATTEMPTS = 8


@dataclass
class Posting:
    """Sessions whose title, tags or conversation contain one token; for the conversation,
    with the id of a message holding it ("" where the list predates keeping it)."""

    title: set[str] = field(default_factory=set)
    tags: set[str] = field(default_factory=set)
    conversation: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FirstPairCursor:
    """A chat process's first question and the answer after it, as the indexer found them
    (search/first_pair.py): "" while not seen yet. The question's id and time let a page
    read again after a restart (the feed position is saved every few seconds) tell an
    assistant message written before the question from its answer."""

    first_user: str = ""
    first_answer: str = ""
    first_user_id: str = ""
    first_user_at_ms: int = 0


class SearchStore:
    def __init__(self, db: Db) -> None:
        self.postings = db["search_postings"]
        self.vocab = db["search_vocab"]
        self.words = SessionWords(db["search_session_words"])
        self.messages = db["search_messages"]
        self.cursors = db["search_cursors"]
        self._appends = Appends()
        self._held: OrderedDict[str, Bson] = OrderedDict()  # message copies, by id

    # ---- postings ----

    @staticmethod
    def posting_id(tenant: str, token: str) -> str:
        return f"{tenant}:{token}"

    @staticmethod
    def tag_id(tenant: str, tag: str) -> str:
        # `#` never occurs in a token (tokens are \w+), so exact-tag lists cannot collide.
        return f"{tenant}:#{tag}"

    async def postings_for(self, tenant: str, tokens: Iterable[str]) -> dict[str, Posting]:
        ids = {self.posting_id(tenant, t): t for t in tokens}
        out = {t: Posting() for t in ids.values()}
        for doc in await self._by_ids(self.postings, list(ids)):
            out[ids[doc["_id"]]] = Posting(
                title=set(doc.get("t") or []),
                tags=set(doc.get("g") or []),
                conversation=entries(doc, "c"),
            )
        return out

    async def tagged(self, tenant: str, tag: str) -> set[str]:
        doc = await self.postings.find_one({"_id": self.tag_id(tenant, tag)})
        return set(doc.get("g") or []) if doc else set()

    async def add_conversation(self, tenant_words: dict[str, dict[str, list[str]]]) -> None:
        """Adds sessions to the conversation lists of words new to them (tenant -> word ->
        `session/message` entries, the message one that holds the word, for its snippet), in
        one bulk write; words whose list this creates enter the vocabulary."""
        keys = [(t, w) for t, words in tenant_words.items() for w in words]
        if not keys:
            return
        ops = [
            UpdateOne(
                {"_id": self.posting_id(t, w)}, add_packed("c", tenant_words[t][w]), upsert=True
            )
            for t, w in keys
        ]
        result = await self.postings.bulk_write(ops, ordered=False)
        created: dict[str, list[str]] = {}
        for i in (result.upserted_ids or {}).keys():
            t, w = keys[int(i)]
            created.setdefault(t, []).append(w)
        for t, words in created.items():
            await self._new_words(t, words)
        for doc_id in self._appends.due(self.posting_id(t, w) for t, w in keys):
            await compact(self.postings, doc_id, "c", keyed=True)

    async def set_metadata_tokens(
        self,
        tenant: str,
        session_id: str,
        *,
        title: tuple[set[str], set[str]],
        tags: tuple[set[str], set[str]],
        exact_tags: tuple[set[str], set[str]],
    ) -> None:
        """Applies (added, removed) token sets of a session's title, tag words and exact tags."""
        ops: list[UpdateOne] = []
        for key, field_name, (added, removed) in (
            (self.posting_id, "t", title),
            (self.posting_id, "g", tags),
            (self.tag_id, "g", exact_tags),
        ):
            ops += [
                UpdateOne({"_id": key(tenant, t)}, {"$pull": {field_name: session_id}})
                for t in removed
            ]
            ops += [
                UpdateOne({"_id": key(tenant, t)}, {"$addToSet": {field_name: session_id}}, True)
                for t in added
            ]
        if not ops:
            return
        result = await self.postings.bulk_write(ops, ordered=False)
        cut = len(tenant) + 1
        created = [str(i)[cut:] for i in (result.upserted_ids or {}).values()]
        await self._new_words(tenant, [w for w in created if not w.startswith("#")])

    async def remove_session(
        self, tenant: str, session_id: str, *, words: Iterable[str], exact_tags: Iterable[str]
    ) -> None:
        """Takes a deleted session off the title, tag and conversation lists of `words` and
        the exact lists of `exact_tags`. A list left empty is deleted and its word leaves the
        vocabulary, so nothing of the session stays in the index."""
        ids = [self.posting_id(tenant, w) for w in set(words)]
        ids += [self.tag_id(tenant, t) for t in set(exact_tags)]
        pull = {"$pull": {"t": session_id, "g": session_id}}
        for i in range(0, len(ids), _BULK):
            batch = ids[i : i + _BULK]
            await self.postings.bulk_write([UpdateOne({"_id": x}, pull) for x in batch])
        for doc in await self._by_ids(self.postings, ids):
            mine = {e for e in packed(doc, "c") if e.partition("/")[0] == session_id}
            if mine:
                await remove_packed(self.postings, str(doc["_id"]), "c", mine)
        cut = len(tenant) + 1
        for doc in await self._by_ids(self.postings, ids):
            if doc.get("t") or doc.get("g") or packed(doc, "c"):
                continue
            word = str(doc["_id"])[cut:]
            vocab = "" if word.startswith("#") else self.vocab_id(tenant, word)
            if vocab:
                await remove_packed(self.vocab, vocab, "w", {word})
            deleted = await self.postings.delete_one(_unchanged(doc))
            if vocab and deleted.deleted_count == 0:
                # Another session gained the word meanwhile: it stays searchable by prefix.
                await self.vocab.update_one({"_id": vocab}, add_packed("w", [word]), True)

    # ---- vocabulary (prefix search) ----

    @staticmethod
    def vocab_id(tenant: str, prefix: str) -> str:
        return f"{tenant}:{prefix[:2]}"

    async def words_with_prefix(self, tenant: str, prefix: str) -> set[str]:
        doc = await self.vocab.find_one({"_id": self.vocab_id(tenant, prefix)})
        return {w for w in packed(doc, "w") if w.startswith(prefix)}

    async def _new_words(self, tenant: str, words: Iterable[str]) -> None:
        """Words whose posting document was just created enter the tenant's vocabulary."""
        shards: dict[str, list[str]] = {}
        for w in words:
            shards.setdefault(self.vocab_id(tenant, w), []).append(w)
        if not shards:
            return
        await self.vocab.bulk_write(
            [UpdateOne({"_id": k}, add_packed("w", v), True) for k, v in shards.items()],
            ordered=False,
        )
        for doc_id in self._appends.due(shards):
            await compact(self.vocab, doc_id, "w")

    # ---- indexed message texts (for snippets) ----

    async def save_messages(self, docs: list[Bson]) -> None:
        """Message copies for snippets, cut at MESSAGE_TEXT_CHARS; a cut copy also keeps the
        words of the rest (`w`, space-separated), so that a copy gives all the words its
        message was indexed by (a hard delete takes the session off their lists)."""
        if not docs:
            return
        for d in docs:
            text = str(d.get("x", ""))
            d["x"] = text[:MESSAGE_TEXT_CHARS]
            if len(text) > MESSAGE_TEXT_CHARS:
                rest = set(tokens(text)) - set(tokens(d["x"]))
                if rest:
                    d["w"] = " ".join(sorted(rest))
        try:
            await self.messages.insert_many(docs, ordered=False)
        except Exception as exc:
            # A message indexed twice (a feed retried after a crash) keeps its first copy.
            if not is_duplicate_key(exc) and "duplicate" not in str(exc).lower():
                raise

    async def messages_by_ids(self, ids: list[str]) -> dict[str, Bson]:
        """Message copies never change (a message indexed again keeps its first copy), so
        this replica holds the last HELD_MESSAGES it read: snippets of a page searched again
        read none of them."""
        out = {m: self._held[m] for m in ids if m in self._held}
        for m in out:
            self._held.move_to_end(m)
        wanted = [m for m in ids if m not in out]
        for d in await self._by_ids(self.messages, wanted) if wanted else []:
            out[str(d["_id"])] = self._held[str(d["_id"])] = d
        while len(self._held) > HELD_MESSAGES:
            self._held.popitem(last=False)
        return out

    # ---- indexer state ----

    async def cursors_of(self, process_ids: list[str]) -> dict[str, FirstPairCursor]:
        """What the indexer keeps of chat processes: their first question and answer."""
        found = {str(d["_id"]): d for d in await self._by_ids(self.cursors, process_ids)}
        return {p: _cursor(found.get(p) or {}) for p in process_ids}

    async def cursor(self, process_id: str) -> FirstPairCursor:
        return (await self.cursors_of([process_id]))[process_id]

    async def save_cursors(self, cursors: dict[str, FirstPairCursor]) -> None:
        """Stores the parts of each chat process's cursor that are known (an empty one is
        left as it is), in one bulk write."""
        ops = [
            UpdateOne({"_id": process_id}, {"$set": fields}, upsert=True)
            for process_id, cursor in cursors.items()
            if (fields := {k: v for k, v in asdict(cursor).items() if v})
        ]
        if ops:
            await self.cursors.bulk_write(ops, ordered=False)

    async def feed_position(self) -> int:
        """The last chat feed page the index holds (0: none yet)."""
        doc = await self.cursors.find_one({"_id": FEED_POSITION_ID})
        return int(doc["after"]) if doc else 0

    async def save_feed_position(self, after: int) -> None:
        await self.cursors.update_one(
            {"_id": FEED_POSITION_ID}, {"$max": {"after": after}}, upsert=True
        )

    async def note_deleted(self, session_id: str) -> None:
        """Lists a hard-deleted session for DELETED_KEEP_MS (and drops older entries), so an
        indexer that indexes a page with its messages after the delete's purge takes them out
        again (indexer.py `sweep_deleted`). A compare-and-set on the version: deletes are
        rare, and two at once both land. Wall-clock time: replicas on other hosts prune it."""
        for _ in range(_CAS_ATTEMPTS):
            now_ms = time.time_ns() // 1_000_000
            doc = await self.cursors.find_one({"_id": DELETED_ID})
            kept = {
                str(e["s"]): int(e["at"])
                for e in (doc or {}).get("d") or []
                if int(e["at"]) >= now_ms - DELETED_KEEP_MS
            }
            kept[deleted_key(session_id)] = now_ms
            fields = {"d": [{"s": k, "at": v} for k, v in kept.items()]}
            if doc is None:
                try:
                    await self.cursors.insert_one({"_id": DELETED_ID, "v": 1, **fields})
                    return
                except Exception as exc:
                    if not is_duplicate_key(exc) and "duplicate" not in str(exc).lower():
                        raise
                    continue
            version = int(doc.get("v") or 0)
            result = await self.cursors.update_one(
                {"_id": DELETED_ID, "v": version}, {"$set": {**fields, "v": version + 1}}
            )
            if result.matched_count:
                return
        raise RuntimeError(f"{DELETED_ID}: kept changing while {session_id} was added")

    async def deleted_sessions(self) -> set[str]:
        """The sessions hard-deleted within DELETED_KEEP_MS (one small document), as their
        `deleted_key`s."""
        doc = await self.cursors.find_one({"_id": DELETED_ID})
        return {str(e["s"]) for e in (doc or {}).get("d") or []}

    async def forget(
        self,
        session_id: str,
        *,
        message_ids: list[str],
        letters: Iterable[str],
        process_ids: list[str],
    ) -> None:
        await self.words.delete(session_id, letters)
        for m in message_ids:
            self._held.pop(m, None)
        for coll, ids in ((self.messages, message_ids), (self.cursors, process_ids)):
            for i in range(0, len(ids), _IN_BATCH):
                await coll.delete_many({"_id": {"$in": ids[i : i + _IN_BATCH]}})

    @staticmethod
    async def _by_ids(coll: Collection, ids: list[str]) -> list[Bson]:
        out: list[Bson] = []
        for i in range(0, len(ids), _IN_BATCH):
            out += await coll.find({"_id": {"$in": ids[i : i + _IN_BATCH]}}).to_list(None)
        return out


def deleted_key(session_id: str) -> str:
    """How the list of recent deletes names a session: a digest, so that nothing left in the
    store after a hard delete names the session (tests/test_session_lifecycle_archive.py)."""
    return hashlib.blake2b(session_id.encode(), digest_size=12).hexdigest()


def _unchanged(doc: Bson) -> Bson:
    """A filter that matches the posting document only as it was read."""
    out: Bson = {"_id": doc["_id"]}
    for key in ("t", "g", "ca", "cp", "cz", "cv"):
        out[key] = doc[key] if key in doc else {"$exists": False}
    return out


def _cursor(doc: dict[str, object]) -> FirstPairCursor:
    """A stored cursor; one stored before the question's id and time were kept reads with
    none, and pairs its question with the next assistant message as it did then."""
    at = doc.get("first_user_at_ms")
    return FirstPairCursor(
        str(doc.get("first_user") or ""),
        str(doc.get("first_answer") or ""),
        str(doc.get("first_user_id") or ""),
        at if isinstance(at, int) else 0,
    )
