"""The documents panel of the hub in the web client, in a real Chromium against the real
system and the scripted model: a document Eddie writes appears in the panel once the turn is
done, opens rendered as Markdown, and shows its edit after the next turn; another user's
panel stays empty."""

from __future__ import annotations

import uuid

from playwright.async_api import Page, expect

from tests.browser_support import sign_in
from tests.eddie_support import call
from tests.harness import System
from tests.sessions_support import new_user
from tests.test_web_hub import eddie, say
from tests.user_work_support import tools_then_answer


async def test_the_documents_panel_lists_and_shows_the_users_documents(
    system: System, page: Page
) -> None:
    m = uuid.uuid4().hex[:8]
    path = f"notes/trip-{m}.md"
    user, _ = await new_user(system)
    system.script(
        *tools_then_answer(
            f"{m} note",
            [
                call(
                    "doc_create", path=path, title=f"Trip {m}", body="# Packing\n\n- **passport**\n"
                )
            ],
            f"Noted {m}.",
        ),
        *tools_then_answer(
            f"{m} more", [call("doc_edit", path=path, text="- charger")], f"Added {m}."
        ),
    )
    await sign_in(page, user, "pw")
    await page.get_by_role("button", name="Hub", exact=True).click()
    await page.wait_for_url("**/#/s/*")
    panel = page.get_by_test_id("documents")
    await expect(panel).to_contain_text("No documents yet.")

    await say(page, f"{m} note")
    await expect(eddie(page, f"Noted {m}.")).to_have_count(1)
    item = panel.get_by_role("button", name=f"Trip {m}")
    await expect(item).to_contain_text(path)
    await item.click()
    await expect(item).to_have_attribute("aria-expanded", "true")
    shown = page.get_by_test_id("document")
    await expect(shown.locator("h1")).to_have_text("Packing")
    await expect(shown.locator("li strong")).to_have_text("passport")

    # The next turn edits it; the open document follows.
    await say(page, f"{m} more")
    await expect(eddie(page, f"Added {m}.")).to_have_count(1)
    await expect(shown.locator("li")).to_have_count(2)
    await expect(shown.locator("li").nth(1)).to_have_text("charger")

    # Another user signs in on the same browser: an empty panel.
    other, _ = await new_user(system)
    await page.evaluate("localStorage.clear()")
    await sign_in(page, other, "pw")
    await page.get_by_role("button", name="Hub", exact=True).click()
    await page.wait_for_url("**/#/s/*")
    await expect(page.get_by_test_id("documents")).to_contain_text("No documents yet.")
    await expect(page.get_by_role("button", name=f"Trip {m}")).to_have_count(0)
