"""The web client tells the user why their turn failed (issue 28) and the chat goes on: the
provider answers 503 until every retry ran out, and the chat view shows the provider's words in
the conversation after the user's message (no exception class names, the key the provider
quoted masked), without ending the conversation; once the provider is back, the next message
typed is answered, and a reload shows it all again."""

from __future__ import annotations

import uuid

from playwright.async_api import Page, expect

from tests.browser_support import sign_in
from tests.harness import System
from tests.test_web_ui import assistant, new_session, say
from vance.testing.scripted_llm import Rule

KEY = "sk-proj-ZyXwVu9876543210abc"


async def test_the_chat_view_says_why_a_turn_failed_and_goes_on(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    down = Rule(
        match=f"fails {m}",
        fail_status=503,
        retry_after_s=0,
        fail_message=f"overloaded {m}, try later (key {KEY})",
        repeat=True,
    )
    system.script(down)
    await sign_in(page)
    await new_session(page)
    await say(page, f"fails {m}")

    notice = page.get_by_test_id("turn-failed")
    await expect(notice).to_have_count(1, timeout=60_000)
    await expect(notice).to_have_attribute("role", "alert")
    await expect(notice).to_contain_text("No answer: the turn failed.")
    await expect(notice).to_contain_text("model call failed (503)")
    await expect(notice).to_contain_text(f"overloaded {m}, try later (key [redacted-key])")
    await expect(notice).to_contain_text("gave up after 5 tries")
    await expect(notice).to_contain_text("Tried 3 times.")
    await expect(notice).to_contain_text("Your message is kept")
    await expect(notice).not_to_contain_text("ModelCallError")
    await expect(notice).not_to_contain_text(KEY)
    # The user's message stays, before the notice; the conversation has not ended.
    mine = page.locator("article.msg.user:not(.pending)", has_text=f"fails {m}")
    await expect(mine).to_have_count(1)
    await expect(page.get_by_test_id("closed-notice")).to_have_count(0)
    await expect(page.get_by_test_id("rollup")).to_have_text("IDLE")
    await expect(page.locator("[data-role=close-reason]")).to_have_count(0)

    # The provider is back: the next message typed is answered in the same chat.
    system.llm.script.remove(down)
    system.script(Rule(match_last=f"back {m}", text=f"Here again {m}"))
    await say(page, f"back {m}")
    await expect(assistant(page, f"Here again {m}")).to_have_count(1, timeout=30_000)
    await expect(page.get_by_test_id("pending")).to_have_count(0)

    # A reload replays the session's events from the start: it all comes back, once.
    await page.reload()
    await expect(assistant(page, f"Here again {m}")).to_have_count(1)
    await expect(page.get_by_test_id("turn-failed")).to_contain_text(f"overloaded {m}")
    await expect(mine).to_have_count(1)
