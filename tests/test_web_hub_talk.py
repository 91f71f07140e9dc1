"""The hub's talk to projects in the web client (real Chromium, real system, scripted model):
a worker's relayed question keeps its option buttons after another project's news came in, a
click answers that worker (the ask id travels with it), and the worker's plan shows in the
hub's plan panel, forwarded, where Approve starts it and its todo list follows."""

from __future__ import annotations

import uuid

from playwright.async_api import Page, expect

from tests.browser_support import sign_in
from tests.eddie_support import act, call
from tests.harness import System
from tests.sessions_support import new_user
from tests.test_web_hub import eddie, say
from vance.testing.scripted_llm import Rule


async def test_hub_answers_an_older_question_and_approves_a_worker_plan(
    system: System, page: Page
) -> None:
    m = uuid.uuid4().hex[:8]
    first, second = f"colour_{m}", f"news_{m}"
    question = f"Which colour {m}?"
    news = f"News {m}: all green"
    title = f"Paint {m}"
    user, _ = await new_user(system)
    system.script(
        act("project_create", f"{m} make first", name=first, steerContent=f"Task colour {m}"),
        act("answer", first, match=f"{m} make first", message=f"Made {first}."),
        act(
            "respond",
            f"Task colour {m}",
            message=question,
            options=[{"label": "Red"}, {"label": "Blue"}],
        ),
        act("relay", question, source=first),
        act("project_create", f"{m} make second", name=second, steerContent=f"Task news {m}"),
        act("answer", second, match=f"{m} make second", message=f"Made {second}."),
        act("respond", f"Task news {m}", message=news, awaiting_user_input=False),
        act("relay", news, source=second),
        # The first worker, answered "Blue", proposes a plan; approved, it runs it.
        Rule(
            match_last="Blue",
            match=question,
            tool_calls=[call("plan_propose", title=title, steps=["Prime", "Paint"])],
        ),
        Rule(
            match_last="plan-approved",
            match=title,
            tool_calls=[
                call(
                    "todo_update",
                    todos=[{"id": "t1", "status": "done"}, {"id": "t2", "status": "done"}],
                )
            ],
        ),
        act("respond", "normal", match=title, message=f"Painted {m}", awaiting_user_input=False),
        Rule(match_last=m, match='type=\\"', text=f"Noted {m}", repeat=True),
    )
    await sign_in(page, user, "pw")
    await page.get_by_role("button", name="Hub", exact=True).click()
    await page.wait_for_url("**/#/s/*")
    await say(page, f"{m} make first")
    asked = eddie(page, question)
    await expect(asked).to_have_count(1, timeout=60_000)
    await say(page, f"{m} make second")
    await expect(eddie(page, news)).to_have_count(1, timeout=60_000)

    # The older question still takes a click; it goes to its own worker.
    blue = asked.get_by_role("button", name="Blue")
    await expect(blue).to_be_enabled()
    await blue.click()
    await expect(eddie(page, "I passed your answer on.")).to_have_count(1)

    # The worker's plan, forwarded into the hub's plan panel; approved from here.
    plan = page.get_by_test_id("plan").filter(has_text=title)
    await expect(plan).to_contain_text("via eddie", timeout=60_000)
    await expect(plan.get_by_test_id("plan-state")).to_have_text("awaiting approval")
    await plan.get_by_role("button", name="Approve").click()
    await expect(plan.get_by_test_id("plan-state")).to_have_text("done", timeout=60_000)
    await expect(plan.get_by_test_id("todos").locator("li[data-status=done]")).to_have_count(2)
    await expect(blue).to_be_disabled()  # answered
