"""The hub in the web client, in a real Chromium against the real system and the scripted
model: the Hub button opens Eddie, its spoken line shows with the info block beside it, an
ask_user option button answers it, a relay_inbox item raises the unread count and opens in
the inbox panel, a worker's forwarded tool progress is shown attributed to it, and a
`mediate` hands the page to the worker's session with a banner and "Back to hub" returns."""

from __future__ import annotations

import uuid

from playwright.async_api import Locator, Page, expect

from tests.browser_support import sign_in
from tests.eddie_support import act
from tests.harness import System
from tests.sessions_support import new_user
from vance.testing.scripted_llm import Rule


async def say(page: Page, text: str) -> None:
    await page.get_by_label("Message").fill(text)
    await page.get_by_label("Message").press("Enter")


def eddie(page: Page, text: str) -> Locator:
    return page.locator("article.msg.assistant:not(.streaming)", has_text=text)


async def test_hub_answer_inbox_worker_activity_switch_and_back(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"webhub_{m}"
    user, _ = await new_user(system)
    system.script(
        act(
            "answer",
            f"{m} hello",
            message=f"Hello {m}, all is well.",
            info=f"**Details {m}**\n\n- first\n- second",
        ),
        act(
            "ask_user",
            f"{m} choose",
            message="Which one shall I take?",
            options=[{"label": f"Alpha {m}"}, {"label": f"Beta {m}"}],
        ),
        act("answer", f"Alpha {m}", message=f"Alpha it is, {m}."),
        act(
            "relay_inbox",
            f"{m} plan",
            spoken="The plan is in your inbox.",
            inboxTitle=f"Plan {m}",
            body=f"# Plan {m}\n\n1. **read** the code\n2. fix it",
        ),
        act("project_create", f"{m} make project", name=project, steerContent=f"{m} work"),
        act("answer", project, match=f"{m} make project", message=f"Made {m}."),
        act(
            "mediate",
            f"{m} switch",
            target=project,
            reason="files to look at together",
            voiceAnnouncement=f"Connecting you to Arthur {m}",
        ),
        # Arthur in the new project: a tool step (its progress is forwarded to the hub), then
        # its answer; Eddie hears the milestone and says a word.
        Rule(match_last=f"{m} work", tool_calls=[{"name": "process_list", "arguments": {}}]),
        act(
            "respond",
            "processes",
            match=f"{m} work",
            message=f"Worked {m}",
            awaiting_user_input=False,
        ),
        Rule(match_last=m, match='type=\\"', text=f"Noted {m}", repeat=True),
    )
    await sign_in(page, user, "pw")
    await page.get_by_role("button", name="Hub", exact=True).click()
    await page.wait_for_url("**/#/s/*")
    hub_url = page.url
    await expect(page.get_by_test_id("chat-title")).to_have_text("Hub")
    await expect(page.get_by_test_id("link")).to_have_text("connected")
    await expect(page.get_by_test_id("inbox-unread")).to_have_text("0")

    # The spoken line with its Markdown info block beside it.
    await say(page, f"{m} hello")
    said = eddie(page, f"Hello {m}, all is well.")
    await expect(said).to_have_count(1)
    await expect(said.locator("aside.info strong")).to_have_text(f"Details {m}")
    await expect(said.locator("aside.info li")).to_have_count(2)

    # ask_user: the options are buttons; a click sends the label as the answer.
    await say(page, f"{m} choose")
    question = eddie(page, "Which one shall I take?")
    await question.get_by_role("button", name=f"Alpha {m}").click()
    await expect(page.locator("article.msg.user", has_text=f"Alpha {m}")).to_have_count(1)
    await expect(eddie(page, f"Alpha it is, {m}.")).to_have_count(1)

    # relay_inbox: the long text goes to the inbox; the unread count rises, opening reads it.
    await say(page, f"{m} plan")
    await expect(eddie(page, "The plan is in your inbox.")).to_have_count(1)
    await expect(page.get_by_test_id("inbox-unread")).to_have_text("1")
    item = page.get_by_role("button", name=f"Plan {m}")
    await item.click()
    await expect(item).to_have_attribute("aria-expanded", "true")
    await expect(page.get_by_test_id("inbox").locator("strong", has_text="read")).to_be_visible()
    await expect(page.get_by_test_id("inbox-unread")).to_have_text("0")

    # A project with Arthur: its tool step shows in the hub as the worker's activity.
    await say(page, f"{m} make project")
    await expect(eddie(page, f"Made {m}.")).to_have_count(1)
    await expect(page.get_by_test_id("forwarded")).to_contain_text(
        "tool process_list", timeout=60_000
    )
    await expect(page.get_by_test_id("forwarded")).to_contain_text("(arthur, via eddie)")

    # mediate -> switch-to: the page switches to the worker's session with a banner.
    await say(page, f"{m} switch")
    await page.wait_for_url(lambda url: url != hub_url and "#/s/" in url, timeout=60_000)
    banner = page.get_by_test_id("switched")
    await expect(banner).to_contain_text(f"Directly with arthur in {project}")
    await expect(page.get_by_test_id("log")).to_contain_text(f"Worked {m}", timeout=60_000)
    await expect(page.get_by_role("button", name="Hub", exact=True)).to_be_visible()

    # Back to hub returns to the hub session; the replayed switch-to does not switch again.
    await page.get_by_role("button", name="Back to hub").click()
    await page.wait_for_url(hub_url)
    await expect(page.get_by_test_id("chat-title")).to_have_text("Hub")
    await expect(eddie(page, f"Connecting you to Arthur {m}")).to_have_count(1)
    await expect(page.get_by_text("Handed over to")).to_be_visible()
    await expect(page.get_by_test_id("switched")).to_have_count(0)
    assert page.url == hub_url
    await expect(eddie(page, f"Hello {m}, all is well.")).to_have_count(1)
