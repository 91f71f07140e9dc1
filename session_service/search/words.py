"""Per-session word lists of the search index as older indexers wrote them, and the indexer's
memory of the words each session has.

`search_session_words` held one document per session and first letter of the word
(`<session>:<letter>`): lines of `word<TAB>id of a message holding it`, and `<session>:` the
letters a session has documents for. The indexer no longer writes them: appending a page's new
words cost one statement per session and letter, the largest command of a page
(docs/architecture.md "Session metadata and search"). What they were for is now elsewhere: a
posting entry names the message holding its word (snippets), the indexed message copies give a
deleted session's words (indexer.py `purge`), and which words a session already has is this
replica's memory (KnownWords). Lists written before are still read for the snippets of entries
that name no message and by a hard delete, and deleted with their session.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from session_service.store.raw import Bson, Collection

_IN_BATCH = 500
# Words the indexer remembers across sessions (about 60 bytes each): the sessions being talked
# in stay known, so their words are not posted again.
KNOWN_WORDS = 200_000


class SessionWords:
    def __init__(self, coll: Collection) -> None:
        self.coll = coll

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

    async def delete(self, session_id: str, letters: Iterable[str]) -> None:
        ids = [self.shard_id(session_id, c) for c in sorted(set(letters))]
        ids.append(self.letters_id(session_id))
        for i in range(0, len(ids), _IN_BATCH):
            await self.coll.delete_many({"_id": {"$in": ids[i : i + _IN_BATCH]}})


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
    """The words this replica's indexer has posted for each session. A word remembered is in
    the session's posting list (lists only lose a session at its hard delete, which forgets it
    here), so skipping it is safe; a word not remembered (a session this replica has not
    indexed since its start, or dropped from this memory) is posted again, which adds a second
    entry for the session to the list's append array until its next compaction keeps one
    (store/packed_lists.py `compact`, keyed) and readers take the first. Sessions not used for
    longest are dropped past KNOWN_WORDS words."""

    def __init__(self, *, max_words: int = KNOWN_WORDS) -> None:
        self._max = max_words
        self._known: OrderedDict[str, set[str]] = OrderedDict()
        self._count = 0

    def new_words(self, found: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        """Of `found` (session -> word -> message), the words not posted for the session yet."""
        out: dict[str, dict[str, str]] = {}
        for sid, words in found.items():
            known = self._known.get(sid, ())
            new = {w: m for w, m in words.items() if w not in known}
            if new:
                out[sid] = new
        return out

    def learn(self, added: dict[str, dict[str, str]]) -> None:
        for sid, words in added.items():
            held = self._known.setdefault(sid, set())
            self._known.move_to_end(sid)
            before = len(held)
            held.update(words)
            self._count += len(held) - before
        while self._count > self._max and len(self._known) > 1:
            _, dropped = self._known.popitem(last=False)
            self._count -= len(dropped)

    def forget(self, session_id: str) -> None:
        self._count -= len(self._known.pop(session_id, ()))
