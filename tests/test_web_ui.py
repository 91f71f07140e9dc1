"""The web client in a real Chromium against the real system and the scripted model: sign in,
chat with a streamed answer, answer a worker through an option button, suspend and resume
from the list, search, and a reload mid-stream that loses and doubles nothing."""

from __future__ import annotations

import re
import uuid
from typing import Any

import grpc
import httpx
from playwright.async_api import Page, WebSocketRoute, expect

from tests.browser_support import PHONE, sign_in
from tests.harness import System, eventually
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


def respond(message: str, **extra: Any) -> Rule:
    return Rule(tool_calls=[call("respond", message=message, **extra)])


class Network:
    """The page's WebSockets pass through Playwright, so a test can cut the connection as a
    network failure would, and refuse reconnects until it restores the network."""

    def __init__(self) -> None:
        self.routes: list[WebSocketRoute] = []
        self.down = False
        self.refused = 0

    @classmethod
    async def on(cls, page: Page) -> Network:
        net = cls()
        await page.route_web_socket(re.compile(r"/ws$"), net._route)
        return net

    async def _route(self, ws: WebSocketRoute) -> None:
        if self.down:
            self.refused += 1
            await ws.close(code=1011, reason="network down")
            return
        ws.connect_to_server()
        self.routes.append(ws)

    async def drop(self) -> None:
        self.down = True
        for ws in self.routes:
            await ws.close(code=1011, reason="network down")
        self.routes.clear()

    def restore(self) -> None:
        self.down = False


async def new_session(page: Page) -> str:
    """Creates a session in `demo` from the list; returns its id once Arthur greeted."""
    await page.get_by_label("Project", exact=True).fill("demo")
    await page.get_by_role("button", name="New session").click()
    await expect(page.get_by_test_id("log")).to_contain_text("Hi, I'm Arthur")
    await page.wait_for_url("**/#/s/*")
    return page.url.rsplit("/", 1)[-1]


async def say(page: Page, text: str) -> None:
    await page.get_by_label("Message").fill(text)
    await page.get_by_label("Message").press("Enter")


def assistant(page: Page, text: str) -> Any:
    return page.locator("article.msg.assistant:not(.streaming)", has_text=text)


async def test_sign_in_chat_and_streamed_markdown_answer(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(
        Rule(
            match_last=f"hello {m}",
            text=f"Here is **bold {m}** and a list:\n\n- one\n- two",
            chunks=5,
        )
    )
    await page.goto("/")
    # A wrong password is refused with a message, and nothing is stored.
    await page.get_by_label("Tenant").fill("default")
    await page.get_by_label("Username").fill("dev")
    await page.get_by_label("Password").fill("wrong")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("alert")).to_contain_text("wrong password")
    await sign_in(page)
    assert "token" not in page.url
    await new_session(page)
    await say(page, f"hello {m}")
    # The user's message once, then the answer rendered as Markdown (sanitised HTML).
    await expect(page.locator("article.msg.user", has_text=f"hello {m}")).to_have_count(1)
    answer = assistant(page, f"bold {m}")
    await expect(answer).to_have_count(1)
    await expect(answer.locator("strong")).to_have_text(f"bold {m}")
    await expect(answer.locator("li")).to_have_count(2)
    await expect(page.get_by_test_id("stream")).to_have_count(0)
    await expect(page.get_by_test_id("link")).to_have_text("connected")
    # Signing out forgets the token here and revokes it on the server.
    token = await page.evaluate("JSON.parse(localStorage.getItem('vance.auth')).token")
    await page.get_by_role("button", name="Sessions").click()
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("heading", name="Sign in to Vance")).to_be_visible()
    assert await page.evaluate("localStorage.getItem('vance.auth')") is None

    async def revoked() -> bool:
        async with httpx.AsyncClient() as http:
            r = await http.get(
                f"http://{system.gateway}/brain/default/sessions",
                headers={"authorization": f"Bearer {token}"},
            )
        return r.status_code == 401

    await eventually(revoked, what="the signed-out token refused")


async def test_markdown_is_sanitised(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(
        Rule(
            match_last=f"xss {m}",
            text=f'ok {m} <img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>',
        )
    )
    await sign_in(page)
    await new_session(page)
    await say(page, f"xss {m}")
    await expect(assistant(page, f"ok {m}")).to_have_count(1)
    assert await page.evaluate("window.__pwned === undefined")
    await expect(page.locator("article.msg script")).to_have_count(0)


async def test_worker_question_answered_with_an_option_button(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    goal = f"Compare two versions {m}"
    system.script(
        Rule(
            match_last=f"{m} delegate",
            tool_calls=[call("process_create", recipe="analyze", goal=goal, name="drafts")],
        ),
        Rule(
            match=m,
            match_last="drafts",
            tool_calls=[call("respond", message=f"Started {m}.", awaiting_user_input=False)],
        ),
        # The worker asks with options and blocks.
        Rule(
            match_last=goal,
            tool_calls=[
                call(
                    "respond",
                    message=f"Which draft is the baseline? ({m})",
                    awaiting_user_input=True,
                    options=[{"label": f"Draft A {m}"}, {"label": f"Draft B {m}"}],
                )
            ],
        ),
        # Arthur hears the question and tells the user.
        Rule(
            match_last="Which draft",
            tool_calls=[
                call("respond", message=f"drafts asks which ({m})", awaiting_user_input=False)
            ],
        ),
        # The answer reaches the worker, which finishes.
        Rule(
            match_last=f"Draft B {m}",
            tool_calls=[call("respond", message=f"Done with B {m}", awaiting_user_input=False)],
        ),
        Rule(
            match_last=f"Done with B {m}",
            tool_calls=[
                call("respond", message=f"drafts finished ({m})", awaiting_user_input=False)
            ],
        ),
    )
    await sign_in(page)
    await new_session(page)
    await say(page, f"{m} delegate")
    worker = page.locator("li.proc[data-process='drafts']")
    await expect(worker.locator("[data-role=status]")).to_have_text("BLOCKED", timeout=45_000)
    question = worker.get_by_role("group", name="drafts asks")
    await expect(question).to_contain_text(f"Which draft is the baseline? ({m})")
    await question.get_by_role("button", name=f"Draft B {m}").click()
    await expect(worker.locator("[data-role=status]")).to_have_text("CLOSED", timeout=45_000)
    await expect(assistant(page, f"drafts finished ({m})")).to_have_count(1)
    # The worker got the label as its answer, as a user message.
    requests = system.model_requests(f"Done with B {m}")
    assert requests, "the worker's answer turn never reached the model"


async def test_option_buttons_of_a_chat_answer_send_the_label(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(
        Rule(
            match_last=f"pick {m}",
            tool_calls=[
                call(
                    "respond",
                    message=f"Which colour? {m}",
                    awaiting_user_input=True,
                    options=[{"label": f"Red {m}"}, {"label": f"Blue {m}", "description": "calm"}],
                )
            ],
        ),
        Rule(match_last=f"Blue {m}", text=f"Blue it is {m}"),
    )
    await sign_in(page)
    await new_session(page)
    await say(page, f"pick {m}")
    asked = assistant(page, f"Which colour? {m}")
    await asked.get_by_role("button", name=f"Blue {m}").click()
    await expect(page.locator("article.msg.user", has_text=f"Blue {m}")).to_have_count(1)
    await expect(assistant(page, f"Blue it is {m}")).to_have_count(1)
    # Answered: the buttons of the old question no longer send.
    await expect(asked.get_by_role("button", name=f"Red {m}")).to_be_disabled()


async def test_suspend_then_extend_and_resume_from_the_list(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(Rule(match_last=f"keep {m}", text=f"Kept {m}"))
    await sign_in(page)
    sid = await new_session(page)
    await say(page, f"keep {m}")
    await expect(assistant(page, f"Kept {m}")).to_have_count(1)
    await page.get_by_role("button", name="Sessions").click()
    await system.sessions.SuspendSession(
        spb.SuspendSessionRequest(tenant_id="default", session_id=sid)
    )
    row = page.locator(f"li.session[data-session='{sid}']")
    await expect(row.locator("[data-role=status]")).to_have_text("SUSPENDED")
    await expect(row.get_by_test_id("suspended")).to_contain_text("Suspended (forced)")
    before = (
        await system.sessions.GetSession(spb.GetSessionRequest(tenant_id="default", session_id=sid))
    ).transition_at_ms
    await expect(row.get_by_test_id("countdown")).to_have_text(
        re.compile(r"^(\d+ d )?\d+:\d\d:\d\d$")
    )
    await row.get_by_role("button", name="Extend 1 h").click()

    async def extended() -> bool:
        s = await system.sessions.GetSession(
            spb.GetSessionRequest(tenant_id="default", session_id=sid)
        )
        return bool(s.transition_at_ms == before + 3_600_000)

    await eventually(extended, what="transitionAt one hour later")
    await row.get_by_role("button", name="Resume").click()
    await expect(row.locator("[data-role=status]")).to_have_text(re.compile("IDLE|RUNNING"))
    await expect(row.get_by_test_id("suspended")).to_have_count(0)
    # The engines were resumed too: opening the session shows the chat process idle.
    await row.get_by_role("button", name=re.compile("^Open")).click()
    await expect(page.locator("li.proc[data-process='chat'] [data-role=status]")).to_have_text(
        "IDLE"
    )


async def test_search_groups_rename_archive_reactivate_and_delete(
    system: System, page: Page
) -> None:
    m = uuid.uuid4().hex[:8]
    word = f"zebra{m}"
    system.script(Rule(match_last=word, text=f"Noted about the {word}."))
    await sign_in(page)
    sid = await new_session(page)
    await say(page, f"Tell me about the {word} please")
    await expect(assistant(page, f"Noted about the {word}")).to_have_count(1)
    await page.get_by_role("button", name="Sessions").click()
    row = page.locator(f"li.session[data-session='{sid}']")
    # Rename through the row's menu.
    await row.locator("summary").click()
    await row.get_by_role("button", name="Rename").click()
    await row.get_by_role("textbox", name="Title").fill(f"Stripes {m}")
    await row.get_by_role("button", name="Save").click()
    await expect(row.get_by_role("button", name=f"Open Stripes {m}")).to_be_visible()
    # The conversation is found, grouped under "conversation", with the word marked.
    await page.get_by_label("Search sessions").fill(word)
    conv = page.get_by_role("region", name="Matches in Conversation")
    hit = conv.locator(f"li.session[data-session='{sid}']")
    await expect(hit).to_be_visible()
    await expect(hit.locator("mark").first).to_have_text(re.compile(word, re.I))
    # A title match is grouped under "title".
    await page.get_by_label("Search sessions").fill(f"Stripes {m}")
    await expect(
        page.get_by_role("region", name="Matches in Title").locator(
            f"li.session[data-session='{sid}']"
        )
    ).to_be_visible()
    await page.get_by_label("Search sessions").fill("")
    # Archive: the row leaves the list; the `archived` chip shows it, greyed with Reactivate;
    # reactivate brings it back.
    await row.locator("summary").click()
    await row.get_by_role("button", name="Archive").click()
    await expect(row).to_have_count(0)
    archived_chip = page.get_by_role("group", name="Filter by status").get_by_role(
        "button", name="archived"
    )
    await archived_chip.click()
    await expect(row).to_have_class(re.compile("archived"))
    await row.get_by_role("button", name="Reactivate").click()
    await expect(row).to_have_count(0)  # no longer archived: gone from the archived list
    await archived_chip.click()
    await expect(row.locator("[data-role=status]")).to_have_text(re.compile("IDLE|RUNNING"))
    await expect(row).not_to_have_class(re.compile("archived"))
    # Delete only after the confirmation.
    await row.locator("summary").click()
    await row.get_by_role("button", name="Delete", exact=True).click()
    await expect(row.get_by_role("alertdialog")).to_contain_text("Delete")
    await row.get_by_role("button", name="Delete for good").click()
    await expect(row).to_have_count(0)

    # A delete archives first: the row may leave the list (archived sessions are not listed)
    # before the delete has finished.
    async def deleted() -> bool:
        try:
            await system.sessions.GetSession(
                spb.GetSessionRequest(tenant_id="default", session_id=sid)
            )
        except grpc.aio.AioRpcError:
            return True
        return False

    await eventually(deleted, what="the session deleted")


async def test_reload_mid_stream_loses_and_doubles_nothing(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    hold = f"hold-{m}"
    text = f"alpha{m} beta{m} gamma{m} delta{m}"
    system.script(Rule(match_last=f"stream {m}", text=text, chunks=4, hold=hold, hold_after=2))
    network = await Network.on(page)
    await sign_in(page)
    sid = await new_session(page)
    await say(page, f"stream {m}")
    stream = page.get_by_test_id("stream")
    await expect(stream).to_contain_text(f"beta{m}")
    await page.reload()
    # After the reload the session is resumed from the start: the running turn's chunks come
    # back from the replay window, once.
    await expect(page.get_by_test_id("link")).to_have_text("connected")
    await expect(stream).to_contain_text(f"beta{m}")
    assert (await stream.inner_text()).count(f"alpha{m}") == 1
    await expect(page.locator("article.msg.user", has_text=f"stream {m}")).to_have_count(1)
    system.llm.release(hold)
    await expect(assistant(page, f"delta{m}")).to_have_count(1)
    await expect(stream).to_have_count(0)
    await expect(page.locator("article.msg.user", has_text=f"stream {m}")).to_have_count(1)
    await expect(assistant(page, "Hi, I'm Arthur")).to_have_count(1)
    # A dropped network while a turn goes on: the client reconnects by itself and resumes
    # from the last seq it saw; what happened meanwhile shows once.
    hold2 = f"hold2-{m}"
    system.script(
        Rule(match_last=f"offline {m}", text=f"one{m} two{m} three{m}", chunks=3, hold=hold2)
    )
    await say(page, f"offline {m}")
    await expect(stream).to_contain_text(f"one{m}")
    await network.drop()
    await expect(page.get_by_test_id("link")).to_have_text("offline")
    system.llm.release(hold2)

    async def turn_ended() -> bool:
        listed = await system.processes.ListProcesses(ppb.ListProcessesRequest(session_id=sid))
        return all(p.status == pb.PROCESS_STATUS_IDLE for p in listed.processes)

    # The turn ended while the client was away (it keeps retrying meanwhile).
    await eventually(turn_ended, what="the chat idle again")
    await eventually(lambda: network.refused > 0, what="a refused reconnect")
    network.restore()
    await expect(page.get_by_test_id("link")).to_have_text("connected")
    await expect(assistant(page, f"three{m}")).to_have_count(1)
    assert (await assistant(page, f"three{m}").inner_text()).count(f"one{m}") == 1
    await expect(stream).to_have_count(0)
    await expect(page.locator("article.msg.user", has_text=f"offline {m}")).to_have_count(1)
    assert sid in page.url


async def test_escape_pauses_the_session_and_resume_goes_on(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    hold = f"hold-{m}"
    system.script(
        Rule(match_last=f"long {m}", text=f"one{m} two{m} three{m}", chunks=3, hold=hold),
        Rule(match_last=f"later {m}", text=f"Later done {m}"),
    )
    await sign_in(page)
    await new_session(page)
    chat = page.locator("li.proc[data-process='chat'] [data-role=status]")
    await say(page, f"long {m}")
    await expect(page.get_by_test_id("stream")).to_contain_text(f"one{m}")
    await expect(chat).to_have_text("RUNNING")
    # Esc pauses the session: the chat shows the pause is on its way; the running turn ends,
    # then the chat stays PAUSED.
    await page.keyboard.press("Escape")
    await expect(page.locator("li.proc[data-process='chat'] [data-role=pausing]")).to_be_visible()
    system.llm.release(hold)
    await expect(chat).to_have_text("PAUSED")
    await expect(assistant(page, f"three{m}")).to_have_count(1)
    # A message to a paused chat waits (deferred) until the user resumes it.
    await say(page, f"later {m}")
    await expect(page.get_by_test_id("pending")).to_contain_text("deferred")
    await (
        page.get_by_role("group", name="Session controls")
        .get_by_role("button", name="Resume")
        .click()
    )
    await expect(assistant(page, f"Later done {m}")).to_have_count(1)
    await expect(page.get_by_test_id("pending")).to_have_count(0)
    await expect(chat).to_have_text("IDLE")


async def test_phone_width_fits_without_sideways_scrolling(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(Rule(match_last=f"phone {m}", text=f"A long answer {m} " * 20))
    await page.set_viewport_size(PHONE)
    await sign_in(page)
    assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    await new_session(page)
    await say(page, f"phone {m}")
    await expect(assistant(page, f"A long answer {m}")).to_have_count(1)
    assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    for control in ("Send", "Pause", "Stop"):
        await expect(page.get_by_role("button", name=control, exact=True)).to_be_in_viewport()
    # The keyboard reaches the composer and sends from it.
    await page.get_by_label("Message").focus()
    await page.keyboard.type(f"phone {m} again")
    await page.keyboard.press("Enter")
    await expect(page.locator("article.msg.user", has_text=f"phone {m} again")).to_have_count(1)
