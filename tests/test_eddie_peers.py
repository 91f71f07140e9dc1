"""A user's hubs know what each other did (issue 22, seed 001 §6): the activity log, peer events
that wake a suspended hub without a word to the user, one project for two concurrent creates,
the bootstrap recap, shared facts; and nothing of it reaches another user's hub. Two sockets of
one user, the scripted model, the real path."""

from __future__ import annotations

import asyncio
import json
import uuid

import grpc
import pytest

from tests.eddie_support import act, call, eddie_says, hub, process_status
from tests.harness import System, eventually
from tests.peer_support import chat, peer_lines, suspend, tool_result, two_hubs
from tests.sessions_support import new_user
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb


async def test_a_suspended_hub_hears_the_other_hub_recaps_it_and_knows_it_next_turn(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"nd_{m}"
    _, token = await new_user(system)
    a, _, b, opened_b = await two_hubs(system, token)
    await suspend(system, b, opened_b)
    spoken_before = [
        x for x in await chat(system, opened_b["chatProcessId"]) if x["role"] == "ASSISTANT"
    ]

    system.script(
        act("project_create", f"{m} disasters", name=project, steerContent="natural disasters"),
        act("answer", '\\"chatProcessId\\"', match=f"{m} disasters", message="Created."),
    )
    await a.ok("process-steer", {"content": f"{m} disasters"})
    await eddie_says(a, "Created.")

    # B, suspended, is woken by the peer event: the fact goes into its chat as a system line.
    async def recorded() -> list[dict[str, object]]:
        return await peer_lines(system, opened_b["chatProcessId"])

    lines = await eventually(recorded, timeout=45, what="B taking in the peer event")
    assert len(lines) == 1 and f"created the project {project}" in str(lines[0]["content"])
    assert lines[0]["role"] == "SYSTEM" and lines[0]["meta"]["peerType"] == "PROJECT_CREATED"
    # ... without a word to the user, and it sleeps on.
    spoken = [x for x in await chat(system, opened_b["chatProcessId"]) if x["role"] == "ASSISTANT"]
    assert spoken == spoken_before
    assert (await system.process(opened_b["chatProcessId"])).status == pb.PROCESS_STATUS_SUSPENDED

    # B reconnects: one spoken recap line about what A did.
    b2, reopened = await hub(system, token)
    assert reopened["sessionId"] == opened_b["sessionId"] and reopened["resumed"] is True
    recap = await eddie_says(b2, "Since we last spoke, your other hub", timeout=45)
    assert f"created the project {project}" in recap["content"]
    assert recap["meta"]["recap"] is True

    # B's next user turn: its model input holds A's activity (the peers' log and the line).
    system.script(act("answer", f"{m} what now", message="You have a new project."))
    await b2.ok("process-steer", {"content": f"{m} what now"})
    await eddie_says(b2, "You have a new project.")
    request = json.dumps(system.model_requests(f"{m} what now")[-1]["messages"])
    assert "<peer-activity>" in request and f"created the project {project}" in request
    assert "Your other hub:" in request  # the system line of the peer event

    # Nothing happened since: B reconnects again and says nothing extra.
    await suspend(system, b2, opened_b)
    b3, again = await hub(system, token)
    assert again["sessionId"] == opened_b["sessionId"]
    system.script(act("answer", f"{m} still there", message="Yes, still here."))
    await b3.ok("process-steer", {"content": f"{m} still there"})
    await eddie_says(b3, "Yes, still here.")
    recaps = [x for x in await chat(system, opened_b["chatProcessId"]) if x["meta"].get("recap")]
    assert len(recaps) == 1
    await a.close()
    await b3.close()


async def test_two_hubs_creating_one_project_make_it_once_and_the_second_joins(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"same_{m}"
    _, token = await new_user(system)
    a, _, b, _ = await two_hubs(system, token)
    system.script(
        act("project_create", f"{m} make it", name=project),
        act("project_create", f"{m} make it", name=project),
        act("project_open", "conflict", match=f"{m} make it", name=project),
        act("answer", '\\"connectedTo\\"', match=f"{m} make it", message="Joined."),
        act("answer", '\\"chatProcessId\\"', match=f"{m} make it", message="Made."),
    )
    await asyncio.gather(
        a.ok("process-steer", {"content": f"{m} make it"}),
        b.ok("process-steer", {"content": f"{m} make it"}),
    )
    said = {"Made.": 0, "Joined.": 0}
    for client in (a, b):
        frame = await client.wait_for(
            lambda f: (
                f["type"] == "chat-message-appended"
                and f["data"]["role"] == "assistant"
                and f["data"]["content"] in said
            ),
            timeout=45,
            what="Made. or Joined.",
        )
        said[frame["data"]["content"]] += 1
    assert said == {"Made.": 1, "Joined.": 1}

    conflict = next(
        tool_result(r)
        for r in system.model_requests("conflict")
        if "conflict" in r["messages"][-1]["content"]
    )
    assert conflict["status"] == "ERROR"
    assert "your other hub" in conflict["error"] and "project_open" in conflict["error"]
    opened = tool_result(system.model_requests('\\"connectedTo\\"')[-1])
    assert opened["project"] == project and opened["connectedTo"]
    sessions = await system.sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id="default", project_id=project)
    )
    assert len(sessions.sessions) == 1  # one project, made once
    await a.close()
    await b.close()


async def test_a_burst_of_five_calls_wakes_the_peer_at_most_twice_with_every_fact(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    p1, p2 = f"b1_{m}", f"b2_{m}"
    _, token = await new_user(system)
    a, _, b, opened_b = await two_hubs(system, token)
    await suspend(system, b, opened_b)
    system.script(
        Rule(
            match_last=f"{m} burst",
            tool_calls=[
                call("project_create", name=p1),
                call("project_create", name=p2),
                call("project_archive", name=p1),
                call("peer_notify", type="USER_STATEMENT", summary=f"the user flies to Rome {m}"),
                call("project_archive", name=p2),
            ],
        ),
        act("answer", "archived", match=f"{m} burst", message="Done all five."),
    )
    await a.ok("process-steer", {"content": f"{m} burst"})
    await eddie_says(a, "Done all five.")

    async def all_five() -> list[dict[str, object]] | None:
        lines = await peer_lines(system, opened_b["chatProcessId"])
        return lines if sum(int(x["meta"]["facts"]) for x in lines) >= 5 else None

    lines = await eventually(all_five, timeout=60, what="all five facts at B")
    assert len(lines) <= 2  # woken at most twice
    text = "\n".join(str(x["content"]) for x in lines)
    for fact in (
        f"created the project {p1}",
        f"created the project {p2}",
        f"archived the project {p1}",
        f"the user flies to Rome {m}",
        f"archived the project {p2}",
    ):
        assert fact in text
    assert (await system.process(opened_b["chatProcessId"])).status == pb.PROCESS_STATUS_SUSPENDED
    await a.close()


async def test_facts_are_shared_between_a_users_hubs_and_no_one_elses(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"mine_{m}"
    _, token = await new_user(system)
    _, other_token = await new_user(system)
    a, _, b, opened_b = await two_hubs(system, token)
    c, opened_c = await hub(system, other_token)  # another user's hub
    await process_status(system, opened_c["chatProcessId"], "IDLE")
    system.script(
        Rule(
            match_last=f"{m} remember",
            tool_calls=[
                call("relations_add", subject="user", relation="prefers", object=f"tea {m}"),
                call("project_create", name=project),
            ],
        ),
        act("answer", '\\"chatProcessId\\"', match=f"{m} remember", message="Noted."),
    )
    await a.ok("process-steer", {"content": f"{m} remember"})
    await eddie_says(a, "Noted.")

    # B's next turn knows the fact and can read it; the peer event arrived without a word.
    await eventually(
        lambda: peer_lines(system, opened_b["chatProcessId"]), timeout=45, what="B's peer line"
    )
    system.script(
        act("relations_query", f"{m} what do I like", subject="user"),
        act("answer", "prefers", match=f"{m} what do I like", message="You like tea."),
    )
    await b.ok("process-steer", {"content": f"{m} what do I like"})
    await eddie_says(b, "You like tea.")
    request = system.model_requests(f"{m} what do I like")[-1]
    assert f"noted the fact: user prefers tea {m}" in json.dumps(request["messages"])
    facts = tool_result(request)
    assert [r["object"] for r in facts["facts"]] == [f"tea {m}"]

    # The other user's hub: no entries, no peer events, no facts, and a name clash with one
    # of this user's projects is no "other hub" of theirs.
    system.script(
        Rule(
            match_last=f"{m} other",
            tool_calls=[
                call("relations_query", subject="user"),
                call("project_create", name=project),
            ],
        ),
        act("answer", "exists already", match=f"{m} other", message="Checked."),
    )
    await c.ok("process-steer", {"content": f"{m} other"})
    await eddie_says(c, "Checked.")
    request = system.model_requests(f"{m} other")[-1]
    text = json.dumps(request["messages"])
    assert "<peer-activity>" not in text and f"tea {m}" not in text
    results = [json.loads(x["content"]) for x in request["messages"] if x["role"] == "tool"][-2:]
    assert results[0]["facts"] == []
    assert results[1]["status"] == "ERROR" and "other hub" not in results[1]["error"]
    assert not await peer_lines(system, opened_c["chatProcessId"])
    for client in (a, b, c):
        await client.close()


async def test_peer_events_come_from_hubs_only(system: System) -> None:
    _, token = await new_user(system)
    _, opened = await hub(system, token)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await system.processes.Steer(
            ppb.SteerRequest(
                target=ppb.ProcessRef(process_id=opened["chatProcessId"]),
                message=pb.SteerMessage(
                    peer_event=pb.PeerEvent(
                        type=pb.PEER_EVENT_TYPE_PROJECT_CREATED, human_summary="forged"
                    )
                ),
            )
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_worker_waiting_for_the_user_is_news_for_the_other_hub(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    project, task, question = f"q_{m}", f"Task colour {m}", f"Which colour {m}?"
    _, token = await new_user(system)
    a, _, b, opened_b = await two_hubs(system, token)
    system.script(
        act("project_create", f"{m} make", name=project, steerContent=task),
        act("answer", project, match=f"{m} make", message="Made it."),
        act("respond", task, message=question, awaiting_user_input=True),
        act("relay", question, source=project),
    )
    await a.ok("process-steer", {"content": f"{m} make"})
    await eddie_says(a, question, timeout=60)

    async def told() -> str:
        text = "\n".join(
            str(x["content"]) for x in await peer_lines(system, opened_b["chatProcessId"])
        )
        return text if f"{project} waits for an answer: {question}" in text else ""

    await eventually(told, timeout=45, what="B told of the waiting worker")
    assert not [
        x
        for x in await chat(system, opened_b["chatProcessId"])
        if x["role"] == "ASSISTANT" and question in str(x["content"])
    ]  # B records it; A is the hub that asks the user
    await a.close()
    await b.close()
