"""process_create_delegate's remaining gaps (issue 27 items 4 and 5): the inventory leaves out
recipes whose engine never reads a goal, a Slartibartfast still waiting for a slot at the cutoff
is stopped, a transient model error is retried, and the selector call has its own timeout."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from tests.delegate_support import (
    TENANT,
    caller,
    delegate,
    names,
    project,
    proposal,
    recipe_catalog,
    selector_calls,
    selector_says,
)
from tests.harness import System, eventually, running_system
from tests.test_arthur_flow import wait_statuses
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm

SELECTOR_TIMEOUT_MS = 1_000


def slart_override(**params: int) -> str:
    """A project's own `slartibartfast` recipe (the cascade's first hit) with these params."""
    lines = "".join(f"  {k}: {v}\n" for k, v in params.items())
    return (
        "description: the architect, with project settings\nengine: slartibartfast\n"
        f"params:\n  model: default:analyze\n  maxAttempts: 3\n{lines}"
    )


async def test_the_inventory_leaves_out_recipes_whose_engine_ignores_the_goal(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    pid = await project(
        system,
        m,
        {
            f"panel-{m}": "description: A debate panel on the chat engine.\nengine: arthur\n",
            f"notes-{m}": "description: Writes notes.\nengine: ford\n",
        },
    )
    inventory = await recipe_catalog(system).ListInventory(
        ripb.ListInventoryRequest(tenant_id=TENANT, project_id=pid)
    )
    listed = {r.name for r in inventory.recipes}
    assert f"notes-{m}" in listed and "quick-lookup" in listed
    assert "discuss" not in listed and f"panel-{m}" not in listed
    # A selector that still answers with `discuss` gets a NONE: nothing idle is started.
    client, chat = await caller(system, pid)
    system.script(selector_says(m, {"decision": "MATCH", "recipe": "discuss", "rationale": "x"}))
    out = await delegate(
        system, chat, name="talk", task=f"Discuss the plan {m}", fallbackOnNone=False
    )
    assert out["decision"] == "NONE" and "process" not in out
    [request] = selector_calls(system, m)
    assert "`discuss`" not in request["messages"][1]["content"]
    assert set(await names(client)) == {"chat"}
    await client.close()


async def test_a_transient_model_error_is_retried_before_the_design_fails(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    pid = await project(system, m, {"slartibartfast": slart_override(modelRetryBaseMs=100)})
    client, chat = await caller(system, pid)
    task = f"Write a limerick about moths {m}"
    system.script(
        selector_says(m, {"decision": "NONE", "recipe": None, "rationale": "No limericks."}),
        Rule(match=task, match_last="Design the recipe now", fail_status=500),
        Rule(match=task, match_last="Design the recipe now", text=proposal("limerick", "ford", m)),
        Rule(match=f"POEM-{m}", text=f"A moth in the night {m}"),
    )
    out = await delegate(system, chat, name="poem", task=task)
    fallback = out["fallback"]
    assert fallback["status"] == "DONE", fallback
    assert out["process"]["name"] == "poem"
    designs = [r for r in system.model_requests(task) if "Design the recipe now" in str(r)]
    assert len(designs) == 2  # the failed call and its retry
    phases = [
        f["data"]["payload"]["phase"]
        for f in client.of_type("process-progress")
        if f["data"]["processName"] == "poem-slart" and f["data"].get("payload")
    ]
    assert phases[:3] == ["PROPOSING", "RETRYING", "VALIDATING"], phases
    await client.close()


@pytest.fixture(scope="module")
async def one_slot(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[System]:
    """One turn at a time per worker, and a short selector timeout."""
    env = {"VANCE_WORKER_SLOTS": "1", "VANCE_SELECTOR_TIMEOUT_MS": str(SELECTOR_TIMEOUT_MS)}
    async with running_system(tmp_path_factory.mktemp("slots"), llm, extra_env=env) as system:
        yield system


async def test_a_slartibartfast_still_waiting_for_a_slot_is_stopped_at_the_cutoff(
    one_slot: System,
) -> None:
    system = one_slot
    m = uuid.uuid4().hex[:8]
    pid = await project(system, m, {"slartibartfast": slart_override(fallbackWaitMs=1500)})
    client, chat = await caller(system, pid)
    # Both workers' only slots are taken by turns held mid-stream.
    busy = []
    hold = f"busy-{m}"
    for i in range(2):
        other, _ = await caller(system, pid)
        system.script(
            Rule(match_last=f"{hold}-{i}", text=f"a long answer {i} {m}", hold=hold, chunks=3)
        )
        await other.ok("process-steer", {"processName": "chat", "content": f"{hold}-{i}"})
        busy.append(other)
    for other in busy:
        await wait_statuses(other, {"chat": "RUNNING"})
    task = f"Design a sundial {m}"
    system.script(
        selector_says(m, {"decision": "NONE", "recipe": None, "rationale": "None fits."}),
        Rule(match=task, match_last="Design the recipe now", text=proposal("dial", "ford", m)),
    )
    try:
        out = await delegate(system, chat, name="dial", task=task)
        assert out["fallback"]["status"] == "TIMEOUT", out
        slart = (await names(client))["dial-slart"]
        assert (slart["status"], slart["closeReason"]) == ("CLOSED", "STOPPED")
    finally:
        system.llm.release(hold)
    for other in busy:
        await wait_statuses(other, {"chat": "IDLE"})
        await other.close()
    # The freed slots start no design of a recipe nobody would spawn.
    again = f"after-{m}"
    system.script(Rule(match_last=again, text=f"done {m}"))
    await client.ok("process-steer", {"processName": "chat", "content": again})
    await wait_statuses(client, {"chat": "IDLE", "dial-slart": "CLOSED"})
    assert not [r for r in system.model_requests(task) if "Design the recipe now" in str(r)]
    await client.close()


async def test_the_selector_call_is_cut_off_by_its_own_timeout(one_slot: System) -> None:
    system = one_slot
    m = uuid.uuid4().hex[:8]
    client, chat = await caller(system, await project(system, m))
    slow = {"decision": "MATCH", "recipe": "quick-lookup", "rationale": "late"}
    system.script(selector_says(m, slow, delay_ms=SELECTOR_TIMEOUT_MS + 3_000))
    out = await delegate(
        system, chat, name="look", task=f"Look up the tide table {m}", fallbackOnNone=False
    )
    assert out["decision"] == "NONE", out
    assert out["rationale"] == f"LLM call timed out after {SELECTOR_TIMEOUT_MS / 1000:g} s"
    assert set(await names(client)) == {"chat"}
    await eventually(lambda: selector_calls(system, m), what="the selector's call")
    await client.close()
