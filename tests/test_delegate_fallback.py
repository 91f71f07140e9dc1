"""process_create_delegate's fallback against the real services and the scripted model:
Slartibartfast designs, validates and stores a recipe (sync: spawned by the tool; async: the
caller hears of it), fails after its repair attempts, or is cut off."""

from __future__ import annotations

import json
import uuid

from tests.delegate_support import (
    TENANT,
    caller,
    delegate,
    names,
    project,
    proposal,
    recipes,
    selector_says,
)
from tests.harness import System, eventually
from tests.test_arthur_flow import call, wait_statuses
from vance.testing.scripted_llm import Rule
from vance.v1 import recipe_pb2 as rpb


async def test_sync_fallback_designs_stores_and_spawns_a_recipe_through_arthur(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    client, _ = await caller(system, await project(system, m))
    task = f"Write a poem about tides {m}"
    system.script(
        Rule(
            match_last=f"{m} please",
            tool_calls=[call("process_create_delegate", name="poem", task=task)],
        ),
        Rule(
            match=f"{m} please",
            match_last='\\"fallback\\"',
            tool_calls=[call("respond", message=f"poem started {m}", awaiting_user_input=False)],
        ),
        selector_says(m, {"decision": "NONE", "recipe": None, "rationale": "No poem recipe."}),
        Rule(match=task, match_last="Design the recipe now", text=proposal("poet", "ford", m)),
        Rule(match=f"POEM-{m}", text=f"Tides rise, tides fall {m}"),
    )
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} please"})
    tool_result = await eventually(
        lambda: next(
            (
                json.loads(x["content"])
                for r in system.model_requests(f"{m} please")
                for x in r["messages"]
                if x["role"] == "tool" and '"fallback"' in x["content"]
            ),
            None,
        ),
        timeout=60,
        what="the delegate result in Arthur's next call",
    )
    fallback = tool_result["fallback"]
    assert tool_result["decision"] == "NONE" and tool_result["rationale"] == "No poem recipe."
    # Arthur offers both spawn tools and its prompt says when to use which.
    arthur = system.model_requests(f"{m} please")[0]
    offered = {t["function"]["name"] for t in arthur["tools"]}
    assert {"process_create", "process_create_delegate"} <= offered
    assert "process_create_delegate with the task" in arthur["messages"][0]["content"]
    slart_id = fallback["slartProcessId"]
    path = f"_slart/{slart_id}/poet"
    assert fallback["status"] == "DONE" and fallback["recipe"] == path
    assert tool_result["process"] == {
        "name": "poem",
        "status": "INIT",
        "engine": "ford",
        "recipe": path,
    }
    stored = await recipes(system).GetRecipe(
        rpb.GetRecipeRequest(tenant_id=TENANT, project_id=f"dg-{m}", name=path)
    )
    assert stored.engine == "ford" and stored.source_kind == rpb.RECIPE_SOURCE_PROJECT
    await wait_statuses(client, {"chat": "IDLE", "poem-slart": "CLOSED", "poem": "CLOSED"})

    # Slartibartfast's close still reaches Arthur, without telling it to spawn the recipe again.
    def slart_events() -> list[str]:
        return [
            x["content"]
            for r in system.model_requests(path)
            for x in r["messages"]
            if x["role"] == "user"
            and "<process-event" in str(x["content"])
            and path in x["content"]
        ]

    events = await eventually(slart_events, timeout=30, what="Slartibartfast's event at Arthur")
    assert all("starts it for you" in e and "Spawn it" not in e for e in events)
    poem = await client.ok("process-messages", {"processName": "poem"})
    assert f"Tides rise, tides fall {m}" in [x["content"] for x in poem["messages"]]
    phases = [
        f["data"]["payload"]["phase"]
        for f in client.of_type("process-progress")
        if f["data"]["processName"] == "poem-slart" and f["data"].get("payload")
    ]
    assert phases == ["PROPOSING", "VALIDATING", "DONE"]
    # Generated recipes stay out of recipe lists and the selector's inventory.
    listed = await recipes(system).ListRecipes(
        rpb.ListRecipesRequest(tenant_id=TENANT, project_id=f"dg-{m}", listed_only=True)
    )
    assert not [r.name for r in listed.recipes if r.name.startswith("_")]
    await client.close()


async def test_slartibartfast_fails_after_its_repair_attempts_and_nothing_is_spawned(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    client, chat = await caller(system, await project(system, m))
    task = f"Design a galaxy {m}"
    system.script(
        selector_says(m, {"decision": "NONE", "recipe": None, "rationale": "None fits."}),
        Rule(match=task, match_last="Design the recipe now", text=proposal("maker", "zaphod", m)),
        Rule(match=task, match_last="failed validation", text="name: Not A Name\n"),
        Rule(
            match=task, match_last="failed validation", text=proposal("maker", "slartibartfast", m)
        ),
    )
    out = await delegate(system, chat, name="galaxy", task=task)
    assert out["decision"] == "NONE" and "process" not in out
    fallback = out["fallback"]
    assert fallback["status"] == "FAILED"
    assert "closed INCOMPLETE: no valid recipe after 3 attempts" in fallback["reason"]
    assert "must do the task, not design recipes" in fallback["reason"]
    repairs = [
        r["messages"][-1]["content"]
        for r in system.model_requests(task)
        if "failed validation" in r["messages"][-1]["content"]
    ]
    assert len(repairs) == 2
    assert "engine 'zaphod' is not in the engine catalog" in repairs[0]
    assert "name 'Not A Name' must match" in repairs[1]
    processes = await names(client)
    assert set(processes) == {"chat", "galaxy-slart"}
    assert processes["galaxy-slart"]["closeReason"] == "INCOMPLETE"
    listed = await recipes(system).ListRecipes(
        rpb.ListRecipesRequest(
            tenant_id=TENANT, project_id=f"dg-{m}", source=rpb.RECIPE_SOURCE_PROJECT
        )
    )
    assert list(listed.recipes) == []
    await client.close()


async def test_the_sync_fallback_stops_waiting_at_the_cutoff(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    slow_architect = (
        "description: a Slartibartfast with a short cutoff\nengine: slartibartfast\n"
        "params:\n  model: default:analyze\n  fallbackWaitMs: 2000\n"
    )
    client, chat = await caller(
        system, await project(system, m, {"slartibartfast": slow_architect})
    )
    task = f"Something slow {m}"
    system.script(
        selector_says(m, {"decision": "NONE", "recipe": None, "rationale": "None."}),
        Rule(match=task, text=proposal("slow", "ford", m), delay_ms=30_000),
    )
    out = await delegate(system, chat, name="slow", task=task)
    fallback = out["fallback"]
    assert fallback["status"] == "TIMEOUT" and "process" not in out
    assert "did not finish within 2s" in fallback["reason"]
    processes = await names(client)
    assert set(processes) == {"chat", "slow-slart"}
    assert processes["slow-slart"]["closeReason"] == "STOPPED"
    await client.close()


async def test_async_fallback_returns_pending_and_the_caller_hears_the_close(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    client, chat = await caller(system, await project(system, m))
    task = f"Write a limerick {m}"
    system.script(
        selector_says(m, {"decision": "NONE", "recipe": None, "rationale": "No limericks."}),
        Rule(match=task, match_last="Design the recipe now", text=proposal("limerick", "ford", m)),
    )
    out = await delegate(system, chat, name="limerick", task=task, asyncFallback=True)
    assert out["decision"] == "NONE" and out["outcome"] == "PENDING"
    slart_id = out["slartProcessId"]
    assert out["fallback"]["status"] == "PENDING" and "process" not in out

    def arthur_heard() -> bool:
        return any(
            "<process-event" in str(x["content"])
            and f"_slart/{slart_id}/limerick" in x["content"]
            and "Spawn it with process_create" in x["content"]
            for r in system.model_requests(m)
            for x in r["messages"]
            if x["role"] == "user"
        )

    await eventually(arthur_heard, timeout=60, what="Arthur receiving Slartibartfast's event")
    processes = await names(client)
    assert processes["limerick-slart"]["closeReason"] == "DONE"
    assert "limerick" not in processes  # async mode spawns nothing itself
    await client.close()
