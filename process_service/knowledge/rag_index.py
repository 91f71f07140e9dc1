"""The RAG index: documents of a corpus cut into chunks (rag_text.py), found by keyword with
BM25 over posting lists built like session search's (session_service/search/: the same tokens,
token-keyed documents read by `_id`), its term parts capped at 1 so a score is the weighed share
of the query's words a chunk holds (0..1), and, when the tenant has an embedding model
(embeddings.py), by cosine similarity too (hybrid: the mean of both scores).

A corpus is a project's uploaded files (`project_corpus`) or a user's own documents
(`user_corpus`, fed by the doc tools). Collections:
- `rag_docs`: one per document (`_id` corpus + source), with its number in the corpus, its
  chunk count and its words (so a replace or delete knows which posting lists to clean);
- `rag_chunks`: the chunk texts (`<corpus>#<doc number>.<ordinal>`) with their document's
  source and title, and the vector if any;
- `rag_postings`: per corpus and token the chunks holding it, `{d: doc number, i: ordinal,
  f: term count, l: chunk length}`; `<corpus>#` holds the corpus's counts (chunks, tokens,
  documents numbered, a version for the vector cache).
A query is one `_id $in` read of the query's posting lists and the counts, and one of the
winning chunks' texts. Vectors are held per corpus in memory (reloaded when the version moves),
since a similarity needs every vector of the corpus.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pymongo import ASCENDING, ReturnDocument, UpdateOne
from pymongo.asynchronous.database import AsyncDatabase

from process_service.knowledge.embeddings import Embedder, EmbeddingError
from process_service.knowledge.rag_text import chunks
from session_service.search.tokens import MAX_TOKEN_LEN, STOPWORDS, normalize, tokens
from vance.clock import Clock
from vance.store import Document

logger = logging.getLogger(__name__)

K1, B = 1.2, 0.75
VECTOR_WEIGHT = 0.5
MAX_QUERY_TERMS = 32
MAX_TOP_K = 50
_WORD = re.compile(r"\w+")


def project_corpus(tenant: str, project: str) -> str:
    return json.dumps(["j", tenant, project], ensure_ascii=False)


def user_corpus(tenant: str, user: str) -> str:
    return json.dumps(["u", tenant, user], ensure_ascii=False)


def term_counts(text: str) -> Counter[str]:
    return Counter(
        w
        for w in (m.group() for m in _WORD.finditer(normalize(text)))
        if len(w) <= MAX_TOKEN_LEN and w not in STOPWORDS
    )


@dataclass(frozen=True)
class Hit:
    source: str
    title: str
    text: str
    ordinal: int
    score: float
    keyword_score: float
    vector_score: float


@dataclass(frozen=True)
class RagDoc:
    """An indexed document (a `rag_docs` document, without its word list)."""

    source: str
    title: str
    media_type: str
    chunks: int
    size: int
    updated_at_ms: int
    added_by: str

    @classmethod
    def from_doc(cls, d: Document) -> RagDoc:
        return cls(
            source=str(d.get("source", "")),
            title=str(d.get("title", "")),
            media_type=str(d.get("media_type", "")),
            chunks=int(d.get("chunks", 0)),
            size=int(d.get("size", 0)),
            updated_at_ms=int(d.get("updated_at_ms", 0)),
            added_by=str(d.get("added_by", "")),
        )


@dataclass
class _Vectors:
    version: int
    ids: list[str]
    matrix: npt.NDArray[np.float32]  # one unit row per chunk


class RagIndex:
    def __init__(self, db: AsyncDatabase[Document], embedder: Embedder, clock: Clock) -> None:
        self._docs = db["rag_docs"]
        self._chunks = db["rag_chunks"]
        self._postings = db["rag_postings"]
        self._embedder = embedder
        self._clock = clock
        self._vectors: dict[str, _Vectors] = {}
        self._indexed = False

    @staticmethod
    def doc_id(corpus: str, source: str) -> str:
        return json.dumps([corpus, source], ensure_ascii=False)

    async def put(
        self,
        corpus: str,
        *,
        tenant: str,
        source: str,
        title: str,
        media_type: str,
        text: str,
        added_by: str = "",
    ) -> RagDoc:
        """Indexes a document, replacing the one of the same source."""
        pieces = chunks(text)
        vectors = await self._embed_chunks(tenant, title, pieces)
        await self.remove(corpus, source)
        counts = [term_counts(p) for p in pieces]
        stats = await self._postings.find_one_and_update(
            {"_id": f"{corpus}#"},
            {"$inc": {"docs": 1}},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        number = int((stats or {}).get("docs", 1))
        did = self.doc_id(corpus, source)
        doc: Document = {
            "_id": did,
            "corpus": corpus,
            "no": number,
            "source": source,
            "title": title or source,
            "media_type": media_type,
            "chunks": len(pieces),
            "tokens": sum(sum(c.values()) for c in counts),
            "size": len(text),
            "updated_at_ms": self._clock.now_ms(),
            "added_by": added_by,
            "words": sorted({w for c in counts for w in c}),
        }
        # The record first: whatever of the chunks and postings is written after it, a replace
        # or delete finds through it.
        await self._docs.replace_one({"_id": did}, doc, upsert=True)
        if pieces:
            await self._ensure_index()
            await self._chunks.insert_many(
                [
                    {
                        "_id": f"{corpus}#{number}.{i}",
                        "corpus": corpus,
                        "s": source,
                        "t": doc["title"],
                        "x": piece,
                        **({"e": vectors[i - 1]} if vectors else {}),
                    }
                    for i, piece in enumerate(pieces, 1)
                ]
            )
        entries: dict[str, list[dict[str, int]]] = {}
        for i, c in enumerate(counts, 1):
            length = sum(c.values())
            for word, f in c.items():
                entries.setdefault(word, []).append({"d": number, "i": i, "f": f, "l": length})
        ops = [
            UpdateOne({"_id": f"{corpus}#{w}"}, {"$push": {"c": {"$each": es}}}, upsert=True)
            for w, es in entries.items()
        ]
        ops.append(
            UpdateOne(
                {"_id": f"{corpus}#"},
                {"$inc": {"n": len(pieces), "tl": doc["tokens"], "v": 1}},
                upsert=True,
            )
        )
        await self._postings.bulk_write(ops, ordered=False)
        return RagDoc.from_doc(doc)

    async def _embed_chunks(self, tenant: str, title: str, pieces: list[str]) -> list[list[float]]:
        model = await self._embedder.model(tenant)
        if not model or not pieces:
            return []
        try:
            return await self._embedder.embed(model, [f"{title}\n{p}" for p in pieces])
        except EmbeddingError:
            # Found by keyword until it is indexed again; the upload itself is not lost.
            logger.warning("chunks of %r indexed without vectors", title, exc_info=True)
            return []

    async def remove(self, corpus: str, source: str) -> bool:
        doc = await self._docs.find_one_and_delete({"_id": self.doc_id(corpus, source)})
        if doc is None:
            return False
        number = int(doc.get("no", 0))
        ops = [
            UpdateOne({"_id": f"{corpus}#{w}"}, {"$pull": {"c": {"d": number}}})
            for w in doc.get("words") or []
        ]
        ops.append(
            UpdateOne(
                {"_id": f"{corpus}#"},
                {
                    "$inc": {
                        "n": -int(doc.get("chunks", 0)),
                        "tl": -int(doc.get("tokens", 0)),
                        "v": 1,
                    }
                },
            )
        )
        await self._postings.bulk_write(ops, ordered=False)
        ids = [f"{corpus}#{number}.{i}" for i in range(1, int(doc.get("chunks", 0)) + 1)]
        if ids:
            await self._chunks.delete_many({"_id": {"$in": ids}})
        return True

    async def listing(self, corpus: str) -> list[RagDoc]:
        await self._ensure_index()
        docs = await self._docs.find({"corpus": corpus}, {"words": 0}).to_list(None)
        return sorted((RagDoc.from_doc(d) for d in docs), key=lambda d: d.source)

    async def _ensure_index(self) -> None:
        # Listing and vector loading read by corpus; everything else by `_id`.
        if not self._indexed:
            await self._docs.create_index([("corpus", ASCENDING)], name="corpus")
            await self._chunks.create_index([("corpus", ASCENDING)], name="corpus")
            self._indexed = True

    async def query(
        self, corpora: dict[str, str], query: str, *, tenant: str, top_k: int, min_score: float
    ) -> tuple[list[Hit], bool]:
        """The best `top_k` chunks of the corpora (corpus -> the label its sources carry) scoring
        at least `min_score`, and whether vectors took part."""
        terms = tokens(query)[:MAX_QUERY_TERMS]
        if not terms:
            return [], False
        ids = [f"{c}#{t}" for c in corpora for t in terms] + [f"{c}#" for c in corpora]
        found = {
            str(d["_id"]): d for d in await self._postings.find({"_id": {"$in": ids}}).to_list(None)
        }
        keyword: dict[str, float] = {}
        versions: dict[str, int] = {}
        for corpus in corpora:
            stats = found.get(f"{corpus}#") or {}
            n = max(0, int(stats.get("n", 0)))
            versions[corpus] = int(stats.get("v", 0))
            if not n:
                continue
            avg = max(1.0, int(stats.get("tl", 0)) / n)
            lists = {t: (found.get(f"{corpus}#{t}") or {}).get("c") or [] for t in terms}
            # A word no chunk holds weighs as a rare one: it lowers every score alike, without
            # outweighing the words that match.
            idf = {
                t: math.log(1 + (n - max(1, len(es)) + 0.5) / (max(1, len(es)) + 0.5))
                for t, es in lists.items()
            }
            full = sum(idf.values()) or 1.0
            for t, es in lists.items():
                for e in es:
                    f, length = int(e.get("f", 0)), int(e.get("l", 0))
                    # BM25's term part, 1 for one occurrence in a chunk of average length, and
                    # at most 1: a score is the weighed share of the query's words a chunk holds.
                    part = min(1.0, f * (K1 + 1) / (f + K1 * (1 - B + B * length / avg)))
                    cid = f"{corpus}#{e.get('d')}.{e.get('i')}"
                    keyword[cid] = keyword.get(cid, 0.0) + idf[t] * part / full
        vector = await self._similar(corpora, versions, query, tenant, top_k)
        hybrid = vector is not None
        scores: dict[str, float] = {}
        for cid in set(keyword) | set(vector or {}):
            kw, vs = keyword.get(cid, 0.0), (vector or {}).get(cid, 0.0)
            scores[cid] = (1 - VECTOR_WEIGHT) * kw + VECTOR_WEIGHT * vs if hybrid else kw
        best = sorted(
            (cid for cid, s in scores.items() if s >= min_score and s > 0),
            key=lambda cid: (-scores[cid], cid),
        )[: min(top_k, MAX_TOP_K)]
        if not best:
            return [], hybrid
        texts = {
            str(d["_id"]): d
            for d in await self._chunks.find({"_id": {"$in": best}}, {"e": 0}).to_list(None)
        }
        hits = []
        for cid in best:
            chunk = texts.get(cid)
            if chunk is None:
                continue  # deleted since its posting was read
            corpus, _, place = cid.rpartition("#")
            hits.append(
                Hit(
                    source=f"{corpora.get(corpus, 'project')}:{chunk.get('s', '')}",
                    title=str(chunk.get("t", "")),
                    text=str(chunk.get("x", "")),
                    ordinal=int(place.partition(".")[2]),
                    score=round(scores[cid], 4),
                    keyword_score=round(keyword.get(cid, 0.0), 4),
                    vector_score=round((vector or {}).get(cid, 0.0), 4),
                )
            )
        return hits, hybrid

    async def _similar(
        self, corpora: dict[str, str], versions: dict[str, int], query: str, tenant: str, top_k: int
    ) -> dict[str, float] | None:
        """Cosine similarity (below 0 counted as 0) of the best chunks by vector; None when
        the tenant has no embedding model or the query could not be embedded."""
        model = await self._embedder.model(tenant)
        if not model:
            return None
        try:
            q = np.asarray((await self._embedder.embed(model, [query]))[0], dtype=np.float32)
        except EmbeddingError:
            logger.warning("query not embedded; keywords only", exc_info=True)
            return None
        out: dict[str, float] = {}
        for corpus in corpora:
            held = await self._held_vectors(corpus, versions.get(corpus, 0))
            if held is None or held.matrix.shape[1] != q.shape[0]:
                continue
            sims = held.matrix @ q
            take = min(len(held.ids), max(top_k * 4, 20))
            for j in np.argpartition(-sims, take - 1)[:take]:
                out[held.ids[int(j)]] = max(0.0, float(sims[int(j)]))
        return out

    async def _held_vectors(self, corpus: str, version: int) -> _Vectors | None:
        held = self._vectors.get(corpus)
        if held is None or held.version != version:
            await self._ensure_index()
            docs = await self._chunks.find(
                {"corpus": corpus, "e": {"$exists": True}}, {"e": 1}
            ).to_list(None)
            if not docs:
                self._vectors.pop(corpus, None)
                return None
            held = _Vectors(
                version,
                [str(d["_id"]) for d in docs],
                np.asarray([d["e"] for d in docs], dtype=np.float32),
            )
            self._vectors[corpus] = held
        return held
