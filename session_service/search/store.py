"""The session search index: token posting lists, a prefix vocabulary, per-session word lists,
the indexed message texts, and the indexer's position in the chat feed. Every read is by _id (the embedded
store indexes nothing else, docs/architecture.md "Store access").

Large id lists are kept as one space-separated string plus a small array that takes appends:
FerretDB decodes arrays element by element (a 10,000-element array reads ~20x slower than the
same ids in one string), and `$addToSet` on a small array is one cheap write. A list is
compacted into its string once its array has collected `COMPACT_AT` entries.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pymongo import UpdateOne
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase

from vance.store import Document, is_duplicate_key

COMPACT_AT = 64
MESSAGE_TEXT_CHARS = 4_000
_IN_BATCH = 500
_BULK = 200
# The chat feed position lives beside the per-process documents: process ids never hold a
# colon (vance/ids.py), so it cannot meet one.
FEED_POSITION_ID = "feed:chat"


@dataclass
class Posting:
    """Sessions whose title, tags or conversation contain one token."""

    title: set[str] = field(default_factory=set)
    tags: set[str] = field(default_factory=set)
    conversation: set[str] = field(default_factory=set)


def _packed(doc: Document | None, name: str) -> set[str]:
    if not doc:
        return set()
    return set(str(doc.get(f"{name}p") or "").split()) | set(doc.get(f"{name}a") or [])


def _add_packed(name: str, values: Iterable[str]) -> Document:
    return {"$addToSet": {f"{name}a": {"$each": list(values)}}}


class Appends:
    """Counts appends per list in this process, and says which lists are due for compaction.
    Counting in the store would cost a read per append; counted here, a list may collect up
    to COMPACT_AT appends per replica (or across a restart) before it is compacted, which only
    makes it a little slower to read until then."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()

    def due(self, ids: Iterable[str]) -> list[str]:
        out: list[str] = []
        for i in ids:
            self._counts[i] += 1
            if self._counts[i] >= COMPACT_AT:
                del self._counts[i]
                out.append(i)
        return out


class SearchStore:
    def __init__(self, db: AsyncDatabase[Document]) -> None:
        self.postings = db["search_postings"]
        self.vocab = db["search_vocab"]
        self.terms = db["search_session_words"]
        self.messages = db["search_messages"]
        self.cursors = db["search_cursors"]
        self._appends = Appends()

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
                conversation=_packed(doc, "c"),
            )
        return out

    async def tagged(self, tenant: str, tag: str) -> set[str]:
        doc = await self.postings.find_one({"_id": self.tag_id(tenant, tag)})
        return set(doc.get("g") or []) if doc else set()

    async def add_conversation(self, tenant: str, session_id: str, tokens: list[str]) -> None:
        """Adds a session to the conversation lists of tokens new to that session."""
        if not tokens:
            return
        ops = [
            UpdateOne({"_id": self.posting_id(tenant, t)}, _add_packed("c", [session_id]), True)
            for t in tokens
        ]
        result = await self.postings.bulk_write(ops, ordered=False)
        await self._new_words(tenant, (result.upserted_ids or {}).values())
        for doc_id in self._appends.due(self.posting_id(tenant, t) for t in tokens):
            await self._compact(self.postings, doc_id, "c")

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
        await self._new_words(tenant, (result.upserted_ids or {}).values())

    async def remove_session(
        self, tenant: str, session_id: str, *, words: Iterable[str], exact_tags: Iterable[str]
    ) -> None:
        """Takes a deleted session off the title, tag and conversation lists of `words` and
        the exact lists of `exact_tags`. A list left empty is deleted and its word leaves the
        vocabulary, so nothing of the session stays in the index."""
        ids = [self.posting_id(tenant, w) for w in set(words)]
        ids += [self.tag_id(tenant, t) for t in set(exact_tags)]
        pull = {"$pull": {"t": session_id, "g": session_id, "ca": session_id}}
        for i in range(0, len(ids), _BULK):
            batch = ids[i : i + _BULK]
            await self.postings.bulk_write([UpdateOne({"_id": x}, pull) for x in batch])
        for doc in await self._by_ids(self.postings, ids):
            if session_id in str(doc.get("cp") or "").split():
                await self._remove_packed(self.postings, str(doc["_id"]), "c", {session_id})
        cut = len(tenant) + 1
        for doc in await self._by_ids(self.postings, ids):
            if doc.get("t") or doc.get("g") or _packed(doc, "c"):
                continue
            word = str(doc["_id"])[cut:]
            vocab = "" if word.startswith("#") else self.vocab_id(tenant, word)
            if vocab:
                await self._remove_packed(self.vocab, vocab, "w", {word})
            deleted = await self.postings.delete_one(_unchanged(doc))
            if vocab and deleted.deleted_count == 0:
                # Another session gained the word meanwhile: it stays searchable by prefix.
                await self.vocab.update_one({"_id": vocab}, _add_packed("w", [word]), True)

    @staticmethod
    async def _remove_packed(
        coll: AsyncCollection[Document], doc_id: str, name: str, values: set[str]
    ) -> None:
        """Removes values from a packed list: from its string by compare-and-set on the
        version (retried when a compaction moved it), and from its array."""
        for _ in range(8):
            doc = await coll.find_one({"_id": doc_id})
            if doc is None:
                return
            kept = set(str(doc.get(f"{name}p") or "").split()) - values
            result = await coll.update_one(
                {"_id": doc_id, f"{name}v": doc.get(f"{name}v")},
                {
                    "$set": {
                        f"{name}p": " ".join(sorted(kept)),
                        f"{name}v": int(doc.get(f"{name}v") or 0) + 1,
                    },
                    "$pullAll": {f"{name}a": sorted(values)},
                },
            )
            if result.matched_count:
                return
        raise RuntimeError(f"{coll.name} {doc_id}: kept changing while values were removed")

    # ---- vocabulary (prefix search) ----

    @staticmethod
    def vocab_id(tenant: str, prefix: str) -> str:
        return f"{tenant}:{prefix[:2]}"

    async def words_with_prefix(self, tenant: str, prefix: str) -> set[str]:
        doc = await self.vocab.find_one({"_id": self.vocab_id(tenant, prefix)})
        return {w for w in _packed(doc, "w") if w.startswith(prefix)}

    async def _new_words(self, tenant: str, posting_ids: Iterable[Any]) -> None:
        """Words whose posting document was just created enter the tenant's vocabulary."""
        cut = len(tenant) + 1
        words = [str(i)[cut:] for i in posting_ids if not str(i)[cut:].startswith("#")]
        shards: dict[str, list[str]] = {}
        for w in words:
            shards.setdefault(self.vocab_id(tenant, w), []).append(w)
        if not shards:
            return
        await self.vocab.bulk_write(
            [UpdateOne({"_id": k}, _add_packed("w", v), True) for k, v in shards.items()],
            ordered=False,
        )
        for doc_id in self._appends.due(shards):
            await self._compact(self.vocab, doc_id, "w")

    @staticmethod
    async def _compact(coll: AsyncCollection[Document], doc_id: str, name: str) -> None:
        """Moves a list's appended entries into its string; a compare-and-set on the version,
        so a concurrent compaction makes this one a no-op, and appends in between survive."""
        doc = await coll.find_one({"_id": doc_id})
        if doc is None:
            return
        moved = list(doc.get(f"{name}a") or [])
        version = int(doc.get(f"{name}v") or 0)
        merged = sorted(_packed(doc, name))
        await coll.update_one(
            {"_id": doc_id, f"{name}v": doc.get(f"{name}v")},
            {
                "$set": {f"{name}p": " ".join(merged), f"{name}v": version + 1},
                "$pullAll": {f"{name}a": moved},
            },
        )

    # ---- per-session words: which words a session has, and a message holding each ----
    # One document per session and first letter of the word (`<session>:<letter>`, lines of
    # `word<TAB>message id`): a snippet reads a few small documents, not all of a session's words.

    @staticmethod
    def shard_id(session_id: str, word: str) -> str:
        return f"{session_id}:{word[0]}"

    @staticmethod
    def letters_id(session_id: str) -> str:
        """The document listing the first letters a session has word shards for."""
        return f"{session_id}:"

    async def note_letters(self, session_id: str, letters: Iterable[str]) -> None:
        """Written before the shards it lists, so a delete finds every shard."""
        await self.terms.update_one(
            {"_id": self.letters_id(session_id)},
            {"$addToSet": {"l": {"$each": sorted(set(letters))}}},
            upsert=True,
        )

    async def letters(self, session_id: str) -> set[str]:
        doc = await self.terms.find_one({"_id": self.letters_id(session_id)})
        return set(doc.get("l") or []) if doc else set()

    async def word_shards(self, shard_ids: Iterable[str]) -> dict[str, Document]:
        return {str(d["_id"]): d for d in await self._by_ids(self.terms, sorted(set(shard_ids)))}

    async def save_word_shards(self, changes: list[tuple[str, int | None, str]]) -> bool:
        """Writes (shard id, version read or None if absent, new text) as compare-and-sets;
        False if any shard changed meanwhile (the caller re-reads and retries)."""
        if not changes:
            return True
        ops = [
            UpdateOne(
                {"_id": sid, "v": version},
                {"$set": {"p": text, "v": (version or 0) + 1}},
                upsert=version is None,
            )
            for sid, version, text in changes
        ]
        try:
            result = await self.terms.bulk_write(ops, ordered=False)
        except Exception as exc:
            if is_duplicate_key(exc) or "duplicate" in str(exc).lower():
                return False  # created concurrently
            raise
        return result.matched_count + result.upserted_count == len(ops)

    # ---- indexed message texts (for snippets) ----

    async def save_messages(self, docs: list[Document]) -> None:
        if not docs:
            return
        for d in docs:
            d["x"] = str(d.get("x", ""))[:MESSAGE_TEXT_CHARS]
        try:
            await self.messages.insert_many(docs, ordered=False)
        except Exception as exc:
            # A message indexed twice (a feed retried after a crash) keeps its first copy.
            if not is_duplicate_key(exc) and "duplicate" not in str(exc).lower():
                raise

    async def messages_by_ids(self, ids: list[str]) -> dict[str, Document]:
        return {str(d["_id"]): d for d in await self._by_ids(self.messages, ids)}

    # ---- indexer state ----

    async def cursor(self, process_id: str) -> Document:
        """What the indexer keeps of a chat process: its first question and answer."""
        return await self.cursors.find_one({"_id": process_id}) or {"_id": process_id}

    async def save_cursor(self, process_id: str, fields: Document) -> None:
        await self.cursors.update_one({"_id": process_id}, {"$set": fields}, upsert=True)

    async def feed_position(self) -> int:
        """The last chat feed page the index holds (0: none yet)."""
        doc = await self.cursors.find_one({"_id": FEED_POSITION_ID})
        return int(doc["after"]) if doc else 0

    async def save_feed_position(self, after: int) -> None:
        await self.cursors.update_one(
            {"_id": FEED_POSITION_ID}, {"$max": {"after": after}}, upsert=True
        )

    async def forget(
        self,
        session_id: str,
        *,
        message_ids: list[str],
        shard_ids: list[str],
        process_ids: list[str],
    ) -> None:
        for coll, ids in (
            (self.messages, message_ids),
            (self.terms, shard_ids),
            (self.cursors, process_ids),
        ):
            for i in range(0, len(ids), _IN_BATCH):
                await coll.delete_many({"_id": {"$in": ids[i : i + _IN_BATCH]}})

    @staticmethod
    async def _by_ids(coll: AsyncCollection[Document], ids: list[str]) -> list[Document]:
        out: list[Document] = []
        for i in range(0, len(ids), _IN_BATCH):
            out += await coll.find({"_id": {"$in": ids[i : i + _IN_BATCH]}}).to_list(None)
        return out


def _unchanged(doc: Document) -> Document:
    """A filter that matches the posting document only as it was read."""
    out: Document = {"_id": doc["_id"]}
    for key in ("t", "g", "ca", "cp", "cv"):
        out[key] = doc[key] if key in doc else {"$exists": False}
    return out


def parse_shard(doc: Document | None) -> dict[str, str]:
    """word -> id of a message holding it."""
    out: dict[str, str] = {}
    for line in str(doc.get("p", "") if doc else "").splitlines():
        word, _, message_id = line.partition("\t")
        out[word] = message_id
    return out


def shard_lookup(doc: Document | None, word: str) -> str:
    """The message id listed for `word`, without splitting the whole shard."""
    text = "\n" + str(doc.get("p", "") if doc else "")
    at = text.find(f"\n{word}\t")
    if at == -1:
        return ""
    start = at + len(word) + 2
    end = text.find("\n", start)
    return text[start : end if end != -1 else len(text)]
