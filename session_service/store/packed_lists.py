"""Large id lists of the search index, kept as one space-separated string, zlib-compressed,
plus a small array that takes appends: FerretDB decodes arrays element by element (a
10,000-element array reads ~20x slower than the same ids in one string) and spends its time on
a document in proportion to its bytes (~0.05 ms of CPU per KB), which the compression cuts
about 6x for these sorted, repetitive ids (a prefix search reads 32 lists); `$addToSet` on a
small array is one cheap write. A list is compacted into its string once its array has
collected `COMPACT_AT` entries. Lists written before the compression keep their plain string
(`<name>p`) until their next compaction or removal, which rewrites it compressed (`<name>z`).
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable

from bson import Binary

from session_service.store.raw import Bson, Collection

COMPACT_AT = 64


def packed_text(doc: Bson | None, name: str) -> str:
    """The string part of a packed list (or of a card document, session_cards.py)."""
    if not doc:
        return ""
    z = doc.get(f"{name}z")
    if z is not None:
        return zlib.decompress(bytes(z)).decode()
    return str(doc.get(f"{name}p") or "")


def text_fields(name: str, text: str) -> Bson:
    """The fields that store `text` as the string part (pair with `unset_plain`)."""
    return {f"{name}z": Binary(zlib.compress(text.encode()))}


def unset_plain(name: str) -> Bson:
    return {"$unset": {f"{name}p": ""}}


def packed(doc: Bson | None, name: str) -> set[str]:
    if not doc:
        return set()
    return set(packed_text(doc, name).split()) | set(doc.get(f"{name}a") or [])


def add_packed(name: str, values: Iterable[str]) -> Bson:
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


def entries(doc: Bson | None, name: str) -> dict[str, str]:
    """A list of `key/value` entries (conversation lists: `session/message`) as key -> value,
    one per key, the first with a value (entries added before values were kept have none:
    ""). Not through a set: a search parses thousands of entries per query."""
    out: dict[str, str] = {}
    if not doc:
        return out
    for e in (*packed_text(doc, name).split(), *(doc.get(f"{name}a") or [])):
        key, _, value = e.partition("/")
        if not out.get(key):
            out[key] = value
    return out


async def compact(coll: Collection, doc_id: str, name: str, *, keyed: bool = False) -> None:
    """Moves a list's appended entries into its string (one per key when `keyed`); a
    compare-and-set on the version, so a concurrent compaction makes this one a no-op, and
    appends in between survive."""
    doc = await coll.find_one({"_id": doc_id})
    if doc is None:
        return
    moved = list(doc.get(f"{name}a") or [])
    version = int(doc.get(f"{name}v") or 0)
    merged = (
        sorted(f"{k}/{v}" if v else k for k, v in entries(doc, name).items())
        if keyed
        else sorted(packed(doc, name))
    )
    await coll.update_one(
        {"_id": doc_id, f"{name}v": doc.get(f"{name}v")},
        {
            "$set": {**text_fields(name, " ".join(merged)), f"{name}v": version + 1},
            "$pullAll": {f"{name}a": moved},
            **unset_plain(name),
        },
    )


async def remove_packed(coll: Collection, doc_id: str, name: str, values: set[str]) -> None:
    """Removes values from a packed list: from its string by compare-and-set on the version
    (retried when a compaction moved it), and from its array."""
    for _ in range(8):
        doc = await coll.find_one({"_id": doc_id})
        if doc is None:
            return
        kept = set(packed_text(doc, name).split()) - values
        result = await coll.update_one(
            {"_id": doc_id, f"{name}v": doc.get(f"{name}v")},
            {
                "$set": {
                    **text_fields(name, " ".join(sorted(kept))),
                    f"{name}v": int(doc.get(f"{name}v") or 0) + 1,
                },
                "$pullAll": {f"{name}a": sorted(values)},
                **unset_plain(name),
            },
        )
        if result.matched_count:
            return
    raise RuntimeError(f"{coll.name} {doc_id}: kept changing while values were removed")
