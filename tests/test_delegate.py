"""process_create_delegate against the real services and the scripted model: the selector's
MATCH and every NONE row, Slartibartfast's sync and async fallback, its failure after the
repair attempts, the wait cutoff, and the engine catalog reload."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx

from engine_worker.engines.slartibartfast import parse_proposal
from recipe_service.inventory import RECIPE_LIST_LIMIT, Inventory, InventoryEntry
from recipe_service.models import RecipeSource
from recipe_service.selector import Decision, parse_reply
from tests.harness import System, WsClient, eventually
from tests.test_arthur_flow import call, wait_statuses
from vance.convert import process_from_proto
from vance.protoutil import dict_to_struct, from_value
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import recipe_pb2_grpc, tool_pb2_grpc
from vance.v1 import session_pb2 as spb
from vance.v1 import tool_pb2 as tpb

TENANT = "default"
SELECTOR = "recipe-selector"  # the purpose selector calls are sent with
LISTED_BUNDLED = ["analyze", "default", "discuss", "ford", "quick-lookup", "web-research"]


def recipes(system: System) -> recipe_pb2_grpc.RecipeServiceStub:
    return recipe_pb2_grpc.RecipeServiceStub(system.channel("recipe_service"))


def selector_says(m: str, reply: dict[str, Any] | str, **kw: Any) -> Rule:
    text = reply if isinstance(reply, str) else json.dumps(reply)
    return Rule(purpose=SELECTOR, match=m, text=text, **kw)


def selector_calls(system: System, marker: str = "") -> list[dict[str, Any]]:
    seen = list(system.llm.script.side_requests.get(SELECTOR, []))
    return [r for r in seen if marker in json.dumps(r)]


def proposal(name: str, engine: str, marker: str) -> str:
    return (
        "Here is the recipe.\n```yaml\n"
        f"name: {name}\n"
        f"description: Writes short poems about a given theme ({marker}).\n"
        f"engine: {engine}\n"
        "title: Poem writer\n"
        "params:\n  model: default:fast\n  maxIterations: 2\n"
        "promptMode: APPEND\n"
        f"promptPrefix: |\n  Write the poem. POEM-{marker}\n"
        "```\n"
    )


async def project(system: System, m: str, stored: dict[str, str] | None = None) -> str:
    pid = f"dg-{m}"
    await system.sessions.CreateProject(
        spb.CreateProjectRequest(tenant_id=TENANT, project_id=pid, title=pid)
    )
    for name, text in (stored or {}).items():
        await recipes(system).CreateRecipe(
            rpb.CreateRecipeRequest(tenant_id=TENANT, project_id=pid, name=name, yaml=text)
        )
    return pid


async def caller(system: System, pid: str, recipe: str = "") -> tuple[WsClient, str]:
    """A session in the project; its chat process is the caller of the tool."""
    client = await system.connect()
    data = {"projectId": pid, **({"recipe": recipe} if recipe else {})}
    created = await client.ok("session-create", data)
    await wait_statuses(client, {"chat": "IDLE"})
    return client, str(created["chatProcessId"])


async def delegate(system: System, process_id: str, **args: Any) -> dict[str, Any]:
    stub = tool_pb2_grpc.ToolServiceStub(system.channel("tool_service"))
    resp = await stub.InvokeTool(
        tpb.InvokeToolRequest(
            tool_name="process_create_delegate",
            arguments=dict_to_struct(args),
            process_id=process_id,
            idempotency_key=uuid.uuid4().hex,
        )
    )
    assert resp.status == pb.TOOL_CALL_STATUS_SUCCESS, resp.error
    result: dict[str, Any] = from_value(resp.result)
    return result


async def names(client: WsClient) -> dict[str, dict[str, Any]]:
    listed = await client.ok("process-list", {"includeTerminated": True})
    return {p["processName"]: p for p in listed["processes"]}


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
    inventory = await recipes(system).ListInventory(
        rpb.ListInventoryRequest(tenant_id=TENANT, project_id=pid)
    )
    assert list(inventory.recipes) == [] and inventory.total == 0
    await client.close()


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
        still = await recipes(system).ListEngines(
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
    inventory = await recipes(system).ListInventory(
        rpb.ListInventoryRequest(tenant_id=TENANT, project_id=pid, available_engines=["ford"])
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
