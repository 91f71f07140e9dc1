"""Session metadata (seed 002 §14): normalisation, the user's patch, and the LLM auto-suggest
that only ever fills what no user has set."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from session_service.domain.models import AccentColor, Session, SessionMetadata, SessionStatus
from session_service.search.first_pair import SUGGEST_AT_ONCE, FirstPairs, next_cursor
from session_service.search.index_store import FirstPairCursor
from session_service.search.session_metadata import (
    Suggestion,
    normalize_color,
    normalize_icon,
    normalize_tags,
)
from session_service.search.suggest import TOOL_NAME, parse_suggestion
from session_service.store.session_store import SessionStore
from tests.harness import System, eventually
from tests.sessions_support import (
    SUGGEST,
    ask,
    caller,
    chat_session,
    found,
    get,
    new_user,
    patch,
    word,
)
from vance.domain import ChatMessage, ChatRole
from vance.errors import InvalidArgumentError
from vance.llm import ModelReply, ToolCall
from vance.store import connect
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as cpb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb


def test_tags_are_lowercased_trimmed_deduplicated_and_bounded() -> None:
    assert normalize_tags([" ML Ops ", "ml-ops", "Python", "", "  ", "C++", "Node.js"]) == [
        "ml-ops",
        "python",
        "c++",
        "node.js",
    ]
    with pytest.raises(InvalidArgumentError) as many:
        normalize_tags([f"t{i}" for i in range(21)])
    assert many.value.reason == "too_many_tags"
    with pytest.raises(InvalidArgumentError) as long:
        normalize_tags(["x" * 51])
    assert long.value.reason == "tag_too_long"
    with pytest.raises(InvalidArgumentError) as bad:
        normalize_tags(["no/slashes"])
    assert bad.value.reason == "bad_tag"


def test_colors_are_the_twelve_accent_colors_and_icons_are_emoji() -> None:
    assert normalize_color(" Teal ") is AccentColor.TEAL
    assert normalize_color("") is None
    with pytest.raises(InvalidArgumentError):
        normalize_color("magenta")
    assert normalize_icon("👨‍💻") == "👨‍💻"  # a ZWJ sequence is one icon
    assert normalize_icon("🇩🇪") == "🇩🇪"
    for bad in ("ab", "🔥 x", "🔥" * 9):
        with pytest.raises(InvalidArgumentError):
            normalize_icon(bad)


def test_a_suggestion_keeps_its_good_fields_and_drops_bad_ones() -> None:
    call = ToolCall(
        "c1", TOOL_NAME, {"title": ' "Tax return 2024" ', "icon": "no", "color": "teal"}
    )
    s = parse_suggestion(ModelReply(tool_calls=[call]))
    assert (s.title, s.icon, s.color) == ("Tax return 2024", None, AccentColor.TEAL)
    text = parse_suggestion(ModelReply(text='Sure: {"title": "Trip", "icon": "🧳", "color": "x"}'))
    assert (text.title, text.icon, text.color) == ("Trip", "🧳", None)
    assert parse_suggestion(ModelReply(text="I cannot")).title is None


def test_a_page_read_again_after_a_restart_does_not_answer_the_question_with_the_greeting() -> None:
    """The feed position is saved every few seconds, so a restarted indexer reads the greeting's
    and the question's page again with the question's cursor already stored: the greeting,
    written before the question, is not its answer; the answer written after it is."""
    session = Session(session_id="s1", tenant_id="t", project_id="p", owner_user_id="u")

    def msg(mid: str, role: ChatRole, content: str, at: int) -> ChatMessage:
        return ChatMessage(
            id=mid,
            session_id="s1",
            think_process_id="c1",
            role=role,
            content=content,
            created_at_ms=at,
        )

    greeting = msg("m1", ChatRole.ASSISTANT, "Hi, I'm Arthur.", 100)
    question = msg("m2", ChatRole.USER, "Where is the valve?", 200)
    answer = msg("m3", ChatRole.ASSISTANT, "Behind the panel.", 300)
    seen = next_cursor(session, FirstPairCursor(), [greeting, question])
    assert seen is not None and seen[1] is None
    stored = seen[0]
    assert (stored.first_user, stored.first_answer) == ("Where is the valve?", "")
    assert next_cursor(session, stored, [greeting]) is None
    assert next_cursor(session, stored, [greeting, question]) is None
    paired = next_cursor(session, stored, [greeting, question, answer])
    assert paired is not None
    assert (paired[0].first_answer, paired[1]) == ("Behind the panel.", 300)
    # An answer in the same millisecond as its question still pairs when it follows it.
    quick = msg("m3", ChatRole.ASSISTANT, "Behind the panel.", 200)
    assert next_cursor(session, FirstPairCursor(), [greeting, question, quick]) is not None


async def test_a_patch_normalises_stamps_user_touched_once_and_is_idempotent(
    system: System,
) -> None:
    owner, token = await new_user(system)
    client, sid = await chat_session(system, token)
    fresh = await get(system, sid)
    assert fresh.metadata.user_touched_at_ms == 0 and not fresh.metadata.pinned
    me = caller(owner)
    first = await patch(system, sid, me, title="  Tax   2024 ", color="Teal", tags=[" A ", "a"])
    assert first.metadata.title == "Tax 2024"
    assert first.metadata.color == spb.ACCENT_COLOR_TEAL
    assert list(first.metadata.tags) == ["a"]
    touched = first.metadata.user_touched_at_ms
    assert touched > 0
    again = await patch(system, sid, me, title="Tax 2024", color="teal", tags=["a"])
    assert again.metadata == first.metadata  # nothing changed, nothing written
    later = await patch(system, sid, me, pinned=True)
    assert later.metadata.pinned and later.metadata.user_touched_at_ms == touched
    cleared = await patch(system, sid, me, title="", color="", tags=[])
    assert cleared.metadata.title == "" and cleared.metadata.color == 0
    assert list(cleared.metadata.tags) == [] and cleared.metadata.pinned
    with pytest.raises(grpc.aio.AioRpcError) as bad:
        await patch(system, sid, me, color="magenta")
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    await client.close()


async def test_only_the_owner_or_a_tenant_admin_may_patch(system: System) -> None:
    owner, token = await new_user(system)
    other, _ = await new_user(system)
    client, sid = await chat_session(system, token)
    with pytest.raises(grpc.aio.AioRpcError) as denied:
        await patch(system, sid, caller(other), title="mine now")
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    by_admin = await patch(system, sid, caller("dev", admin=True), title="set by an admin")
    assert by_admin.metadata.title == "set by an admin"
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await patch(system, "sess_missing", caller(owner), title="x")
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    await client.close()


def suggestion(m: str, **fields: Any) -> Rule:
    return Rule(purpose=SUGGEST, match=m, tool_calls=[{"name": TOOL_NAME, "arguments": fields}])


async def test_the_first_answer_brings_a_suggested_title_icon_and_color(system: System) -> None:
    m = word()
    system.script(suggestion(m, title=f"Planning {m}", icon="🧭", color="indigo"))
    owner, token = await new_user(system)
    client, sid = await chat_session(system, token)
    await ask(system, client, f"How do I plan a route? {m}", f"Start with the map. {m}")

    async def suggested() -> spb.Session | None:
        s = await get(system, sid)
        return s if s.metadata.title else None

    s = await eventually(suggested, timeout=30, what="the suggested title")
    md = s.metadata
    assert (md.title, md.icon, md.color) == (f"Planning {m}", "🧭", spb.ACCENT_COLOR_INDIGO)
    assert md.title_auto_generated and md.user_touched_at_ms == 0  # not a user investment
    # The model saw the first question and its answer, asked once.
    asked = [r for r in system.llm.script.side_requests[SUGGEST] if m in str(r)]
    assert len(asked) == 1 and "Start with the map" in str(asked[0]["messages"])
    # A later answer asks no more; a manual title ends the auto-generated one for good.
    await ask(system, client, f"And then? {m}", f"Then walk. {m}")
    renamed = await patch(system, sid, caller(owner), title="My route")
    assert not renamed.metadata.title_auto_generated and renamed.metadata.user_touched_at_ms > 0
    assert len([r for r in system.llm.script.side_requests[SUGGEST] if m in str(r)]) == 1
    await client.close()


async def test_a_suggestion_never_overwrites_what_the_user_set(system: System) -> None:
    m = word()
    system.script(suggestion(m, title=f"Auto {m}", icon="🧪", color="teal"))
    owner, token = await new_user(system)
    client, sid = await chat_session(system, token)
    # Before the first answer the user names the session and clears the color on purpose.
    await patch(system, sid, caller(owner), title=f"Mine {m}", color="")
    await ask(system, client, f"Which reagent? {m}", f"Use the blue one. {m}")

    async def icon_filled() -> spb.Session | None:
        s = await get(system, sid)
        return s if s.metadata.icon else None

    s = await eventually(icon_filled, timeout=30, what="the suggested icon")
    assert s.metadata.icon == "🧪"  # empty and never set by the user: filled
    assert s.metadata.title == f"Mine {m}" and not s.metadata.title_auto_generated
    assert s.metadata.color == 0  # cleared by the user: stays cleared
    await client.close()


async def test_a_session_with_everything_set_asks_the_model_nothing(system: System) -> None:
    m = word()
    system.script(suggestion(m, title="unused", icon="🧪", color="teal"))
    owner, token = await new_user(system)
    client, sid = await chat_session(system, token)
    await patch(system, sid, caller(owner), title=f"Set {m}", icon="🎯", color="rose")
    await ask(system, client, f"Anything? {m}", f"Nothing. {m}")
    # Once a later answer is indexed, the pass that saw the first pair has finished.
    m2 = word()
    await ask(system, client, f"Still? {m2}", f"Still nothing. {m2}")
    await found(system, m2, caller(owner), sid)
    s = await get(system, sid)
    assert (s.metadata.title, s.metadata.icon) == (f"Set {m}", "🎯")
    assert s.metadata.color == spb.ACCENT_COLOR_ROSE
    assert not [r for r in system.llm.script.side_requests.get(SUGGEST, []) if m in str(r)]
    await client.close()


async def test_a_closed_session_keeps_its_metadata(system: System) -> None:
    owner, _ = await new_user(system)
    sid = f"sess_{word()}"
    mongo, db = connect(system.config)
    try:
        # A session the sweeper closed (seed 002 §9): only its document is needed here.
        closed = Session(
            session_id=sid,
            tenant_id="default",
            project_id="demo",
            owner_user_id=owner,
            status=SessionStatus.CLOSED,
        )
        await SessionStore(db).insert_session(closed)
    finally:
        await mongo.close()
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await patch(system, sid, caller(owner), title="too late")
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert ("vance-reason", "session_closed") in tuple(refused.value.trailing_metadata() or ())


async def test_a_first_pair_split_by_a_session_service_restart_still_brings_its_suggestion(
    own_system: System,
) -> None:
    """The question is indexed before session_service dies, its answer is stored while it is
    down: the restarted indexer finds the pair from what it stored before (the question's
    cursor, or the feed position from which it indexes the question's page again), and the
    suggestion sees both."""
    system = own_system
    m = word()
    system.script(suggestion(m, title=f"Split {m}", icon="🧭", color="teal"))
    question, answer = f"Where is the {m} valve?", f"Behind the {m} panel."
    # The answer is held mid-stream until session_service is down, so the question's page is
    # indexed on its own first and the answer's only after the restart.
    hold = f"split-{m}"
    system.script(Rule(match_last=question, text=answer, chunks=2, hold=hold))
    owner, token = await new_user(system)
    client, sid = await chat_session(system, token)
    chat = (await get(system, sid)).chat_process_id

    async def messages() -> list[cpb.ChatMessage]:
        listed = await system.processes.ListChatMessages(
            ppb.ListChatMessagesRequest(session_id=sid, process_id=chat)
        )
        return list(listed.messages)

    async def greeted() -> bool:
        return any(x.role == cpb.CHAT_ROLE_ASSISTANT for x in await messages())

    # Arthur's greeting first: a question sent while the start turn still runs is stored
    # before the greeting, which would then be the first assistant message after it.
    await eventually(greeted, timeout=60, what="Arthur's greeting")
    await client.ok("process-steer", {"content": question})
    await found(system, m, caller(owner), sid)
    system.supervisor.kill("session_service")
    system.llm.release(hold)

    async def answered() -> bool:
        return any(answer in x.content for x in await messages())

    await eventually(answered, timeout=120, what="the answer stored while session_service is down")
    await system.supervisor.restart_service("session_service")

    async def suggested() -> spb.Session | None:
        s = await get(system, sid)
        return s if s.metadata.title else None

    s = await eventually(suggested, timeout=120, what="the suggested title")
    assert s.metadata.title == f"Split {m}"
    asked = [r for r in system.llm.script.side_requests[SUGGEST] if m in str(r)]
    assert len(asked) == 1
    assert question in str(asked[0]["messages"]) and answer in str(asked[0]["messages"])
    await client.close()


class _HeldSuggester:
    """A model that answers a suggestion only when let go, counting the calls waiting at once."""

    def __init__(self) -> None:
        self.waiting = 0
        self.most = 0
        self.go = asyncio.Event()

    async def suggest(self, question: str, answer: str) -> Suggestion:
        self.waiting += 1
        self.most = max(self.most, self.waiting)
        try:
            await self.go.wait()
        finally:
            self.waiting -= 1
        return Suggestion(title=f"About {question}", icon=None, color=None)


class _Applied:
    """The stores a suggestion writes to, as far as FirstPairs uses them."""

    def __init__(self) -> None:
        self.titles: dict[str, str | None] = {}
        self.counted: list[str] = []

    async def cursor(self, process_id: str) -> FirstPairCursor:
        return FirstPairCursor(f"q {process_id}", "a", "m1", 1)

    async def apply_suggestion(self, session_id: str, s: Suggestion, *, known: Session) -> None:
        self.titles[session_id] = s.title

    async def count_suggestion(self, session_id: str, *, done: bool) -> None:
        self.counted.append(session_id)


async def test_first_pairs_met_together_suggest_a_few_at_a_time_and_every_one() -> None:
    """When many sessions reach their first pair together (800 clients starting at once), at
    most SUGGEST_AT_ONCE suggestions wait on the model at a time; every session still gets its
    title, a session met again while its suggestion waits starts no second one, and one archived
    while it waits gets none."""
    model, applied = _HeldSuggester(), _Applied()
    pairs = FirstPairs(
        sessions=applied,  # type: ignore[arg-type]
        index=applied,  # type: ignore[arg-type]
        metadata=applied,  # type: ignore[arg-type]
        suggester=model,  # type: ignore[arg-type]
    )
    sessions = [
        Session(
            session_id=f"s{i}",
            tenant_id="t",
            project_id="p",
            owner_user_id="u",
            chat_process_id=f"c{i}",
            metadata=SessionMetadata(first_qa_at_ms=1),
        )
        for i in range(3 * SUGGEST_AT_ONCE + 5)
    ]
    async with asyncio.TaskGroup() as background:
        for s in sessions + sessions[:10]:
            await pairs.suggest(s, background)
        await eventually(lambda: model.waiting == SUGGEST_AT_ONCE, what="the first suggestions")
        archived, kept = sessions[-2:], sessions[:-2]
        pairs.forget(s.chat_process_id for s in archived)
        model.go.set()
        await eventually(lambda: len(applied.titles) == len(kept), what="every suggestion")
    assert model.most == SUGGEST_AT_ONCE
    assert applied.titles == {s.session_id: f"About q c{s.session_id[1:]}" for s in kept}
    assert sorted(applied.counted) == sorted(s.session_id for s in kept)
