"""process_create_delegate against the real services and the scripted model: the selector's
MATCH and every NONE row, the inventory, and the engine catalog reload."""

from __future__ import annotations

import uuid

import httpx

from engine_worker.engines.slartibartfast import parse_proposal
from recipe_service.inventory import RECIPE_LIST_LIMIT, Inventory, InventoryEntry
from recipe_service.models import RecipeSource
from recipe_service.selector import Decision, parse_reply
from tests.delegate_support import (
    LISTED_BUNDLED,
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
from tests.harness import System
from tests.test_arthur_flow import wait_statuses
from vance.convert import process_from_proto
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.testing.scripted_llm import Rule
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import session_pb2 as spb


async def test_match_spawns_the_picked_recipe_on_the_callers_model(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    pid = await project(
        system,
        m,
        {
            f"chat-{m}": (
                "description: the caller's chat, on its own model\nengine: arthur\n"
                f"params:\n  model: openai/caller-{m}\nlisted: false\n"
            ),
            f"minutes-{m}": (
                "description: Writes meeting minutes from notes the user gives.\n"
                "engine: ford\npromptPrefix: Write minutes.\n"
            ),
            f"_slart/old/minutes-{m}": "description: a generated one\nengine: ford\n",
        },
    )
    client, chat = await caller(system, pid, recipe=f"chat-{m}")
    task = f"Turn these notes into minutes {m}"
    system.script(
        selector_says(m, {"decision": "MATCH", "recipe": f"minutes-{m}", "rationale": "Minutes."}),
        Rule(match_last=task, text=f"minutes written {m}"),
    )
    out = await delegate(
        system, chat, name="minutes", task=task, title="Minutes", params={"maxIterations": 2}
    )
    assert out["decision"] == "MATCH" and out["rationale"] == "Minutes."
    assert (out["recipe"], out["engine"]) == (f"minutes-{m}", "ford")
    assert out["process"]["name"] == "minutes" and out["process"]["recipe"] == f"minutes-{m}"
    assert "fallback" not in out
    [request] = selector_calls(system, m)
    assert request["model"] == f"caller-{m}"  # the caller's model, not the selector's tier
    system_prompt, user_prompt = (x["content"] for x in request["messages"])
    assert system_prompt.startswith("You select the recipe") and "verbatim" in system_prompt
    assert "- **ford**:" in user_prompt and "- **eddie** (no engine worker runs it" in user_prompt
    assert f"`minutes-{m}` (engine ford): Writes meeting minutes" in user_prompt
    assert "`quick-lookup` (engine ford)" in user_prompt
    for hidden in ("_slart/", "recipe-selector", f"chat-{m}", "`slartibartfast`"):
        assert hidden not in user_prompt
    assert user_prompt.rstrip().endswith("emit a single JSON object now.")
    child = (await names(client))["minutes"]
    assert child["title"] == "Minutes" and child["parentProcessId"] == chat
    spawned = process_from_proto(await system.process(child["thinkProcessId"]))
    assert spawned.params["maxIterations"] == 2  # params passed through, over the recipe's
    assert spawned.goal == task
    await wait_statuses(client, {"chat": "IDLE", "minutes": "CLOSED"})
    messages = await client.ok("process-messages", {"processName": "minutes"})
    assert f"minutes written {m}" in [x["content"] for x in messages["messages"]]
    await client.close()


async def test_every_failure_mode_ends_as_none_with_its_rationale(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    client, chat = await caller(system, await project(system, m))
    rows: list[tuple[Rule | None, str, str]] = [
        (selector_says(f"{m}-a", "", fail_status=500, repeat=True), f"{m}-a", "LLM call failed: "),
        (
            selector_says(f"{m}-b", "I would take analyze."),
            f"{m}-b",
            "LLM reply has no JSON object",
        ),
        (
            selector_says(f"{m}-c", '{"decision": "MATCH", "recipe": '),
            f"{m}-c",
            "JSON parse error: ",
        ),
        (
            selector_says(f"{m}-d", {"decision": "MATCH", "recipe": "essay-pipeline"}),
            f"{m}-d",
            "unknown recipe 'essay-pipeline' — not in inventory",
        ),
        (
            selector_says(
                f"{m}-e", {"decision": "NONE", "recipe": None, "rationale": f"No fit {m}."}
            ),
            f"{m}-e",
            f"No fit {m}.",
        ),
    ]
    for rule, task, rationale in rows:
        assert rule is not None
        system.script(rule)
        out = await delegate(system, chat, name=f"w-{task}", task=task, fallbackOnNone=False)
        assert out["decision"] == "NONE" and out["rationale"].startswith(rationale), out
        assert out["recipe"] is None and "process" not in out and "fallback" not in out
        assert selector_calls(system, task), task
    before = len(selector_calls(system))
    empty = await delegate(system, chat, name="w-empty", task="   ")
    assert empty["decision"] == "NONE" and empty["rationale"] == "empty task description"
    assert "fallback" not in empty  # nothing to design a recipe for
    assert len(selector_calls(system)) == before  # no model call
    assert set(await names(client)) == {"chat"}  # nothing was spawned
    await client.close()


async def test_a_project_without_pickable_recipes_answers_none_without_a_model_call(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    hide = {n: f"description: hidden {n}\nengine: ford\nlisted: false\n" for n in LISTED_BUNDLED}
    pid = await project(system, m, hide)
    client, chat = await caller(system, pid)
    before = len(selector_calls(system))
    out = await delegate(system, chat, name="w", task=f"Anything {m}", fallbackOnNone=False)
    assert out["decision"] == "NONE"
    assert (
        out["rationale"] == f"no recipes available for project '{pid}' (project, tenant or bundled)"
    )
    assert len(selector_calls(system)) == before
    inventory = await recipe_catalog(system).ListInventory(
        ripb.ListInventoryRequest(tenant_id=TENANT, project_id=pid)
    )
    assert list(inventory.recipes) == [] and inventory.total == 0
    await client.close()


async def test_the_engine_catalog_reloads_and_a_broken_file_keeps_the_old_one(
    system: System,
) -> None:
    path = system.config.recipes.catalog_path
    original = open(path).read()
    admin = await system.login()
    plain_user = f"u{uuid.uuid4().hex[:8]}"
    await system.sessions.CreateUser(
        spb.CreateUserRequest(tenant_id=TENANT, username=plain_user, password="pw")
    )
    plain = await system.login(plain_user, "pw")
    url = f"http://{system.gateway}/brain/{TENANT}/admin/catalog/engines/reload"

    async def reload(token: str) -> httpx.Response:
        async with httpx.AsyncClient(timeout=30) as http:
            return await http.post(url, headers={"Authorization": f"Bearer {token}"})

    try:
        refused = await reload(plain)
        assert refused.status_code == 403 and refused.json()["detail"]["reason"] == "admin_required"
        with open(path, "a") as f:
            f.write(
                "  zaphod:\n    purpose: Two heads.\n    when_to_use: Never.\n"
                "    not_for: Anything.\n"
            )
        for _ in range(2):  # idempotent
            ok = await reload(admin)
            assert ok.status_code == 200, ok.text
            engines = {e["name"]: e for e in ok.json()["engines"]}
            assert set(engines) == {"arthur", "eddie", "ford", "slartibartfast", "zaphod"}
            assert engines["zaphod"]["available"] is False  # listed, but no worker runs it
            assert engines["eddie"]["available"] is False
            assert engines["slartibartfast"]["available"] is True
        with open(path, "w") as f:
            f.write("engines: [\n")
        broken = await reload(admin)
        assert broken.status_code == 409
        assert broken.json()["detail"]["reason"] == "catalog_invalid"
        assert "not valid YAML" in broken.json()["detail"]["errorMessage"]
        still = await recipe_catalog(system).ListEngines(
            rpb.ListEnginesRequest(available_engines=["ford"])
        )
        assert "zaphod" in {e.name for e in still.engines}
        assert "- **zaphod** (no engine worker runs it" in still.markdown
    finally:
        with open(path, "w") as f:
            f.write(original)
        assert (await reload(admin)).status_code == 200


async def test_the_inventory_is_capped_and_project_recipes_come_first(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    many = {
        f"task-{i:02d}": f"description: task recipe {i}\nengine: ford\n"
        for i in range(RECIPE_LIST_LIMIT + 5)
    }
    pid = await project(system, m, many)
    inventory = await recipe_catalog(system).ListInventory(
        ripb.ListInventoryRequest(tenant_id=TENANT, project_id=pid, available_engines=["ford"])
    )
    assert inventory.total == len(many) + len(LISTED_BUNDLED)
    assert [r.name for r in inventory.recipes] == sorted(many)[:RECIPE_LIST_LIMIT]
    assert all(r.source == rpb.RECIPE_SOURCE_PROJECT for r in inventory.recipes)


def _inventory(*entries: tuple[str, str, bool]) -> Inventory:
    return Inventory(
        [InventoryEntry(n, e, f"{n} things", RecipeSource.BUNDLED, ok) for n, e, ok in entries],
        total=len(entries),
    )


def test_parse_reply_accepts_only_verbatim_inventory_names() -> None:
    inv = _inventory(("analyze", "ford", True), ("hub", "eddie", False))
    fenced = 'Sure:\n```json\n{"decision": "match", "recipe": "analyze", "rationale": "r"}\n```'
    picked = parse_reply(fenced, inv)
    assert (picked.decision, picked.recipe, picked.engine) == (Decision.MATCH, "analyze", "ford")
    assert parse_reply('{"decision": "MATCH", "recipe": "Analyze"}', inv).rationale == (
        "unknown recipe 'Analyze' — not in inventory"
    )
    assert "no worker runs" in parse_reply('{"decision": "MATCH", "recipe": "hub"}', inv).rationale
    assert "no valid decision" in parse_reply('{"decision": "MAYBE"}', inv).rationale
    assert parse_reply("[1, 2]", inv).rationale == "LLM reply has no JSON object"
    assert "- `hub` (engine eddie) (no worker runs this engine now)" in inv.markdown()


def test_parse_proposal_splits_the_name_off_and_names_problems() -> None:
    name, text, problems = parse_proposal(proposal("poet", "ford", "x"))
    assert (name, problems) == ("poet", []) and "name:" not in text and "engine: ford" in text
    assert parse_proposal("engine: ford\n")[2] == ["name None must match ^[a-z][a-z0-9-]{0,63}$"]
    assert parse_proposal("just prose")[2][0].startswith("the answer must be one YAML mapping")
    assert parse_proposal("name: [unclosed\n")[2][0].startswith("the answer is not valid YAML")
