"""Eddie talking to projects over the WebSocket (process_service/hub/talk.py): a steer through
Eddie reaches a running project's Arthur as the user's words with `forwardedBy`; project_open
connects Eddie to a project made elsewhere in the channel mode asked for; process_command
stops and resumes; two workers' questions are answered in the hub, each answer reaching its own
asker although another event came in between (by Eddie's choice, and by the option clicked)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.eddie_support import act, call, eddie_says, hub, process_status
from tests.harness import System, WsClient, eventually
from tests.sessions_support import new_user
from vance.protoutil import struct_to_dict
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb


async def _worker(system: System, project: str) -> spb.Session:
    found = await system.sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id="default", project_id=project)
    )
    return found.sessions[0]


async def _chat(system: System, process_id: str) -> list[pb.ChatMessage]:
    listed = await system.processes.ListChatMessages(
        ppb.ListChatMessagesRequest(process_id=process_id)
    )
    return list(listed.messages)


def _tool_results(system: System, marker: str) -> list[dict[str, Any]]:
    request = system.model_requests(marker)[-1]
    return [json.loads(x["content"]) for x in request["messages"] if x["role"] == "tool"]


async def test_a_steer_through_eddie_reaches_the_running_arthur(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"login_{m}"
    _, token = await new_user(system)
    client, opened = await hub(system, token)
    hub_chat = opened["chatProcessId"]
    system.script(
        act("project_create", f"{m} make", name=project, channelMode="milestones"),
        act("answer", project, match=f"{m} make", message=f"Created {m}."),
    )
    await client.ok("process-steer", {"content": f"{m} make"})
    await eddie_says(client, f"Created {m}.")
    # Milestones include "started": a line in the hub's chat, no model turn.
    started = await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["meta"].get("milestone") == "started"
            and project in f["data"]["content"]
        ),
        what="the started milestone",
    )
    assert started["data"]["role"] == "system"
    worker = await _worker(system, project)
    await process_status(system, worker.chat_process_id, "IDLE")

    # "Tell the project to also check the login code": Arthur gets it as the user's words.
    words = f"Also check the login code {m}"
    system.script(
        act("project_steer", f"{m} tell it", project=project, message=words),
        act("answer", "outcome", match=f"{m} tell it", message=f"Told {m}."),
        act("respond", words, message=f"Checking login {m}", awaiting_user_input=False),
        act("answer", 'type=\\"done\\"', match=f"Checking login {m}", message=f"Login {m} ok."),
    )
    await client.ok("process-steer", {"content": f"{m} tell it"})
    await eddie_says(client, f"Told {m}.")
    steered = _tool_results(system, f"{m} tell it")[-1]
    assert steered["project"] == project and steered["processId"] == worker.chat_process_id
    await eddie_says(client, f"Login {m} ok.", timeout=60)
    arthur_turn = [r for r in system.model_requests(words) if r["messages"][-1]["content"] == words]
    assert arthur_turn and arthur_turn[-1]["messages"][-1]["role"] == "user"
    said = next(x for x in await _chat(system, worker.chat_process_id) if x.content == words)
    assert said.role == pb.CHAT_ROLE_USER
    assert struct_to_dict(said.meta)["forwardedBy"] == {
        "engine": "eddie",
        "processId": hub_chat,
        "viaSession": opened["sessionId"],
    }
    await client.close()


async def test_project_open_connects_and_process_command_stops_and_resumes(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"old_{m}"
    user, token = await new_user(system)
    # A project the user made without Eddie, with a running chat.
    await system.sessions.CreateProject(
        spb.CreateProjectRequest(
            tenant_id="default", project_id=project, title="Old", owner_user_id=user
        )
    )
    made = await system.sessions.CreateSession(
        spb.CreateSessionRequest(tenant_id="default", project_id=project, owner_user_id=user)
    )
    arthur = made.chat_process_id
    await process_status(system, arthur, "IDLE")
    client, _ = await hub(system, token)
    system.script(
        Rule(
            match_last=f"{m} open",
            tool_calls=[call("project_open", name=project, channelMode="inbox")],
        ),
        act("answer", "connectedTo", match=f"{m} open", message=f"Opened {m}."),
    )
    await client.ok("process-steer", {"content": f"{m} open"})
    await eddie_says(client, f"Opened {m}.")
    opened = _tool_results(system, f"{m} open")[-1]
    assert opened["connectedTo"] == arthur and opened["channelMode"] == "inbox"
    assert opened["sessions"][0]["chatProcessId"] == arthur

    # Connected in `inbox` mode: Arthur's answer goes to the user's inbox, Eddie hears of it.
    result = f"Old project result {m}"
    system.script(
        act("respond", f"{m} work", message=result, awaiting_user_input=False),
        act("answer", "in the user's inbox", match=project, message=f"Inbox {m}."),
    )
    await system.processes.Steer(
        ppb.SteerRequest(
            target=ppb.ProcessRef(process_id=arthur),
            message=pb.SteerMessage(
                user_chat_input=pb.UserChatInput(from_user=user, content=f"{m} work")
            ),
        )
    )
    await eddie_says(client, f"Inbox {m}.", timeout=60)
    items = await system.sessions.ListInboxItems(
        spb.ListInboxItemsRequest(tenant_id="default", user_id=user)
    )
    assert [i.body for i in items.items if i.source_process_id == arthur] == [result]

    # process_command: stop a worker process, resume another that was paused.
    await process_status(system, arthur, "IDLE")
    system.script(
        Rule(
            match_last=f"{m} cmd",
            tool_calls=[
                call("process_command", processId=arthur, command="pause"),
                call("process_command", processId=arthur, command="resume"),
                call("process_command", processId=arthur, command="stop"),
                call("process_command", processId=arthur, command="resume"),
            ],
        ),
        act("answer", "closed", match=f"{m} cmd", message=f"Commanded {m}."),
    )
    await client.ok("process-steer", {"content": f"{m} cmd"})
    await eddie_says(client, f"Commanded {m}.")
    paused, resumed, stopped, late = _tool_results(system, f"{m} cmd")[-4:]
    assert paused == {"processId": arthur, "status": "PAUSED"}
    assert resumed == {"processId": arthur, "status": "IDLE"}
    assert stopped == {"processId": arthur, "status": "CLOSED"}
    assert late["status"] == "ERROR" and "closed" in late["error"]
    proc = await system.process(arthur)
    assert proc.status == pb.PROCESS_STATUS_CLOSED and proc.close_reason == pb.CLOSE_REASON_STOPPED
    await client.close()


async def _ask(
    system: System,
    client: WsClient,
    m: str,
    project: str,
    task: str,
    question: str,
    labels: list[str],
) -> dict[str, Any]:
    """Eddie makes a project whose Arthur asks `question`; Eddie relays it."""
    system.script(
        act("project_create", f"{m} make {project}", name=project, steerContent=task),
        act("answer", project, match=f"{m} make {project}", message=f"Made {project}."),
        act(
            "respond",
            task,
            message=question,
            options=[{"label": x} for x in labels],
            awaiting_user_input=True,
        ),
        act("relay", question, source=project),
    )
    await client.ok("process-steer", {"content": f"{m} make {project}"})
    await eddie_says(client, f"Made {project}.")
    return await eddie_says(client, question, timeout=60)


async def test_two_questions_each_answer_reaches_its_asker(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    _, token = await new_user(system)
    client, opened = await hub(system, token)
    db_q, region_q = f"Which database {m}?", f"Which region {m}?"
    first = await _ask(system, client, m, f"db_{m}", f"Task db {m}", db_q, ["Postgres", "MySQL"])
    second = await _ask(
        system, client, m, f"rg_{m}", f"Task region {m}", region_q, ["Europe", "Asia"]
    )
    ask_db, ask_region = first["meta"]["askId"], second["meta"]["askId"]
    assert ask_db != ask_region and first["meta"]["options"][0]["label"] == "Postgres"
    db_worker = (await _worker(system, f"db_{m}")).chat_process_id
    region_worker = (await _worker(system, f"rg_{m}")).chat_process_id
    await process_status(system, db_worker, "BLOCKED")
    await process_status(system, region_worker, "BLOCKED")

    # Another event in between: a third project finishes and Eddie relays that.
    done = f"Third project done {m}"
    system.script(
        act("project_create", f"{m} make third", name=f"th_{m}", steerContent=f"Task th {m}"),
        act("answer", f"th_{m}", match=f"{m} make third", message=f"Made th {m}."),
        act("respond", f"Task th {m}", message=done, awaiting_user_input=False),
        act("relay", 'type=\\"done\\"', match=done, source=f"th_{m}"),
    )
    await client.ok("process-steer", {"content": f"{m} make third"})
    await eddie_says(client, done, timeout=60)

    # Typed, and not one of the options as said: Eddie's model sees both open questions and
    # chooses the region one.
    typed = f"{m} go with Asia please"
    system.script(
        Rule(
            match_last=typed,
            match="open-questions",
            tool_calls=[call("answer_question", askId=ask_region, message="Asia")],
        ),
        act("answer", "askId", match=typed, message=f"Passed on {m}."),
    )
    await client.ok("process-steer", {"content": typed})
    await eddie_says(client, f"Passed on {m}.")
    asked = system.model_requests(typed)[0]["messages"]
    note = next(x["content"] for x in asked if "<open-questions>" in str(x["content"]))
    assert ask_db in note and ask_region in note and asked[-1]["content"] == typed

    # Clicked: the option of the first question, with its ask id; no model turn needed.
    await client.ok("process-steer", {"content": "MySQL", "askId": ask_db})
    forwarded = await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["meta"].get("forwardedTo") == db_worker
        ),
        what="the click passed on",
    )
    assert forwarded["data"]["meta"]["askId"] == ask_db

    async def answered(process_id: str, text: str, ask: str) -> bool:
        for x in await _chat(system, process_id):
            if x.role == pb.CHAT_ROLE_USER and x.content == text:
                meta = struct_to_dict(x.meta)
                assert meta["askId"] == ask and meta["forwardedBy"]["engine"] == "eddie"
                return True
        return False

    await eventually(lambda: answered(region_worker, "Asia", ask_region), what="Asia reaching")
    await eventually(lambda: answered(db_worker, "MySQL", ask_db), what="MySQL reaching")
    # Each asker got only its own answer.
    assert not any(x.content == "MySQL" for x in await _chat(system, region_worker))
    assert not any(x.content == "Asia" for x in await _chat(system, db_worker))
    assert opened["chatProcessId"]
    await client.close()
