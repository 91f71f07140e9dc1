"""Who a search reaches and what it never shows: a search across projects is the tenant admin's
(anyone else's is scoped to their own sessions, in every project); CLOSED sessions are never
listed or found, whatever the filter; a replica that reuses the session documents of a page it
read (session_service/search/held.py) shows a change made through another replica at once; and
a search stage added through the seam (session_service/search/stage.py) is ranked, scoped and
filtered like the full-text one."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import grpc
import httpx
import pytest
from pymongo import AsyncMongoClient, monitoring

from session_service.access.actor import Actor
from session_service.domain.models import Session
from session_service.search.fulltext import FullTextStage
from session_service.search.held import HeldSessions
from session_service.search.index_store import SearchStore
from session_service.search.query import SessionFilter, SessionSearch
from session_service.search.stage import MessageSnippet, SearchStage, StageMatch
from session_service.store.session_store import SessionStore
from tests.harness import System, eventually
from tests.lifecycle_support import wait_status
from tests.sessions_support import (
    TENANT,
    ask,
    caller,
    chat_session,
    found,
    new_user,
    patch,
    search,
    word,
)
from vance.clock import SystemClock
from vance.store import Document, connect
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb


def api(system: System, token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=f"http://{system.gateway}/brain/{TENANT}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


async def hit_ids(system: System, query: str, who: spb.Caller, **filters: object) -> set[str]:
    return {h.session.session_id for h in (await search(system, query, who, **filters)).hits}


async def listed(system: System, who: spb.Caller, **filters: object) -> set[str]:
    resp = await system.sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id=TENANT, caller=who, **filters)  # type: ignore[arg-type]
    )
    return {s.session_id for s in resp.sessions}


async def test_only_a_tenant_admin_searches_across_everyones_projects(system: System) -> None:
    alice, alice_token = await new_user(system)
    bob, bob_token = await new_user(system)
    admin, admin_token = await new_user(system, admin=True)
    project = word()
    await system.sessions.CreateProject(
        spb.CreateProjectRequest(tenant_id=TENANT, project_id=project, title="Shared")
    )
    w = word()
    clients, ids = [], {}
    for who, token, where in (
        (alice, alice_token, "demo"),
        (alice, alice_token, project),
        (bob, bob_token, project),
    ):
        client, sid = await chat_session(system, token, project=where)
        clients.append(client)
        await patch(system, sid, caller(who), title=f"Plan {w}")
        ids[(who, where)] = sid
    alices = {ids[(alice, "demo")], ids[(alice, project)]}
    everyone = set(ids.values())

    # A user's search without a project spans their own sessions in every project, never
    # another user's, even in a project both work in.
    assert await hit_ids(system, w, caller(alice)) == alices
    assert await hit_ids(system, w, caller(alice), project_id=project) == {ids[(alice, project)]}
    assert await hit_ids(system, w, caller(bob)) == {ids[(bob, project)]}
    with pytest.raises(grpc.aio.AioRpcError) as denied:
        await search(system, w, caller(alice), owner_user_id=bob)
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # The tenant admin's is the cross-project search: everyone's sessions, any project.
    assert await hit_ids(system, w, caller(admin, admin=True)) == everyone
    assert await hit_ids(system, w, caller(admin, admin=True), project_id=project) == {
        ids[(alice, project)],
        ids[(bob, project)],
    }
    assert await hit_ids(system, w, caller(admin, admin=True), owner_user_id=bob) == {
        ids[(bob, project)]
    }
    # The same over REST, with the callers' own tokens.
    async with api(system, alice_token) as http:
        r = await http.get("/sessions/search", params={"q": w})
        assert {h["session"]["sessionId"] for h in r.json()["hits"]} == alices
        refused = await http.get("/sessions/search", params={"q": w, "ownerUserId": bob})
        assert refused.status_code == 403
        assert refused.json()["detail"]["reason"] == "owner_filter_denied"
    async with api(system, admin_token) as http:
        r = await http.get("/sessions/search", params={"q": w})
        assert {h["session"]["sessionId"] for h in r.json()["hits"]} == everyone
    for c in clients:
        await c.close()


async def test_a_closed_session_is_never_listed_or_found_whatever_the_filter(
    system: System,
) -> None:
    owner, token = await new_user(system)
    me = caller(owner)
    admin = caller("dev", admin=True)
    client = await system.connect(token)
    created = await client.ok(
        "session-create", {"projectId": "demo", "lifecycle": {"onDisconnect": "CLOSE"}}
    )
    sid = str(created["sessionId"])
    w = word()
    await patch(system, sid, me, title=f"Daemon {w}", tags=[w])
    await ask(system, client, f"Watch the {w} feed", f"Watching {w}.")

    async def everywhere() -> bool:
        hits = (await search(system, w, me)).hits
        return any(h.session.session_id == sid and h.conversation_match for h in hits)

    await eventually(everywhere, what="the title, tag and conversation indexed")
    assert sid in await listed(system, me)

    await client.close()  # a daemon-like session closes when its client leaves
    await wait_status(system, sid, "CLOSED")
    closed = [pb.SESSION_STATUS_CLOSED]
    every = [
        pb.SESSION_STATUS_INIT,
        pb.SESSION_STATUS_RUNNING,
        pb.SESSION_STATUS_IDLE,
        pb.SESSION_STATUS_SUSPENDED,
        pb.SESSION_STATUS_ARCHIVED,
        pb.SESSION_STATUS_CLOSED,
    ]
    for who in (me, admin):
        for filters in (
            {},
            {"statuses": closed},
            {"statuses": every},
            {"include_archived": True},
            {"tags": [w]},
            {"project_id": "demo", "statuses": closed},
        ):
            assert sid not in await hit_ids(system, w, who, **filters), filters
            assert sid not in await listed(system, who, **filters), filters
    async with api(system, token) as http:
        r = await http.get("/sessions", params={"status": "CLOSED"})
        assert r.status_code == 200 and r.json()["sessions"] == []
        r = await http.get("/sessions/search", params={"q": w, "status": "CLOSED"})
        assert r.status_code == 200 and r.json()["hits"] == []


class SessionReads(monitoring.CommandListener):
    """Counts the reads of session documents a client sends."""

    def __init__(self) -> None:
        self.count = 0

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if event.command_name == "find" and event.command.get("find") == "sessions":
            self.count += 1

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


async def test_a_replica_reuses_a_page_it_read_but_shows_changes_made_elsewhere_at_once(
    system: System,
) -> None:
    owner, token = await new_user(system)
    me = caller(owner)
    w, tag = word(), word()
    client = await system.connect(token)
    created = await client.ok(
        "session-create", {"projectId": "demo", "lifecycle": {"onDisconnect": "CLOSE"}}
    )
    sid = str(created["sessionId"])
    await patch(system, sid, me, title=f"Ledger {w}")
    reads = SessionReads()
    mongo: AsyncMongoClient[Document] = AsyncMongoClient(
        system.config.mongodb_uri, tz_aware=False, event_listeners=[reads]
    )
    db = mongo[system.config.store.db_name]
    # A second replica beside the running session_service (which makes every change below).
    # No clock slack: both read the same clock, so a card line written after this replica read
    # a document is always stamped after the read.
    index = SearchStore(db)
    searcher = SessionSearch(SessionStore(db), index, SystemClock(), held=HeldSessions(slack_ms=0))

    async def hits(query: str) -> list[tuple[str, str, list[str]]]:
        result = await searcher.search(TENANT, Actor(owner), query, SessionFilter(), limit=20)
        return [
            (h.session.session_id, h.session.metadata.title or "", list(h.session.metadata.tags))
            for h in result.hits
        ]

    async def reused(query: str, expected: list[tuple[str, str, list[str]]]) -> bool:
        before = reads.count
        assert await hits(query) == expected
        return reads.count == before

    try:
        await eventually(
            lambda: reused(f"{w} ", [(sid, f"Ledger {w}", [])]),
            what="a page served from the documents this replica read",
        )
        await patch(system, sid, me, title=f"Journal {w}")
        assert await hits(f"{w} ") == [(sid, f"Journal {w}", [])]
        await patch(system, sid, me, tags=[tag])
        assert await hits(f"{tag} ") == [(sid, f"Journal {w}", [tag])]
        await eventually(
            lambda: reused(f"{w} ", [(sid, f"Journal {w}", [tag])]),
            what="the new document reused in turn",
        )
        await client.close()  # onDisconnect CLOSE: closed by the service, not this replica
        await wait_status(system, sid, "CLOSED")
        assert await hits(f"{w} ") == []
        assert await hits(f"{tag} ") == []
    finally:
        await mongo.close()


class ChosenStage:
    """A second search stage, plugged in as a semantic one would be: it finds the sessions it
    was given for any query with words (as if they meant the same), scoring 7."""

    def __init__(self, chosen: set[str]) -> None:
        self.chosen = chosen

    async def find(self, tenant: str, query: str) -> ChosenFindings | None:
        return ChosenFindings(self.chosen) if query.strip() else None


class ChosenFindings:
    def __init__(self, chosen: set[str]) -> None:
        self._chosen = chosen

    def bounds(self, scope: Collection[str]) -> dict[str, int]:
        return {sid: 7 for sid in self._chosen if sid in scope}

    def check(self, session: Session) -> StageMatch | None:
        return StageMatch(7, frozenset())

    async def snippets(self, session_ids: Sequence[str]) -> dict[str, list[MessageSnippet]]:
        return {}


async def test_a_search_stage_added_through_the_seam_is_scoped_ranked_and_filtered(
    system: System,
) -> None:
    owner, token = await new_user(system)
    other, _ = await new_user(system)
    w = word()
    talk, by_words = await chat_session(system, token)
    await ask(system, talk, f"Where is the {w} file?", f"The {w} file is in the vault.")
    await found(system, w, caller(owner), by_words)
    chosen_client, chosen = await chat_session(system, token)
    mongo, db = connect(system.config)
    try:
        index = SearchStore(db)
        stages: list[SearchStage] = [FullTextStage(index), ChosenStage({chosen})]
        searcher = SessionSearch(SessionStore(db), index, SystemClock(), stages=stages)

        async def hits(actor: Actor, query: str, f: SessionFilter) -> list[tuple[str, int]]:
            result = await searcher.search(TENANT, actor, query, f, limit=20)
            return [(h.session.session_id, h.score) for h in result.hits]

        mine = Actor(owner)
        # Both stages' findings in one ranking, best first: the chosen session (7) above the
        # full-text conversation hit (1); where both stages match a session, scores add.
        assert await hits(mine, f"{w} ", SessionFilter()) == [(chosen, 7), (by_words, 1)]
        await patch(system, chosen, caller(owner), title=f"Vault {w}")
        assert await hits(mine, f"{w} ", SessionFilter()) == [(chosen, 17), (by_words, 1)]
        assert await hits(mine, f"{word()} ", SessionFilter()) == [(chosen, 7)]
        # The search, not the stage, applies who may see what and the filter.
        assert await hits(Actor(other), f"{w} ", SessionFilter()) == []
        assert await hits(mine, f"{w} ", SessionFilter(project_id=word())) == []
        await chosen_client.close()
        await system.sessions.ArchiveSession(
            spb.SessionOpRequest(tenant_id=TENANT, session_id=chosen, caller=caller(owner))
        )
        assert await hits(mine, f"{word()} ", SessionFilter()) == []
        archived = SessionFilter(include_archived=True)
        assert await hits(mine, f"{word()} ", archived) == [(chosen, 7)]
    finally:
        await mongo.close()
        await talk.close()
