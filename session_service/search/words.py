"""Per-session word lists of the search index, and the indexer's memory of them.

`search_session_words` holds one document per session and first letter of the word
(`<session>:<letter>`): lines of `word<TAB>id of a message holding it`. They say which words a
session already has (so a session enters a posting list once), where a snippet for a word is,
and, at a hard delete, which posting lists to take the session off. `<session>:` lists the
letters a session has documents for.

A word list is a string (`p`) plus an array of appended strings (`a`): the indexer appends the
lines of words new to a session without reading the document, and folds the array into the
string every COMPACT_AT appends (a compare-and-set on `v`). A word may be listed twice (two
replicas indexing one page, or a word met again by an indexer that did not know the session):
readers take its first line.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from pymongo import UpdateOne

from session_service.store.packed_lists import Appends
from session_service.store.raw import Bson, Collection
from vance.store import is_duplicate_key

_IN_BATCH = 500
_APPEND_ATTEMPTS = 3
# Words the indexer remembers across sessions (about 60 bytes each): the sessions being talked
# in stay known, so a message costs no read of their word lists.
KNOWN_WORDS = 200_000


class SessionWords:
    def __init__(self, coll: Collection) -> None:
        self.coll = coll
        self._appends = Appends()

    @staticmethod
    def shard_id(session_id: str, word: str) -> str:
        return f"{session_id}:{word[0]}"

    @staticmethod
    def letters_id(session_id: str) -> str:
        """The document listing the first letters a session has word lists for."""
        return f"{session_id}:"

    async def letters(self, session_id: str) -> set[str]:
        doc = await self.coll.find_one({"_id": self.letters_id(session_id)})
        return set(doc.get("l") or []) if doc else set()

    async def shards(self, shard_ids: Iterable[str]) -> dict[str, Bson]:
        ids = sorted(set(shard_ids))
        out: dict[str, Bson] = {}
        for i in range(0, len(ids), _IN_BATCH):
            for d in await self.coll.find({"_id": {"$in": ids[i : i + _IN_BATCH]}}).to_list(None):
                out[str(d["_id"])] = d
        return out

    async def append(self, lines: dict[str, str], letters: dict[str, set[str]]) -> None:
        """Appends `lines` (shard id -> text) in one ordered bulk write whose first operations
        list the new letters (session -> letters), so a delete that finds a list also finds its
        letter. A list created concurrently by another writer fails the upsert once: retried."""
        if not lines:
            return
        ops = [
            UpdateOne(
                {"_id": self.letters_id(sid)},
                {"$addToSet": {"l": {"$each": sorted(ls)}}},
                upsert=True,
            )
            for sid, ls in letters.items()
            if ls
        ]
        ops += [UpdateOne({"_id": k}, {"$push": {"a": t}}, upsert=True) for k, t in lines.items()]
        for attempt in range(_APPEND_ATTEMPTS):
            try:
                await self.coll.bulk_write(ops, ordered=True)
                break
            except Exception as exc:
                if attempt + 1 == _APPEND_ATTEMPTS or not _duplicate(exc):
                    raise
                # The operations before the failed one are done; appending them again only
                # lists their words twice, which readers allow.
        for doc_id in self._appends.due(lines):
            await self._compact(doc_id)

    async def _compact(self, doc_id: str) -> None:
        doc = await self.coll.find_one({"_id": doc_id})
        if doc is None or not doc.get("a"):
            return
        moved = list(doc.get("a") or [])
        await self.coll.update_one(
            {"_id": doc_id, "v": doc.get("v")},
            {
                "$set": {
                    "p": str(doc.get("p") or "") + "".join(moved),
                    "v": int(doc.get("v") or 0) + 1,
                },
                "$pullAll": {"a": moved},
            },
        )

    async def delete(self, session_id: str, letters: Iterable[str]) -> None:
        ids = [self.shard_id(session_id, c) for c in sorted(set(letters))]
        ids.append(self.letters_id(session_id))
        for i in range(0, len(ids), _IN_BATCH):
            await self.coll.delete_many({"_id": {"$in": ids[i : i + _IN_BATCH]}})


def _duplicate(exc: BaseException) -> bool:
    return is_duplicate_key(exc) or "duplicate" in str(exc).lower()


def _texts(doc: Bson | None) -> list[str]:
    if not doc:
        return []
    return [str(doc.get("p") or ""), *(str(t) for t in doc.get("a") or [])]


def parse_shard(doc: Bson | None) -> dict[str, str]:
    """word -> id of a message holding it (the first line listing the word)."""
    out: dict[str, str] = {}
    for text in _texts(doc):
        for line in text.splitlines():
            word, _, message_id = line.partition("\t")
            if word:
                out.setdefault(word, message_id)
    return out


def shard_lookup(doc: Bson | None, word: str) -> str:
    """The message id listed for `word`, without splitting the whole list."""
    for body in _texts(doc):
        text = "\n" + body
        at = text.find(f"\n{word}\t")
        if at == -1:
            continue
        start = at + len(word) + 2
        end = text.find("\n", start)
        return text[start : end if end != -1 else len(text)]
    return ""


class KnownWords:
    """What this replica's indexer knows the word lists hold, per session and first letter:
    read from the store the first time a session's letter is met, then kept up to date by the
    indexer's own appends. Lists only grow while a session exists (a delete forgets it here),
    so a word remembered is listed: skipping it is safe, and a word another replica added
    meanwhile is only appended again. Sessions not used for longest are dropped past
    KNOWN_WORDS words."""

    def __init__(self, store: SessionWords, *, max_words: int = KNOWN_WORDS) -> None:
        self._store = store
        self._max = max_words
        self._known: OrderedDict[str, dict[str, set[str]]] = OrderedDict()
        self._count = 0

    async def new_words(self, found: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        """Of `found` (session -> word -> message), the words the session's lists lack; one
        read for the letters not known yet."""
        missing = [
            self._store.shard_id(sid, w)
            for sid, words in found.items()
            for w in words
            if w[0] not in self._known.get(sid, {})
        ]
        if missing:
            docs = await self._store.shards(missing)
            for shard in set(missing):
                sid, _, letter = shard.rpartition(":")
                self._add(sid, letter, set(parse_shard(docs.get(shard))))
        out: dict[str, dict[str, str]] = {}
        for sid, words in found.items():
            letters = self._known.get(sid, {})
            new = {w: m for w, m in words.items() if w not in letters.get(w[0], ())}
            if new:
                out[sid] = new
        self._trim()
        return out

    def learn(self, added: dict[str, dict[str, str]]) -> None:
        for sid, words in added.items():
            for w in words:
                self._add(sid, w[0], {w})
        self._trim()

    def has_words(self, session_id: str, letter: str) -> bool:
        """Whether the session's list for this letter is known to exist (its letter listed)."""
        return bool(self._known.get(session_id, {}).get(letter))

    def forget(self, session_id: str) -> None:
        letters = self._known.pop(session_id, {})
        self._count -= sum(len(ws) for ws in letters.values())

    def _add(self, sid: str, letter: str, words: set[str]) -> None:
        letters = self._known.setdefault(sid, {})
        self._known.move_to_end(sid)
        held = letters.setdefault(letter, set())
        before = len(held)
        held |= words
        self._count += len(held) - before

    def _trim(self) -> None:
        while self._count > self._max and len(self._known) > 1:
            _, letters = self._known.popitem(last=False)
            self._count -= sum(len(ws) for ws in letters.values())
