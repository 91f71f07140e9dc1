"""Round (k): what memory recall and RAG auto-inject add to a turn, and RAG query latency.

Three projects, one Arthur session each, TURNS turns one after the other: `plain` (no memory,
no RAG), `memory` (NOTES project notes, so every turn ranks them into `<project-memory>`) and
`rag` (rag.autoInject on, a corpus of RAG_DOCS uploaded documents, so every turn queries it).
The store commands of each run, per turn, less the plain run's, are what the feature adds.
Then RAG query latency over CORPUS_CHUNKS chunks in the system's store, queried through the
real index (process_service/knowledge/rag_index.py) in this process (keyword ranking; no
embedding model), the store round trips included. The corpus is written in bulk in the index's
shape (as round (e) loads the search index): 10,000 chunks through `RagIndex.put` took minutes
on a loaded two-core machine, beyond the whole benchmark's budget."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import httpx

from bench.errors import BenchError
from bench.scenarios import _until_idle, store_calls_per_turn, store_delta, store_snapshot
from bench.search import vocabulary
from bench.stats import Summary
from bench.system import BenchSystem
from bench.wsclient import assistant_says, reply_data, status_of_name
from process_service.knowledge.embeddings import Embedder
from process_service.knowledge.rag_index import RagIndex, project_corpus, term_counts
from vance.auth import ServiceCredential
from vance.authclient import authed_channel
from vance.clock import SystemClock
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.internal.v1 import session_internal_pb2_grpc
from vance.internal.v1 import worker_pb2 as wkpb
from vance.store import connect
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb
from vance.v1 import session_pb2_grpc

TURNS = 10
NOTES = 60
RAG_DOCS = 20
CORPUS_CHUNKS = 10_000
CHUNKS_PER_DOC = 100
QUERIES = 300
ASK = "knowbench"


def _text(rng: random.Random, words: list[str], cum: list[float], n: int) -> str:
    return " ".join(rng.choices(words, cum_weights=cum, k=n)).capitalize() + "."


def _corpus_words(rng: random.Random) -> tuple[list[str], list[float]]:
    words = vocabulary(20_000, rng)
    cum: list[float] = []
    total = 0.0
    for r in range(len(words)):
        total += 1 / (r + 1) ** 1.07
        cum.append(total)
    return words, cum


async def _turns(
    system: BenchSystem, project: str, rng: random.Random
) -> tuple[int, dict[str, Any]]:
    client = await system.client(f"know-{project}")
    try:
        idle = client.expect(status_of_name("chat", "IDLE"), "chat IDLE")
        created = await client.request("session-create", {"projectId": project}, 30)
        await client.wait(idle, 30)
        pid = str(created.get("chatProcessId") or "")
        words, cum = _corpus_words(rng)
        before: dict[str, dict[str, int]] = {}
        for n in range(TURNS + 3):
            if n == 3:  # after the warm-up turns (caches filled)
                await system.wait_quiet()
                before = store_snapshot(system)
            text = f"{ASK} {n} {_text(rng, words[:300], cum[:300], 8)}"
            fid = client.new_id()
            reply = client.expect_reply(fid, "process-steer")
            answer = client.expect(assistant_says(pid, f"You said: {text}"), f"answer {n}")
            await client.send(fid, "process-steer", {"processName": "chat", "content": text})
            frame, _ = await client.wait(reply, 30)
            reply_data(client.name, "process-steer", frame)
            await client.wait(answer, 60)
        await system.wait_quiet()
        await _until_idle(system)
        return TURNS, store_delta(before, store_snapshot(system))
    finally:
        await client.close()


def _total(per_turn: dict[str, float]) -> float:
    return sum(per_turn.values())


async def measure_knowledge(
    system: BenchSystem, log: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    rng = random.Random(11)
    words, cum = _corpus_words(rng)
    credential = ServiceCredential.from_config(system.cfg, "bench")
    projects = {name: f"know-{name}-{rng.randrange(10**6)}" for name in ("plain", "memory", "rag")}
    async with authed_channel(system.cfg.address("session_service"), credential) as ch:
        sessions = session_pb2_grpc.SessionServiceStub(ch)
        settings = session_internal_pb2_grpc.SessionInternalServiceStub(ch)
        for pid in projects.values():
            await sessions.CreateProject(
                spb.CreateProjectRequest(
                    tenant_id="default", project_id=pid, title=pid, kind=pb.PROJECT_KIND_NORMAL
                )
            )
        for key, value in (("rag.autoInject", "true"), ("rag.minScore", "0.1")):
            await settings.SetEngineSetting(
                sipb.SetEngineSettingRequest(
                    scope=sipb.SettingScope(tenant_id="default", project_id=projects["rag"]),
                    level=sipb.SETTING_LEVEL_PROJECT,
                    key=key,
                    value=value,
                )
            )
    # The memory project's notes, recorded by a process of it; the rag project's documents.
    client = await system.client("know-seed")
    try:
        created = await client.request("session-create", {"projectId": projects["memory"]}, 30)
    finally:
        await client.close()
    worker_service = system.worker_service
    for i in range(NOTES):
        await worker_service.RecordMemory(
            wkpb.RecordMemoryRequest(
                process_id=str(created["chatProcessId"]),
                scope=wkpb.MEMORY_SCOPE_PROJECT,
                content=_text(rng, words[:300], cum[:300], 20),
                title=f"note {i}",
            )
        )
    async with httpx.AsyncClient(timeout=60) as http:
        for i in range(RAG_DOCS):
            body = "\n\n".join(_text(rng, words, cum, 150) for _ in range(5))
            r = await http.post(
                f"http://{system.gateway}/brain/default/projects/{projects['rag']}/rag/documents",
                headers={"Authorization": f"Bearer {system.token}"},
                json={"name": f"doc{i}.md", "text": body},
            )
            if r.status_code != 200:
                raise BenchError(f"upload failed: {r.status_code} {r.text}")

    log(f"    seeded {NOTES} notes and {RAG_DOCS} documents")
    per_turn: dict[str, dict[str, float]] = {}
    for name, project in projects.items():
        turns, calls = await _turns(system, project, rng)
        per_turn[name] = store_calls_per_turn(calls, turns)
        log(f"    {name}: {_total(per_turn[name]):.2f} store commands per turn")
    plain = _total(per_turn["plain"])
    result: dict[str, Any] = {
        "turns": TURNS,
        "notes": NOTES,
        "rag_docs": RAG_DOCS,
        "per_turn": {k: round(_total(v), 2) for k, v in per_turn.items()},
        "added_memory": round(_total(per_turn["memory"]) - plain, 2),
        "added_rag": round(_total(per_turn["rag"]) - plain, 2),
        "rag_top": dict(list(per_turn["rag"].items())[:6]),
    }
    result["query"] = await _query_latency(system, rng, words, cum, log)
    return result


async def _query_latency(
    system: BenchSystem,
    rng: random.Random,
    words: list[str],
    cum: list[float],
    log: Callable[[str], None],
) -> dict[str, Any]:
    client, db = connect(system.cfg)
    try:
        index = RagIndex(db, Embedder(system.cfg.llm, None), SystemClock())
        corpus = project_corpus("default", f"know-corpus-{rng.randrange(10**6)}")
        t0 = time.monotonic()
        chunks = await _bulk_load(db, corpus, rng, words, cum)
        load_s = time.monotonic() - t0
        log(f"    {chunks} chunks written in {load_s:.1f} s")
        samples: list[float] = []
        hits = 0
        for _ in range(QUERIES):
            query = " ".join(rng.choices(words[:2000], cum_weights=cum[:2000], k=4))
            q0 = time.perf_counter()
            found, _ = await index.query(
                {corpus: "project"}, query, tenant="default", top_k=5, min_score=0.0
            )
            samples.append(time.perf_counter() - q0)
            hits += bool(found)
        s = Summary.of(samples)
        return {
            "chunks": chunks,
            "queries": QUERIES,
            "with_hits": hits,
            "load_s": round(load_s, 1),
            "p50_ms": round(s.p50_ms, 2),
            "p99_ms": round(s.p99_ms, 2),
            "max_ms": round(s.max_ms, 2),
        }
    finally:
        await client.close()


async def _bulk_load(
    db: Any, corpus: str, rng: random.Random, words: list[str], cum: list[float]
) -> int:
    """CORPUS_CHUNKS chunks of 100 words in documents of CHUNKS_PER_DOC, written in bulk in the
    shape RagIndex.put writes them (rag_index.py: records, chunks, posting lists, counts)."""
    postings: dict[str, list[dict[str, int]]] = {}
    chunk_docs: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    total_tokens = 0
    for d in range(1, CORPUS_CHUNKS // CHUNKS_PER_DOC + 1):
        doc_words: set[str] = set()
        doc_tokens = 0
        for i in range(1, CHUNKS_PER_DOC + 1):
            text = _text(rng, words, cum, 100)
            counts = term_counts(text)
            length = sum(counts.values())
            doc_tokens += length
            doc_words |= set(counts)
            for w, f in counts.items():
                postings.setdefault(w, []).append({"d": d, "i": i, "f": f, "l": length})
            chunk_docs.append(
                {
                    "_id": f"{corpus}#{d}.{i}",
                    "corpus": corpus,
                    "s": f"doc{d}.md",
                    "t": f"doc {d}",
                    "x": text,
                }
            )
        total_tokens += doc_tokens
        records.append(
            {
                "_id": RagIndex.doc_id(corpus, f"doc{d}.md"),
                "corpus": corpus,
                "no": d,
                "source": f"doc{d}.md",
                "title": f"doc {d}",
                "media_type": "text/markdown",
                "chunks": CHUNKS_PER_DOC,
                "tokens": doc_tokens,
                "words": sorted(doc_words),
            }
        )
    await db["rag_docs"].insert_many(records)
    for i in range(0, len(chunk_docs), 1_000):
        await db["rag_chunks"].insert_many(chunk_docs[i : i + 1_000])
    lists: list[dict[str, Any]] = [{"_id": f"{corpus}#{w}", "c": es} for w, es in postings.items()]
    lists.append(
        {
            "_id": f"{corpus}#",
            "n": len(chunk_docs),
            "tl": total_tokens,
            "v": 1,
            "docs": len(records),
        }
    )
    for i in range(0, len(lists), 1_000):
        await db["rag_postings"].insert_many(lists[i : i + 1_000])
    return len(chunk_docs)


def knowledge_section(k: dict[str, Any]) -> list[str]:
    q = k["query"]
    lines = [
        "## (k) Memory recall and RAG auto-inject: store work per turn, RAG query latency",
        "",
        f"{k['turns']} Arthur turns per project, one after the other; store commands per turn "
        "(all services), and what each feature adds over the plain project.",
        "",
        "| project | store commands / turn | added |",
        "|---|---:|---:|",
        f"| plain | {k['per_turn']['plain']} | - |",
        f"| memory ({k['notes']} notes, `<project-memory>` ranked) | {k['per_turn']['memory']} "
        f"| {k['added_memory']:+} |",
        f"| rag (autoInject, {k['rag_docs']} documents) | {k['per_turn']['rag']} "
        f"| {k['added_rag']:+} |",
        "",
        "RAG run's most frequent commands per turn: "
        + ", ".join(f"`{name}` {n:.2f}" for name, n in k["rag_top"].items()),
        "",
        f"RAG query over {q['chunks']:,} chunks (keyword BM25, top 5, {q['queries']} queries "
        f"of 4 Zipf words, {q['with_hits']} with hits; corpus bulk-written in {q['load_s']} s): "
        f"p50 {q['p50_ms']} ms, p99 **{q['p99_ms']} ms**, max {q['max_ms']} ms.",
        "",
    ]
    return lines
