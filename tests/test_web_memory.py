"""The project memory panel of the web client, in a real Chromium against the real system and
the scripted model: a note Arthur keeps with memory_remember appears once the turn is done, and
the user deletes it there (gone over REST too)."""

from __future__ import annotations

import uuid

from playwright.async_api import Page, expect

from tests.browser_support import sign_in
from tests.eddie_support import call
from tests.harness import System
from tests.knowledge_support import new_project, rest
from tests.test_web_ui import assistant, say
from vance.testing.scripted_llm import Rule


async def test_the_memory_panel_lists_and_deletes_the_projects_notes(
    system: System, page: Page
) -> None:
    m = uuid.uuid4().hex[:8]
    project = await new_project(system)
    system.script(
        Rule(
            match_last=f"{m} keep",
            tool_calls=[
                call("memory_remember", scope="project", text=f"staging is blue-{m}", tags=["env"])
            ],
        ),
        Rule(match_last="tool_call_id", match=f"{m} keep", text=f"Kept {m}."),
    )
    await sign_in(page)
    await page.get_by_label("Project", exact=True).fill(project)
    await page.get_by_role("button", name="New session").click()
    await expect(page.get_by_test_id("log")).to_contain_text("Hi, I'm Arthur")
    panel = page.get_by_test_id("memory")
    await expect(panel).to_contain_text("Nothing remembered yet.")

    await say(page, f"{m} keep")
    await expect(assistant(page, f"Kept {m}.")).to_have_count(1)
    note = panel.get_by_test_id("memory-record").filter(has_text=f"staging is blue-{m}")
    await expect(note).to_have_count(1)
    await expect(note).to_contain_text("#env")

    await note.get_by_role("button", name="Delete memory").click()
    await expect(note).to_have_count(0)
    await expect(panel).to_contain_text("Nothing remembered yet.")
    token = await system.login()
    listed = await rest(system, "GET", f"/projects/{project}/memory", token)
    assert listed.json()["records"] == []
