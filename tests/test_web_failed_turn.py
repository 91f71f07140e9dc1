"""The web client tells the user why their turn failed (issue 28): the provider answers 503
until every retry ran out, the chat process closes STALE, and the chat view shows the
provider's words under the conversation (no exception class names, the key the provider
quoted masked), in the process tree too, and again after a reload."""

from __future__ import annotations

import uuid

from playwright.async_api import Page, expect

from tests.browser_support import sign_in
from tests.harness import System
from tests.test_web_ui import new_session, say
from vance.testing.scripted_llm import Rule

KEY = "sk-proj-ZyXwVu9876543210abc"


async def test_the_chat_view_says_why_a_turn_failed(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(
        Rule(
            match=f"fails {m}",
            fail_status=503,
            retry_after_s=0,
            fail_message=f"overloaded {m}, try later (key {KEY})",
            repeat=True,
        )
    )
    await sign_in(page)
    await new_session(page)
    await say(page, f"fails {m}")

    notice = page.get_by_test_id("closed-notice")
    await expect(notice).to_have_count(1, timeout=60_000)
    await expect(notice).to_have_attribute("role", "alert")
    await expect(notice).to_contain_text("chat stopped: its turn failed.")
    await expect(notice).to_contain_text("model call failed (503)")
    await expect(notice).to_contain_text(f"overloaded {m}, try later (key [redacted-key])")
    await expect(notice).to_contain_text("gave up after 5 tries")
    await expect(notice).to_contain_text("Tried 3 times.")
    await expect(notice).not_to_contain_text("ModelCallError")
    await expect(notice).not_to_contain_text(KEY)
    # The process tree names the reason; hovering it gives the same words.
    reason = page.locator("[data-role=close-reason]")
    await expect(reason).to_have_text("STALE")
    title = await reason.get_attribute("title") or ""
    assert title.startswith("turn failed 3 times: ") and f"overloaded {m}" in title, title

    # A reload replays the session's events from the start: the notice comes back.
    await page.reload()
    await expect(page.get_by_test_id("closed-notice")).to_contain_text(f"overloaded {m}")
