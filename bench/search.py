"""Session search latency at 100,000 chat messages: the index is written by session_service's
own indexer (the chat feed's pages, as in the service), then queries go through the real path
(SessionService SearchSessions over gRPC, or the same domain code in-process without a running
service).

`python -m bench.search [messages] [--grpc]` runs it against the configured store;
`python -m bench.search [messages] --system` starts a system of its own (as `make bench`)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import grpc
from pymongo import AsyncMongoClient, monitoring

from bench.stats import Summary
from bench.system import BenchSystem, make_tmp
from session_service.access.actor import Actor
from session_service.domain.models import Session, SessionMetadata, SessionStatus
from session_service.search.index_store import SearchStore
from session_service.search.indexer import SearchIndexer
from session_service.search.query import SessionFilter, SessionSearch
from session_service.search.session_metadata import Metadata
from session_service.search.tokens import STOPWORDS
from session_service.store.session_store import SessionStore
from vance.auth import ServiceCredential
from vance.authclient import authed_channel
from vance.chat_ids import chat_message_id
from vance.clients.process import ChatFeedPage, ProcessClient
from vance.clock import SystemClock
from vance.config import Config
from vance.domain import ChatMessage, ChatRole
from vance.store import Document, connect
from vance.v1 import session_pb2 as spb
from vance.v1 import session_pb2_grpc

_SYLLABLES = "ka lo mi nu pe ra si to ve xi bar cor den fal gim hus jor kel mun nor".split()


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """Distinct made-up words, most frequent first (Zipf ranks)."""
    words: dict[str, None] = {}
    while len(words) < size:
        w = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if w not in STOPWORDS:
            words.setdefault(w, None)
    return list(words)


class Corpus:
    def __init__(self, *, sessions: int, messages: int, owners: int, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(20_000, self.rng)
        weights = [1 / (r + 1) ** 1.07 for r in range(len(self.words))]
        self.cum = list(_accumulate(weights))
        self.sessions = sessions
        self.per_session = messages // sessions
        self.owners = owners

    def text(self, n_words: int) -> str:
        picked = self.rng.choices(self.words, cum_weights=self.cum, k=n_words)
        return " ".join(picked).capitalize() + "."


def _accumulate(values: list[float]) -> list[float]:
    out, total = [], 0.0
    for v in values:
        total += v
        out.append(total)
    return out


def _indexer(store: SessionStore, index: SearchStore, clock: SystemClock) -> SearchIndexer:
    """session_service's indexer as session_service builds it (session_service/search/
    wiring.py), without the model's suggestions: the processes client is never called."""
    return SearchIndexer(
        sessions=store,
        index=index,
        metadata=Metadata(store, index, clock),
        processes=ProcessClient(grpc.aio.insecure_channel("unused:1")),
        suggester=None,
        clock=clock,
    )


# Sessions whose messages share a chat feed page while seeding, and messages per page: pages
# as a busy feed gathers them (the indexer's writes are per page).
_SEED_GROUP = 25
_SEED_PAGE = 500


async def seed(config: Config, tenant: str, corpus: Corpus) -> dict[str, Any]:
    """Writes sessions through session_service's store, their titles and tags through its
    metadata index, and their chat messages through its search indexer (pages of the chat feed,
    as process_service serves them), so the index searched is the one the service writes;
    returns what a query mix needs (owners, title words)."""
    client, db = connect(config)
    store, index, clock = SessionStore(db), SearchStore(db), SystemClock()
    indexer = _indexer(store, index, clock)
    metadata = Metadata(store, index, clock)
    t0 = time.monotonic()
    project = "bench"
    await db["projects"].update_one(
        {"_id": f"{tenant}:{project}"},
        {"$set": {"tenant_id": tenant, "project_id": project, "title": "Bench", "kind": "NORMAL"}},
        upsert=True,
    )
    owners: dict[str, list[str]] = {}
    titles: list[str] = []
    now = int(time.time() * 1000)
    sessions: list[Session] = []
    for i in range(corpus.sessions):
        sid = f"sess_bench{i:06d}"
        owner = f"user{i % corpus.owners}"
        owners.setdefault(owner, []).append(sid)
        title = corpus.text(4).rstrip(".")
        titles.append(title)
        s = Session(
            session_id=sid,
            tenant_id=tenant,
            project_id=project,
            owner_user_id=owner,
            status=SessionStatus.ARCHIVED if i % 7 == 3 else SessionStatus.IDLE,
            chat_process_id=f"proc_bench{i:06d}",
            created_at_ms=now - i * 60_000,
            last_activity_at_ms=now - corpus.rng.randint(0, 10**8),
            metadata=SessionMetadata(title=title, pinned=i % 97 == 0, tags=[f"t{i % 13}"]),
        )
        await store.insert_session(s)
        await metadata.reindex(SessionMetadata(), s)
        sessions.append(s)
    position = messages = 0
    for g in range(0, len(sessions), _SEED_GROUP):
        group: list[ChatMessage] = []
        for s in sessions[g : g + _SEED_GROUP]:
            for n in range(1, corpus.per_session + 1):
                group.append(
                    ChatMessage(
                        id=chat_message_id(s.chat_process_id, n),
                        session_id=s.session_id,
                        think_process_id=s.chat_process_id,
                        process_name="chat",
                        role=ChatRole.USER if n % 2 else ChatRole.ASSISTANT,
                        content=corpus.text(corpus.rng.randint(5, 60)),
                        created_at_ms=now,
                    )
                )
        for k in range(0, len(group), _SEED_PAGE):
            position += 1
            await indexer.index_page(
                ChatFeedPage(position=position, messages=group[k : k + _SEED_PAGE])
            )
        messages += len(group)
    postings = await index.postings.count_documents({"_id": {"$regex": f"^{tenant}:"}})
    await client.close()
    return {
        "owners": sorted(owners),
        "titles": titles,
        "seed_s": time.monotonic() - t0,
        "messages": messages,
        "postings": postings,
    }


def query_mix(corpus: Corpus, titles: list[str], count: int) -> list[tuple[str, str]]:
    """(kind, query): rare, medium and common words, two words, a typed prefix, a title word."""
    rng = random.Random(11)
    w = corpus.words
    kinds: list[tuple[str, Callable[[], str]]] = [
        ("rare word", lambda: rng.choice(w[3000:20000])),
        ("medium word", lambda: rng.choice(w[200:3000])),
        ("common word", lambda: rng.choice(w[5:200])),
        ("two words", lambda: f"{rng.choice(w[50:2000])} {rng.choice(w[200:5000])}"),
        ("prefix", lambda: rng.choice(w[100:5000])[:4]),
        ("title word", lambda: rng.choice(rng.choice(titles).split())),
    ]
    return [(kinds[i % len(kinds)][0], kinds[i % len(kinds)][1]()) for i in range(count)]


SearchFn = Callable[[str, Actor, str], Awaitable[int]]


async def run_search_bench(
    config: Config,
    *,
    messages: int = 100_000,
    sessions: int = 1_000,
    owners: int = 10,
    queries: int = 300,
    through: Literal["grpc", "in-process"] = "grpc",
    tenant: str = "benchsearch",
) -> dict[str, Any]:
    """Seeds `messages` messages over `sessions` sessions of `owners` users, then times
    `queries` searches as a user (their own sessions) and as the tenant admin (all sessions),
    through SessionService.SearchSessions of the running system (`grpc`) or the same domain
    code in this process (`in-process`, no service needed); and the feed's indexing cost
    per message. Returns milliseconds."""
    corpus = Corpus(sessions=sessions, messages=messages, owners=owners)
    seeded = await seed(config, tenant, corpus)
    client, db = connect(config)
    channel = authed_channel(
        config.address("session_service"), ServiceCredential.from_config(config, "bench")
    )
    try:
        if through == "grpc":
            search = _over_grpc(session_pb2_grpc.SessionServiceStub(channel))
        else:
            search = _in_process(SessionSearch(SessionStore(db), SearchStore(db), SystemClock()))
        mix = query_mix(corpus, seeded["titles"], queries)
        results: dict[str, Any] = {
            "messages": seeded["messages"],
            "sessions": sessions,
            "postings": seeded["postings"],
            "seed_s": round(seeded["seed_s"], 1),
            "through": through,
        }
        for scope, actor in (
            ("user", Actor(seeded["owners"][0])),
            ("admin", Actor("admin", is_admin=True)),
        ):
            results[scope] = await _time_queries(search, tenant, actor, mix)
        cost = await _time_indexing(config, tenant, corpus)
        results["index_per_message_ms"] = cost["single_wall_ms"]
        results["index_cpu_per_message_ms"] = cost["single_cpu_ms"]
        results["index_commands_per_message"] = cost["single_commands"]
        results["index_batched_per_message_ms"] = cost["batched_wall_ms"]
        results["index_batched_cpu_per_message_ms"] = cost["batched_cpu_ms"]
        results["index_batched_commands_per_message"] = cost["batched_commands"]
        return results
    finally:
        await channel.close()
        await client.close()


async def run_on_own_system(messages: int = 100_000) -> dict[str, Any]:
    """Section (e) of `make bench` alone: a fresh system, then `run_search_bench` over gRPC."""
    system = BenchSystem(make_tmp(), workers=1)
    try:
        await system.start()
        return await run_search_bench(
            system.cfg, messages=messages, sessions=max(10, messages // 100)
        )
    finally:
        await system.stop()


async def _time_queries(
    search: SearchFn, tenant: str, actor: Actor, mix: list[tuple[str, str]]
) -> dict[str, Any]:
    by_kind: dict[str, list[float]] = {}
    every: list[float] = []
    hits = 0
    for kind, q in mix:
        t = time.perf_counter()
        hits += await search(tenant, actor, q)
        dt = time.perf_counter() - t
        by_kind.setdefault(kind, []).append(dt)
        every.append(dt)
    s = Summary.of(every)
    return {
        "p50_ms": round(s.p50_ms, 1),
        "p99_ms": round(s.p99_ms, 1),
        "max_ms": round(s.max_ms, 1),
        "mean_hits": round(hits / len(mix), 1),
        "by_kind_p50_ms": {k: round(Summary.of(v).p50_ms, 1) for k, v in by_kind.items()},
        "by_kind_p99_ms": {k: round(Summary.of(v).p99_ms, 1) for k, v in by_kind.items()},
    }


class _Commands(monitoring.CommandListener):
    """Counts the store commands the indexer sends."""

    def __init__(self) -> None:
        self.count = 0

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.count += 1

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


async def _time_indexing(
    config: Config, tenant: str, corpus: Corpus, count: int = 200
) -> dict[str, float]:
    """The indexer's path (sessions, message copies, posting lists, vocabulary, word lists,
    first pair, cards) for new chat messages of fresh sessions in the seeded tenant, a
    conversation alternating question and answer: one message per chat feed page (a quiet
    system writes every message as its own page), then pages of 32 messages over 8 sessions
    (a busy one gathers many turns into a page). Wall and CPU milliseconds and store commands
    per message; the CPU is the indexer's own (this process, as in session_service), not the
    store's."""
    commands = _Commands()
    client: AsyncMongoClient[Document] = AsyncMongoClient(
        config.mongodb_uri, tz_aware=False, event_listeners=[commands]
    )
    db = client[config.store.db_name]
    store, index, clock = SessionStore(db), SearchStore(db), SystemClock()
    indexer = _indexer(store, index, clock)
    out: dict[str, float] = {}
    try:
        for name, sessions, per_page in (("single", 1, 1), ("batched", 8, 32)):
            chats = []
            for k in range(sessions):
                s = Session(
                    session_id=f"sess_benchidx{time.time_ns()}{k}",
                    tenant_id=tenant,
                    project_id="bench",
                    owner_user_id="user0",
                    chat_process_id=f"proc_benchidx{time.time_ns()}{k}",
                )
                await store.insert_session(s)
                chats.append(s)
            elapsed = cpu = 0.0
            sent = commands.count
            for page in range(count // per_page):
                msgs = []
                for i in range(per_page):
                    n = page * per_page + i
                    s = chats[n % sessions]
                    number = n // sessions + 1
                    msgs.append(
                        ChatMessage(
                            id=chat_message_id(s.chat_process_id, number),
                            session_id=s.session_id,
                            think_process_id=s.chat_process_id,
                            process_name="chat",
                            role=ChatRole.USER if number % 2 else ChatRole.ASSISTANT,
                            content=corpus.text(corpus.rng.randint(5, 60)),
                            created_at_ms=n + 1,
                        )
                    )
                t, c = time.perf_counter(), time.process_time()
                await indexer.index_page(ChatFeedPage(position=page + 1, messages=msgs))
                elapsed += time.perf_counter() - t
                cpu += time.process_time() - c
            done = count // per_page * per_page
            out[f"{name}_wall_ms"] = round(elapsed / done * 1000, 2)
            out[f"{name}_cpu_ms"] = round(cpu / done * 1000, 2)
            out[f"{name}_commands"] = round((commands.count - sent) / done, 2)
    finally:
        await client.close()
    return out


def _over_grpc(stub: session_pb2_grpc.SessionServiceAsyncStub) -> SearchFn:
    async def search(tenant: str, actor: Actor, query: str) -> int:
        resp = await stub.SearchSessions(
            spb.SearchSessionsRequest(
                tenant_id=tenant,
                caller=spb.Caller(user_id=actor.user_id, roles=["admin"] if actor.is_admin else []),
                query=query,
                limit=20,
            )
        )
        return len(resp.hits)

    return search


def _in_process(searcher: SessionSearch) -> SearchFn:
    async def search(tenant: str, actor: Actor, query: str) -> int:
        result = await searcher.search(tenant, actor, query, SessionFilter(), limit=20)
        return len(result.hits)

    return search


if __name__ == "__main__":
    import json
    import sys

    from vance.config import load_config

    n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 100_000
    how: Literal["grpc", "in-process"] = "grpc" if "--grpc" in sys.argv else "in-process"
    if "--system" in sys.argv:
        # A system of its own (bench/system.py), as `make bench` runs this section.
        report = asyncio.run(run_on_own_system(messages=n))
    else:
        report = asyncio.run(
            run_search_bench(load_config(), messages=n, sessions=max(10, n // 100), through=how)
        )
    print(json.dumps(report, indent=1))
