"""Memory that is written and used (issue 27 item 1; seed 000 §2.2, §3.8 item 3): the memory
tools of Arthur, Ford and Eddie, the note Arthur keeps of a finished child's result, the
`<project-memory>` block ranked by the turn within its token budget, and a project's memory
listed and pruned over REST."""

from __future__ import annotations

import uuid

from tests.eddie_support import call
from tests.harness import System, eventually
from tests.knowledge_support import block, new_project, rest, set_project, system_prompts
from tests.knowledge_support import tool_messages as results
from tests.test_arthur_flow import assistant_says
from vance.internal.v1 import worker_pb2 as wkpb
from vance.testing.scripted_llm import Rule


async def test_memory_tools_child_results_and_the_rest_listing(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    project = await new_project(system)
    token = await system.login()
    client = await system.connect(token)
    await client.ok("session-create", {"projectId": project})
    await assistant_says(client, "Hi, I'm Arthur")
    system.script(
        Rule(
            match_last=f"remember {m}",
            tool_calls=[
                call(
                    "memory_remember",
                    scope="project",
                    text=f"the build server is zeta-{m}",
                    tags=["ops"],
                )
            ],
        ),
        Rule(
            match_last=f"delegate {m}",
            tool_calls=[
                call("process_create", name=f"w{m}", goal=f"count moons {m}", recipe="ford")
            ],
        ),
        Rule(match_last=f"count moons {m}", text=f"Jupiter has 95 moons ({m})"),
        Rule(
            match_last=f"recall {m}",
            tool_calls=[call("memory_recall", scope="project", query=f"zeta-{m} server")],
        ),
    )
    await client.ok("process-steer", {"processName": "chat", "content": f"remember {m}"})
    await assistant_says(client, f"remember {m}")
    await client.ok("process-steer", {"processName": "chat", "content": f"delegate {m}"})

    async def listed() -> list[dict[str, object]]:
        r = await rest(system, "GET", f"/projects/{project}/memory", token)
        assert r.status_code == 200, r.text
        return list(r.json()["records"])

    async def with_child_note() -> list[dict[str, object]] | None:
        records = await listed()
        return records if any("Jupiter has 95 moons" in str(x["text"]) for x in records) else None

    records = await eventually(with_child_note, timeout=40, what="the child's result noted")
    note = next(x for x in records if "Jupiter" in str(x["text"]))
    assert note["title"] == f"result of w{m}" and note["kind"] == "child-result"
    assert str(note["text"]).startswith(f"w{m} finished:")
    zeta = next(x for x in records if f"zeta-{m}" in str(x["text"]))
    assert zeta["tags"] == ["ops"] and zeta["scope"] == "project"
    # Ford has the memory and RAG tools too.
    ford = system.model_requests(f"count moons {m}")[0]
    offered = {t["function"]["name"] for t in ford.get("tools") or []}
    assert {"memory_remember", "memory_recall", "memory_forget", "rag_query"} <= offered

    await client.ok("process-steer", {"processName": "chat", "content": f"recall {m}"})
    await assistant_says(client, f"recall {m}")
    (recalled,) = results(system, f"recall {m}")
    assert recalled["notes"][0]["id"] == zeta["id"], recalled

    system.script(
        Rule(match_last=f"forget {m}", tool_calls=[call("memory_forget", id=str(zeta["id"]))])
    )
    await client.ok("process-steer", {"processName": "chat", "content": f"forget {m}"})
    await assistant_says(client, f"forget {m}")
    assert results(system, f"forget {m}") == [{"forgotten": zeta["id"]}]
    assert not [x for x in await listed() if x["id"] == zeta["id"]]

    gone = await rest(system, "DELETE", f"/projects/{project}/memory/{note['id']}", token)
    assert gone.status_code == 200, gone.text
    assert not [x for x in await listed() if x["id"] == note["id"]]
    again = await rest(system, "DELETE", f"/projects/{project}/memory/{note['id']}", token)
    assert again.status_code == 404
    missing = await rest(system, "GET", f"/projects/no-such-{m}/memory", token)
    assert missing.status_code == 404
    await client.close()


async def test_the_memory_block_holds_what_the_turn_is_about_within_its_budget(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    project = await new_project(system)
    await set_project(system, project, {"arthur.memoryTokens": "60"})
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": project})
    await assistant_says(client, "Hi, I'm Arthur")
    pid = created["chatProcessId"]

    async def record(text: str) -> None:
        await system.worker_service.RecordMemory(
            wkpb.RecordMemoryRequest(process_id=pid, scope=wkpb.MEMORY_SCOPE_PROJECT, content=text)
        )

    await record(f"the zebra{m} keys rotate on mondays")  # the oldest of 26
    for i in range(25):
        await record(f"filler note {i} about the weather and the lunch menu")
    await client.ok(
        "process-steer", {"processName": "chat", "content": f"when do zebra{m} keys rotate?"}
    )
    await assistant_says(client, f"when do zebra{m} keys rotate?")
    prompt = (await eventually(lambda: system_prompts(system, f"when do zebra{m}")))[-1]
    memory = block(prompt, "project-memory")
    lines = [x for x in memory.splitlines() if x.startswith("- ")]
    assert lines and f"zebra{m} keys rotate on mondays" in lines[0], memory
    assert sum(len(x) for x in lines) <= 60 * 4, memory
    await client.close()
