"""The web client's remaining gaps (issue 27 items 9 and 11) in a real Chromium: a message
typed before the new session's id arrived is sent once it has, and the session list shows a
SUSPENDED session's card (FORCED accent, since when, its engines), falls back to the first user
message as the title, hides archived sessions unless asked, and filters by tag."""

from __future__ import annotations

import re
import uuid
from typing import Any

from playwright.async_api import Page, WebSocketRoute, expect

from tests.browser_support import sign_in
from tests.harness import System, eventually
from tests.sessions_support import SUGGEST, new_user
from vance.testing.scripted_llm import Rule
from vance.v1 import session_pb2 as spb


class HeldCreate:
    """Holds the page's `session-create` frame until the test lets it through, as a slow
    server would: the page has no session id meanwhile."""

    def __init__(self) -> None:
        self.held: list[tuple[Any, str | bytes]] = []
        self.release = False

    async def route(self, ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            if not self.release and '"session-create"' in str(message):
                self.held.append((server, message))
                return
            server.send(message)

        ws.on_message(from_page)

    def let_through(self) -> None:
        self.release = True
        for server, message in self.held:
            server.send(message)
        self.held.clear()


async def test_enter_before_the_session_id_arrived_sends_once_it_has(
    system: System, page: Page
) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(Rule(match_last=f"early {m}", text=f"got it early {m}"))
    hold = HeldCreate()
    await page.route_web_socket(re.compile(r"/ws$"), hold.route)
    await sign_in(page)
    await page.get_by_label("Project", exact=True).fill("demo")
    await page.get_by_role("button", name="New session").click()
    await eventually(lambda: hold.held, what="the session-create frame held")
    composer = page.get_by_label("Message")
    await composer.fill(f"early {m}")
    await composer.press("Enter")
    # Taken, and the page says what it waits for; not sent yet.
    await expect(composer).to_have_value("")
    pending = page.get_by_test_id("pending")
    await expect(pending).to_contain_text(f"early {m}")
    await expect(pending).to_contain_text("waiting for the session")
    assert not system.model_requests(f"early {m}")
    hold.let_through()
    answer = page.locator("article.msg.assistant:not(.streaming)", has_text=f"got it early {m}")
    await expect(answer).to_have_count(1)
    await expect(page.locator("article.msg.user", has_text=f"early {m}")).to_have_count(1)
    await expect(page.get_by_test_id("pending")).to_have_count(0)


async def _session(system: System, token: str, text: str = "") -> str:
    client = await system.connect(token)
    created = await client.ok("session-create", {"projectId": "demo"})
    if text:
        await client.ok("process-steer", {"content": text})
        await client.wait_for(
            lambda f: (
                f["type"] == "chat-message-appended"
                and f["data"]["role"] == "assistant"
                and text in f["data"]["content"]
            ),
            what="the answer",
        )
    await client.close()
    return str(created["sessionId"])


def row(page: Page, sid: str) -> Any:
    return page.locator(f"li.session[data-session='{sid}']")


async def test_the_session_list_cards_titles_archive_and_tag_filters(
    system: System, page: Page
) -> None:
    m = uuid.uuid4().hex[:8]
    user, token = await new_user(system)
    system.script(Rule(purpose=SUGGEST, match=m, text="no suggestion", repeat=True))
    untitled = await _session(system, token, f"plan the garden {m}")
    forced = await _session(system, token, f"water the roses {m}")
    archived = await _session(system, token, f"old notes {m}")
    tagged = await _session(system, token)
    await system.sessions.SuspendSession(
        spb.SuspendSessionRequest(tenant_id="default", session_id=forced)
    )
    await system.sessions.ArchiveSession(
        spb.SessionOpRequest(tenant_id="default", session_id=archived)
    )
    await system.sessions.UpdateMetadata(
        spb.UpdateMetadataRequest(
            tenant_id="default",
            session_id=tagged,
            caller=spb.Caller(user_id=user),
            title=f"Tagged {m}",
            tags=spb.TagList(tags=[f"t{m}"]),
        )
    )
    await sign_in(page, user, "pw")
    # No title set or suggested: the first user message stands in.
    await expect(row(page, untitled).locator(".title")).to_have_text(f"plan the garden {m}")
    # The SUSPENDED card: the FORCED accent, since when, and the engines with their statuses.
    card = row(page, forced).get_by_test_id("suspended")
    await expect(card).to_have_class(re.compile(r"\bforced\b"))
    await expect(card.get_by_test_id("suspended-at")).to_be_visible()
    await expect(card.get_by_test_id("engines")).to_contain_text("1 engine: 1 suspended")
    await expect(card.get_by_test_id("engines")).to_contain_text("chat suspended")
    # Archived sessions only when the filter asks for them.
    await expect(row(page, untitled)).to_have_count(1)
    await expect(row(page, archived)).to_have_count(0)
    status_chips = page.get_by_role("group", name="Filter by status")
    await status_chips.get_by_role("button", name="archived").click()
    await expect(row(page, archived)).to_have_count(1)
    await expect(row(page, untitled)).to_have_count(0)
    await status_chips.get_by_role("button", name="archived").click()
    # A tag chip lists only the sessions with that tag.
    tags = page.get_by_role("group", name="Filter by tag")
    await tags.get_by_role("button", name=f"#t{m}").click()
    await expect(row(page, tagged)).to_have_count(1)
    await expect(row(page, untitled)).to_have_count(0)
    await expect(page.get_by_role("group", name="Filter by owner")).to_have_count(0)  # not admin


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


def respond(message: str, awaiting: bool = False) -> list[dict[str, Any]]:
    return [call("respond", message=message, awaiting_user_input=awaiting)]


async def test_a_worker_opened_in_focus_shows_its_transcript_and_is_steered_directly(
    system: System, page: Page
) -> None:
    m = uuid.uuid4().hex[:8]
    goal = f"Collect notes {m}"
    system.script(
        Rule(
            match_last=f"{m} delegate",
            tool_calls=[call("process_create", recipe="analyze", goal=goal, name="notes")],
        ),
        # Arthur's answer after process_create reads its tool result; the worker's first call
        # (its goal, which says "notes" too) may come first, so the rule names the tool message.
        Rule(
            match=m,
            match_last='"role": "tool"',
            tool_calls=respond(f"Started the notes {m}."),
        ),
        Rule(match_last=goal, tool_calls=respond(f"Which topic? ({m})", awaiting=True)),
        Rule(match_last="Which topic", tool_calls=respond(f"notes asks for a topic ({m})")),
        Rule(match_last=f"birds {m}", tool_calls=respond(f"Notes on birds {m}")),
        Rule(match_last=f"Notes on birds {m}", tool_calls=respond(f"notes finished ({m})")),
    )
    await sign_in(page)
    await page.get_by_label("Project", exact=True).fill("demo")
    await page.get_by_role("button", name="New session").click()
    log = page.get_by_test_id("log")
    await expect(log).to_contain_text("Hi, I'm Arthur")
    composer = page.get_by_label("Message")
    await composer.fill(f"{m} delegate")
    await composer.press("Enter")
    worker = page.locator("li.proc[data-process='notes']")
    await expect(worker.locator("[data-role=status]")).to_have_text("BLOCKED", timeout=45_000)
    await worker.get_by_role("button", name="Focus notes").click()
    # The worker's own transcript in the main column, not Arthur's conversation.
    await expect(page.get_by_test_id("focus")).to_contain_text("Working directly with notes")
    await expect(log).to_contain_text(f"Which topic? ({m})")
    await expect(log).not_to_contain_text(f"Started the notes {m}.")
    # The composer talks to the worker.
    await composer.fill(f"birds {m}")
    await composer.press("Enter")
    await expect(log).to_contain_text(f"Notes on birds {m}", timeout=45_000)
    await page.get_by_role("button", name="Back to chat").click()
    await expect(page.get_by_test_id("focus")).to_have_count(0)
    await expect(log).to_contain_text(f"Started the notes {m}.")
    # The message went to the worker, not to Arthur's chat.
    await expect(log).not_to_contain_text(f"Which topic? ({m})")
    await expect(log).not_to_contain_text(f"birds {m}")
