"""Makes the screenshots of the web client under docs/screenshots/ (desktop and phone width):
the real system with the scripted model, a short conversation with a worker's question, and
the session list, and the hub with Eddie's info block and an inbox item. Run: .venv/bin/python -m tests.web_screenshots"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from playwright.async_api import Page, async_playwright, expect

from tests.browser_support import CHROMIUM, CHROMIUM_ARGS, DESKTOP, PHONE, sign_in
from tests.harness import running_system
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm
from vance.v1 import session_pb2 as spb

OUT = Path("docs/screenshots")


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


def script(llm: ThreadedScriptedLlm) -> None:
    goal = "Compare the two contract versions and list what changed"
    llm.script.add(
        Rule(
            match_last="compare the contracts",
            tool_calls=[call("process_create", recipe="analyze", goal=goal, name="contract-diff")],
        ),
        Rule(
            match_last="contract-diff",
            tool_calls=[
                call(
                    "respond",
                    message="I started **contract-diff** to compare both versions. "
                    "I'll tell you what it finds.",
                    awaiting_user_input=False,
                )
            ],
        ),
        Rule(
            match_last=goal,
            tool_calls=[
                call(
                    "respond",
                    message="Which version is the baseline?",
                    awaiting_user_input=True,
                    options=[{"label": "Version 2024"}, {"label": "Version 2025"}],
                )
            ],
        ),
        Rule(
            match_last="How is the release going",
            tool_calls=[
                call(
                    "answer",
                    message="The release is on track. Two reviews are still open.",
                    info="**Release 4.2**\n\n| item | state |\n|---|---|\n"
                    "| build | green |\n| reviews | 2 open |\n| docs | done |",
                )
            ],
        ),
        Rule(
            match_last="Write up the checklist",
            tool_calls=[
                call(
                    "relay_inbox",
                    spoken="The checklist is in your inbox.",
                    inboxTitle="Release checklist",
                    body="# Release checklist\n\n1. Tag the build\n2. Publish the notes",
                )
            ],
        ),
        Rule(
            match_last="baseline",
            tool_calls=[
                call(
                    "respond",
                    message="contract-diff asks which version is the baseline: "
                    "answer it in the process panel.",
                    awaiting_user_input=False,
                )
            ],
        ),
    )


async def shoot(page: Page, name: str) -> None:
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        await page.set_viewport_size(size)
        await page.screenshot(path=str(OUT / f"{name}-{label}.png"))


async def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    llm = ThreadedScriptedLlm().start()
    script(llm)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with running_system(Path(tmp), llm) as system, async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                ctx = await browser.new_context(
                    viewport=DESKTOP, base_url=f"http://{system.gateway}"
                )
                page = await ctx.new_page()
                await sign_in(page)
                await page.get_by_role("button", name="New session").click()
                await expect(page.get_by_test_id("log")).to_contain_text("Hi, I'm Arthur")
                await page.get_by_label("Message").fill("Please compare the contracts in /legal")
                await page.get_by_label("Message").press("Enter")
                await expect(page.get_by_test_id("log")).to_contain_text(
                    "answer it in the process panel", timeout=60_000
                )
                await expect(page.get_by_role("group", name="contract-diff asks")).to_be_visible()
                await shoot(page, "chat")
                sid = page.url.rsplit("/", 1)[-1]
                await page.set_viewport_size(DESKTOP)
                await page.get_by_role("button", name="Sessions").click()
                # A second session, suspended, to show the countdown and its actions.
                await page.get_by_role("button", name="New session").click()
                await expect(page.get_by_test_id("log")).to_contain_text("Hi, I'm Arthur")
                other = page.url.rsplit("/", 1)[-1]
                await page.get_by_role("button", name="Sessions").click()
                await system.sessions.UpdateMetadata(
                    spb.UpdateMetadataRequest(
                        tenant_id="default", session_id=sid, title="Contract review", pinned=True
                    )
                )
                await system.sessions.SuspendSession(
                    spb.SuspendSessionRequest(tenant_id="default", session_id=other)
                )
                await expect(page.get_by_test_id("suspended")).to_be_visible(timeout=30_000)
                await expect(page.get_by_role("button", name="Open Contract review")).to_be_visible(
                    timeout=30_000
                )
                await shoot(page, "sessions")
                await page.set_viewport_size(DESKTOP)
                await page.get_by_role("button", name="Hub", exact=True).click()
                await page.wait_for_url("**/#/s/*")
                await expect(page.get_by_test_id("link")).to_have_text("connected")
                await page.get_by_label("Message").fill("How is the release going?")
                await page.get_by_label("Message").press("Enter")
                await expect(page.locator("aside.info")).to_contain_text("Release 4.2")
                await page.get_by_label("Message").fill("Write up the checklist for me")
                await page.get_by_label("Message").press("Enter")
                await expect(page.get_by_test_id("inbox-unread")).to_have_text("1")
                await shoot(page, "hub")
                await browser.close()
    finally:
        llm.stop()


if __name__ == "__main__":
    asyncio.run(main())
