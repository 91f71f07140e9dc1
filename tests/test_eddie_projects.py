"""Eddie as a client of a project's Arthur, not its parent: suspending the hub leaves the worker
alone, and what the worker reports meanwhile waits in Eddie's inbox until the hub is back. The
hub tools list, pause and archive the user's projects."""

from __future__ import annotations

import json
import uuid

from tests.eddie_support import act, call, eddie_says, hub, process_status
from tests.harness import System, eventually
from tests.lifecycle_support import store
from tests.sessions_support import new_user
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb


async def test_a_suspended_hub_leaves_the_worker_running_and_hears_it_later(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"bg_{m}"
    user, token = await new_user(system)
    result = f"Background result {m}"
    system.script(
        act("project_create", f"{m} start", name=project),
        act("answer", project, match=f"{m} start", message="Started."),
        act("respond", f"{m} bg work", message=result, awaiting_user_input=False),
        act("answer", 'type=\\"done\\"', match=result, message=f"Back: {m} is done."),
    )
    client, opened = await hub(system, token)
    await client.ok("process-steer", {"content": f"{m} start"})
    await eddie_says(client, "Started.")
    await client.close()
    worker = (
        await system.sessions.ListSessions(
            spb.ListSessionsRequest(tenant_id="default", project_id=project)
        )
    ).sessions[0]
    await system.sessions.SuspendSession(
        spb.SuspendSessionRequest(
            tenant_id="default", session_id=opened["sessionId"], cause=pb.SUSPEND_CAUSE_IDLE
        )
    )
    await process_status(system, opened["chatProcessId"], "SUSPENDED")

    # The worker is not suspended with the hub and works on.
    await system.processes.Steer(
        ppb.SteerRequest(
            target=ppb.ProcessRef(process_id=worker.chat_process_id),
            message=pb.SteerMessage(
                user_chat_input=pb.UserChatInput(from_user=user, content=f"{m} bg work")
            ),
        )
    )

    # The steer may still be pending (the worker reads IDLE until its turn starts): wait for
    # the answer itself, then for the turn's end.
    async def answered() -> bool:
        messages = await system.processes.ListChatMessages(
            ppb.ListChatMessagesRequest(process_id=worker.chat_process_id)
        )
        return any(x.content == result for x in messages.messages)

    await eventually(answered, what="the worker's answer")
    await process_status(system, worker.chat_process_id, "IDLE")

    # The DONE is steered into Eddie's inbox after the worker's commit (observations.py),
    # so it can land a moment after the IDLE; it waits there while Eddie is suspended. It is
    # keyed by the worker's turn (`<process>:<turn>:obs:<observer>`). The worker's STARTED
    # (`<process>:started:obs:...`) may wait beside it: it comes when the worker's start turn
    # commits, which under load can be after Eddie's answer and the suspend.
    async def waiting() -> list[str] | None:
        async with store(system) as db:
            doc = await db["processes"].find_one({"_id": opened["chatProcessId"]})
        assert doc is not None
        keys = [*(doc.get("pending_keys") or ()), *(doc.get("owned_keys") or ())]
        turns = [
            k for k in keys if k.startswith(f"{worker.chat_process_id}:") and ":started:" not in k
        ]
        return turns or None

    assert len(await eventually(waiting, what="the DONE in Eddie's inbox")) == 1
    assert (await system.process(opened["chatProcessId"])).status == pb.PROCESS_STATUS_SUSPENDED

    # The next hub connection resumes that session; Eddie hears the DONE once.
    again, reopened = await hub(system, token)
    assert reopened["sessionId"] == opened["sessionId"] and reopened["resumed"] is True
    await eddie_says(again, f"Back: {m} is done.")
    heard = [
        r
        for r in system.model_requests(result)
        if 'type=\\"done\\"' in json.dumps(r["messages"][-1])
    ]
    assert len(heard) == 1
    await again.close()


async def test_hub_tools_list_pause_and_archive_projects(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"tl_{m}"
    _, token = await new_user(system)
    system.script(
        act("project_create", f"{m} make", name=project),
        act("project_create", project, match=f"{m} make", name=project),
        act("answer", "exists already", match=f"{m} make", message="Made."),
    )
    client, _ = await hub(system, token)
    await client.ok("process-steer", {"content": f"{m} make"})
    await eddie_says(client, "Made.")
    duplicate = json.loads(system.model_requests("exists already")[-1]["messages"][-1]["content"])
    assert duplicate["status"] == "ERROR" and "project_open" in duplicate["error"]
    worker = (
        await system.sessions.ListSessions(
            spb.ListSessionsRequest(tenant_id="default", project_id=project)
        )
    ).sessions[0]
    system.script(
        Rule(
            match_last=f"{m} tidy",
            tool_calls=[
                call("project_list"),
                call("process_command", processId=worker.chat_process_id, command="pause"),
                call("process_command", processId="proc_not_mine", command="stop"),
                call("project_archive", name=project),
                call("project_list", kind="ALL"),
            ],
        ),
        act("answer", "archived", match=f"{m} tidy", message="Tidied."),
    )
    await client.ok("process-steer", {"content": f"{m} tidy"})
    await eddie_says(client, "Tidied.")
    request = system.model_requests(f"{m} tidy")[-1]
    results = [json.loads(x["content"]) for x in request["messages"] if x["role"] == "tool"][-5:]
    listed, paused, foreign, archived, after = results
    assert project in [p["name"] for p in listed["projects"]]
    assert paused == {"processId": worker.chat_process_id, "status": "PAUSED"}
    assert foreign["status"] == "ERROR" and "no process" in foreign["error"]
    assert archived == {"project": project, "archived": True}
    assert project not in [p["name"] for p in after["projects"]]  # archived: hidden
    assert any(p["kind"] == "SYSTEM" for p in after["projects"])  # the hub itself, kind=ALL
    await process_status(system, worker.chat_process_id, "PAUSED")
    await client.close()


async def test_eddie_spawns_a_local_ford_and_relays_its_result(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    goal = f"List the primes below 20 {m}"
    answer = f"Primes below 20 {m}: 2, 3, 5, 7, 11, 13, 17, 19"
    system.script(
        act("process_create", f"{m} primes", name="lookup", goal=goal, recipe="quick-lookup"),
        act("answer", "lookup", match=f"{m} primes", message="On it."),
        Rule(match_last=goal, text=answer),
        act("relay", 'type=\\"done\\"', match=answer, source="lookup"),
    )
    _, token = await new_user(system)
    client, opened = await hub(system, token)
    await client.ok("process-steer", {"content": f"{m} primes"})
    await eddie_says(client, "On it.")
    relayed = await eddie_says(client, answer, timeout=60)
    assert relayed["meta"] == {"action": "relay", "source": "lookup"}
    listed = await system.processes.ListProcesses(
        ppb.ListProcessesRequest(session_id=opened["sessionId"], include_terminated=True)
    )
    ford = next(p for p in listed.processes if p.name == "lookup")
    assert ford.engine == "ford" and ford.parent_process_id == opened["chatProcessId"]
    await client.close()
