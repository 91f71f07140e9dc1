"""Session search and listing (seed 002 §15): title, tags and conversation with snippets,
ranking, filters, the default order, and who sees what."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from session_service.search.index_store import SearchStore
from session_service.search.indexer import SearchIndexer
from session_service.search.session_metadata import Metadata
from session_service.store.session_store import SessionStore
from tests.harness import System, eventually
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
from vance.chat_ids import chat_message_id
from vance.clients.process import ChatFeedPage, ProcessClient
from vance.clock import SystemClock
from vance.domain import ChatMessage, ChatRole
from vance.store import connect
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb


async def list_ids(system: System, who: spb.Caller, **filters: Any) -> list[str]:
    resp = await system.sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id=TENANT, caller=who, **filters)
    )
    return [s.session_id for s in resp.sessions]


async def test_a_word_from_the_conversation_finds_the_session_with_a_snippet(
    system: System,
) -> None:
    owner, token = await new_user(system)
    client, sid = await chat_session(system, token)
    w = word()
    await ask(
        system,
        client,
        f"Please compare the {w} bearings with the old ones",
        f"The {w} bearings run cooler and last longer than the old ones.",
    )
    hit = await found(system, w, caller(owner), sid)
    assert hit.conversation_match and not hit.title_match
    texts = [s.text for s in hit.snippets]
    assert any(w in t for t in texts), texts
    first = next(s for s in hit.snippets if w in s.text)
    assert first.role in (pb.CHAT_ROLE_USER, pb.CHAT_ROLE_ASSISTANT)
    assert first.process_name == "chat" and first.message_id.startswith(hit.session.chat_process_id)
    assert [first.text[r.start : r.end] for r in first.highlights] == [w]
    # Typing the first letters is enough (the last word is a prefix), two words must both match.
    assert (await found(system, w[:6], caller(owner), sid)).conversation_match
    await found(system, f"{w} bearings", caller(owner), sid)
    both = await search(system, f"{w} unicorns ", caller(owner))
    assert sid not in [h.session.session_id for h in both.hits]
    await client.close()


async def test_a_title_match_outranks_a_conversation_match(system: System) -> None:
    owner, token = await new_user(system)
    me = caller(owner)
    w = word()
    talk, in_talk = await chat_session(system, token)
    await ask(system, talk, f"Tell me about {w}", f"{w} is a rare mineral.")
    titled, in_title = await chat_session(system, token)
    await patch(system, in_title, me, title=f"Notes on {w}")
    tagged, in_tags = await chat_session(system, token)
    await patch(system, in_tags, me, tags=[f"{w}-research"])
    await found(system, w, me, in_talk)

    hits = (await search(system, w, me)).hits
    order = [h.session.session_id for h in hits]
    assert order == [in_title, in_tags, in_talk], order
    assert hits[0].title_match and hits[0].score > hits[1].score > hits[2].score
    assert hits[1].tag_match and not hits[1].snippets
    # A renamed session leaves the title results at once.
    await patch(system, in_title, me, title="Something else")
    assert in_title not in [h.session.session_id for h in (await search(system, w, me)).hits]
    for c in (talk, titled, tagged):
        await c.close()


async def test_users_find_only_their_own_sessions_and_admins_find_all(system: System) -> None:
    owner, token = await new_user(system)
    other, _ = await new_user(system)
    w = word()
    client, sid = await chat_session(system, token)
    await patch(system, sid, caller(owner), title=f"Private {w}")
    hit = await found(system, w, caller("dev", admin=True), sid)
    assert hit.session.owner_user_id == owner
    assert (await search(system, w, caller(other))).hits == []
    assert sid not in await list_ids(system, caller(other))
    with pytest.raises(grpc.aio.AioRpcError) as denied:
        await search(system, w, caller(other), owner_user_id=owner)
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    admin_view = await list_ids(system, caller("dev", admin=True), owner_user_id=owner)
    assert admin_view == [sid]
    await client.close()


async def test_the_default_list_puts_pinned_first_then_recent_activity(system: System) -> None:
    owner, token = await new_user(system)
    me = caller(owner)
    clients, ids = [], []
    for _ in range(3):
        client, sid = await chat_session(system, token)
        clients.append(client)
        ids.append(sid)
    oldest, middle, newest = ids
    # Activity: a conversation in the oldest session makes it the most recent one.
    await ask(system, clients[0], f"wake up {word()}", "awake")

    async def oldest_first() -> bool:
        return (await list_ids(system, me))[0] == oldest

    await eventually(oldest_first, what="activity to reorder the list")
    await patch(system, newest, me, pinned=True)
    assert await list_ids(system, me) == [newest, oldest, middle]
    # Tags filter; both must be carried.
    await patch(system, middle, me, tags=["Red", "blue"])
    await patch(system, oldest, me, tags=["red"])
    assert await list_ids(system, me, tags=["red"]) == [oldest, middle]
    assert await list_ids(system, me, tags=["red", "blue"]) == [middle]
    assert await list_ids(system, me, limit=1) == [newest]
    for c in clients:
        await c.close()


async def test_archived_sessions_show_only_when_asked_and_projects_filter(system: System) -> None:
    owner, token = await new_user(system)
    me = caller(owner)
    project = word()
    await system.sessions.CreateProject(
        spb.CreateProjectRequest(tenant_id=TENANT, project_id=project, title="Other")
    )
    w = word()
    a, in_demo = await chat_session(system, token)
    b, in_other = await chat_session(system, token, project=project)
    for sid in (in_demo, in_other):
        await patch(system, sid, me, title=f"Report {w}")
    assert {h.session.session_id for h in (await search(system, w, me)).hits} == {
        in_demo,
        in_other,
    }
    only = await search(system, w, me, project_id=project)
    assert [h.session.session_id for h in only.hits] == [in_other]
    assert await list_ids(system, me, project_id=project) == [in_other]

    await b.close()
    await system.sessions.ArchiveSession(
        spb.SessionOpRequest(tenant_id=TENANT, session_id=in_other, caller=me)
    )
    assert [h.session.session_id for h in (await search(system, w, me)).hits] == [in_demo]
    assert await list_ids(system, me) == [in_demo]
    with_archived = await search(system, w, me, include_archived=True)
    archived = next(h for h in with_archived.hits if h.session.session_id == in_other)
    assert archived.session.status == pb.SESSION_STATUS_ARCHIVED
    assert set(await list_ids(system, me, include_archived=True)) == {in_demo, in_other}
    statuses = [pb.SESSION_STATUS_ARCHIVED]
    assert await list_ids(system, me, statuses=statuses) == [in_other]
    await a.close()


async def test_a_deleted_session_is_no_longer_found_and_its_text_is_gone(system: System) -> None:
    owner, token = await new_user(system)
    me = caller(owner)
    w = word()
    client, sid = await chat_session(system, token)
    await ask(system, client, f"Keep this between us: {w}", f"Noted, {w}.")
    hit = await found(system, w, me, sid)
    message_ids = [s.message_id for s in hit.snippets]
    await client.close()
    await system.sessions.DeleteSession(
        spb.SessionOpRequest(tenant_id=TENANT, session_id=sid, caller=me)
    )
    assert (await search(system, w, me)).hits == []
    assert sid not in await list_ids(system, me, include_archived=True)
    # The index kept copies of the conversation for snippets: a hard delete removes them.
    mongo, db = connect(system.config)
    try:
        assert await db["search_messages"].count_documents({"_id": {"$in": message_ids}}) == 0
        assert await db["search_session_words"].find_one({"_id": f"{sid}:{w[0]}"}) is None
    finally:
        await mongo.close()


async def test_a_page_indexed_after_its_sessions_delete_is_taken_out_again(system: System) -> None:
    """A second indexer beside the service's (as a replica's, or the service's own with a page
    still on its way when the delete's purge ran): it knows the session, so it indexes the
    late page without reading the session; its next look at the recent deletes takes out what
    that page wrote, and skips what comes after."""
    owner, token = await new_user(system)
    me = caller(owner)
    client, sid = await chat_session(system, token)
    asked = word()
    await ask(system, client, f"Log the {asked} valve", "Logged.")
    await client.close()
    await found(system, asked, me, sid)
    session = await system.sessions.GetSession(
        spb.GetSessionRequest(tenant_id=TENANT, session_id=sid)
    )
    mongo, db = connect(system.config)
    store, index, clock = SessionStore(db), SearchStore(db), SystemClock()
    indexer = SearchIndexer(
        sessions=store,
        index=index,
        metadata=Metadata(store, index, clock),
        processes=ProcessClient(system.channel("process_service")),
        suggester=None,
        clock=clock,
    )
    number = 1_000

    def page(text: str) -> ChatFeedPage:
        nonlocal number
        number += 1
        return ChatFeedPage(
            position=number,
            messages=[
                ChatMessage(
                    id=chat_message_id(session.chat_process_id, number),
                    session_id=sid,
                    think_process_id=session.chat_process_id,
                    process_name="chat",
                    role=ChatRole.ASSISTANT,
                    content=text,
                    created_at_ms=clock.now_ms(),
                )
            ],
        )

    async def posted(w: str) -> bool:
        return await db["search_postings"].find_one({"_id": f"{TENANT}:{w}"}) is not None

    async def first_pair_seen() -> bool:
        doc = await db["sessions"].find_one({"_id": sid})
        return bool(doc and doc.get("metadata", {}).get("first_qa_at_ms"))

    try:
        await eventually(first_pair_seen, what="the service's indexer saw the first pair")
        seen, late, later = word(), word(), word()
        await indexer.index_page(page(f"Seen: {seen}"))  # reads the session: settled
        assert await posted(seen)
        await system.sessions.DeleteSession(
            spb.SessionOpRequest(tenant_id=TENANT, session_id=sid, caller=me)
        )
        assert not await posted(asked)  # the delete's own purge
        late_page = page(f"Late: {late}")
        await indexer.index_page(late_page)
        assert await posted(late)  # written: the indexer did not read the session again
        await indexer.sweep_deleted()
        assert not await posted(late) and not await posted(seen)
        copy = late_page.messages[0].id
        assert await db["search_messages"].find_one({"_id": copy}) is None
        await indexer.index_page(page(f"Later: {later}"))
        assert not await posted(later)
    finally:
        await mongo.close()
