"""Plan mode in the web client, in a real Chromium against the real system and the scripted
model: Arthur proposes a plan, the user edits and approves it with the panel's buttons, the
todo list follows the execution and comes back after a reload; a second plan is rejected."""

from __future__ import annotations

import uuid

from playwright.async_api import Page, expect

from tests.browser_support import sign_in
from tests.eddie_support import act, call
from tests.harness import System
from tests.sessions_support import new_user
from tests.test_web_ui import new_session, say
from vance.testing.scripted_llm import Rule


async def test_plan_edit_approve_todos_reload_and_reject(system: System, page: Page) -> None:
    m = uuid.uuid4().hex[:8]
    title, other = f"Web plan {m}", f"Other plan {m}"
    user, _ = await new_user(system)
    system.script(
        Rule(
            match_last=f"{m} plan it",
            tool_calls=[call("plan_propose", title=title, steps=["Draft", "Review", "Ship"])],
        ),
        Rule(
            match_last="plan-approved",
            match=title,
            tool_calls=[
                call("todo_update", id="t1", status="done"),
                call("todo_update", id="t2", status="in_progress"),
                call("todo_update", id="t2", status="done"),
            ],
        ),
        act("respond", "normal", match=title, message=f"Shipped {m}", awaiting_user_input=False),
    )
    await sign_in(page, user, "pw")
    await new_session(page)
    await say(page, f"{m} plan it")
    plan = page.get_by_test_id("plan").filter(has_text=title)
    await expect(plan.get_by_test_id("plan-state")).to_have_text("awaiting approval")
    await expect(plan.get_by_test_id("todos").locator("li")).to_have_count(3)

    # Edit: the user drops a step, then approves the edited plan.
    await plan.get_by_role("button", name="Edit").click()
    await plan.get_by_test_id("plan-edit").fill(f"Draft {m}\nShip {m}")
    await plan.get_by_role("button", name="Approve edited").click()
    todos = plan.get_by_test_id("todos").locator("li")
    await expect(todos).to_have_count(2)
    await expect(todos.nth(0)).to_contain_text(f"Draft {m}")
    await expect(todos.nth(0)).to_have_attribute("data-status", "done", timeout=60_000)
    await expect(todos.nth(1)).to_have_attribute("data-status", "done")
    await expect(plan.get_by_test_id("plan-state")).to_have_text("done")
    await expect(page.get_by_test_id("log")).to_contain_text(f"Shipped {m}")
    await expect(page.get_by_test_id("log")).to_contain_text("Approved the plan with changes.")

    # A reload replays the session: the panel comes back with the todo list as it ended.
    await page.reload()
    plan = page.get_by_test_id("plan").filter(has_text=title)
    await expect(plan.get_by_test_id("plan-state")).to_have_text("done")
    await expect(plan.get_by_test_id("todos").locator("li[data-status=done]")).to_have_count(2)

    # A second plan, rejected with the button: never executed.
    system.script(
        Rule(
            match_last=f"{m} another",
            tool_calls=[call("plan_propose", title=other, steps=["One", "Two"])],
        ),
        act(
            "respond",
            "plan-rejected",
            match=other,
            message=f"Dropped {m}",
            awaiting_user_input=False,
        ),
    )
    await say(page, f"{m} another")
    second = page.get_by_test_id("plan").filter(has_text=other)
    await expect(second.get_by_test_id("plan-state")).to_have_text("awaiting approval")
    await second.get_by_role("button", name="Reject").click()
    await expect(second.get_by_test_id("plan-state")).to_have_text("rejected")
    await expect(page.get_by_test_id("log")).to_contain_text(f"Dropped {m}")
    await expect(second.get_by_test_id("todos").locator("li[data-status=done]")).to_have_count(0)
