"""The hub's user story over the WebSocket (docs/architecture.md "Eddie"): login makes the home,
the hub opens with Eddie, Eddie creates a project whose Arthur gets the task as the user's
words, relays Arthur's question with its options and the answer back, hears Arthur's DONE as a
milestone and puts the long result into the inbox."""

from __future__ import annotations

import uuid

from tests.eddie_support import act, eddie_says, hub, process_status, rest
from tests.harness import System, eventually
from tests.sessions_support import new_user
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb


async def test_the_hub_user_story(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    user, token = await new_user(system)
    # Login creates the home, idempotently (a second login changes nothing).
    token = await system.login(user, "pw")
    listed = (await rest(system, "GET", "/projects?kind=SYSTEM", token)).json()["projects"]
    assert [(p["projectId"], p["kind"], p["ownerUserId"], p["group"]) for p in listed] == [
        (f"_user_{user}", "SYSTEM", user, "Home")
    ]
    setting = await system.sessions.GetUserSetting(
        spb.GetUserSettingRequest(tenant_id="default", username=user, key="home.project.id")
    )
    assert setting.value == f"_user_{user}"
    normal = (await rest(system, "GET", "/projects", token)).json()["projects"]
    assert f"_user_{user}" not in [p["projectId"] for p in normal]  # SYSTEM hidden by default

    project = f"sec_{m}"
    task = f"Task {m}: analyse the repository for security problems and make a plan"
    question = f"Which part should I audit first? ({m})"
    plan = f"# Security plan {m}\n\n1. Rotate the leaked key\n2. Pin dependencies\n\n```sh\nmake audit\n```"
    system.script(
        act("project_create", f"{m} analyse the repo", name=project, steerContent=task),
        act(
            "answer",
            f"sec_{m}",
            match=f"{m} analyse the repo",
            message="Okay, I have started a security audit project.",
            info=f"- project `{project}`\n- Arthur is on it",
        ),
        act(
            "respond",
            task,
            message=question,
            awaiting_user_input=True,
            options=[
                {"label": "Whole repository", "description": "slower"},
                {"label": "Backend only"},
            ],
        ),
        act("relay", 'type=\\"blocked\\"', match=question, source=project),
        act("respond", f"Backend only {m}", message=plan, awaiting_user_input=False),
        act(
            "relay_inbox",
            'type=\\"done\\"',
            match=f"Security plan {m}",
            spoken="Arthur finished the plan. It is in your inbox.",
            inboxTitle=f"Security plan {m}",
            body=plan,
        ),
    )
    client, opened = await hub(system, token)
    assert opened["chatEngine"] == "eddie" and opened["projectId"] == f"_user_{user}"
    await eddie_says(client, "I'm Eddie")

    await client.ok("process-steer", {"content": f"{m} analyse the repo for security problems"})
    said = await eddie_says(client, "started a security audit project")
    assert said["meta"] == {
        "action": "answer",
        "info": f"- project `{project}`\n- Arthur is on it",
    }

    # The project is NORMAL, with its own session whose chat is Arthur, not Eddie's child.
    normal = (await rest(system, "GET", "/projects", token)).json()["projects"]
    assert [p["kind"] for p in normal if p["projectId"] == project] == ["NORMAL"]
    sessions = await system.sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id="default", project_id=project)
    )
    assert len(sessions.sessions) == 1
    worker = sessions.sessions[0]
    assert worker.chat_engine == "arthur" and worker.profile == "eddie"
    arthur = await system.process(worker.chat_process_id)
    assert arthur.parent_process_id == ""

    # Arthur got the task as user input and asks; Eddie relays the question with its options.
    relayed = await eddie_says(client, question)
    assert relayed["meta"]["action"] == "relay"
    assert relayed["meta"]["options"] == [
        {"label": "Whole repository", "description": "slower"},
        {"label": "Backend only"},
    ]
    assert "1. **Whole repository** — slower" in relayed["content"]
    assert "2. **Backend only**" in relayed["content"]
    await process_status(system, worker.chat_process_id, "BLOCKED")
    hub_chat = opened["chatProcessId"]
    await process_status(system, hub_chat, "BLOCKED")
    arthur_input = [r for r in system.model_requests(task) if r["messages"][-1]["content"] == task]
    assert arthur_input and arthur_input[-1]["messages"][-1]["role"] == "user"

    # The user's answer goes back to the blocked Arthur, as the user's words.
    await client.ok("process-steer", {"content": f"Backend only {m}"})
    await eddie_says(client, "I passed your answer on.")

    # Arthur's DONE reaches Eddie as a milestone; the long plan lands in the inbox.
    spoken = await eddie_says(client, "It is in your inbox.", timeout=60)
    assert spoken["meta"]["action"] == "relay_inbox"
    added = await client.wait_for(
        lambda f: f["type"] == "inbox-item-added" and f["data"]["title"] == f"Security plan {m}",
        timeout=30,
        what="inbox-item-added",
    )
    assert added["data"]["body"] == plan
    items = (await rest(system, "GET", "/inbox", token)).json()["items"]
    assert [i["id"] for i in items if i["title"] == f"Security plan {m}"] == [
        spoken["meta"]["inboxItemId"]
    ]
    done_events = [
        r
        for r in system.model_requests('type=\\"done\\"')
        if f"Security plan {m}" in str(r["messages"][-1]["content"])
    ]
    assert done_events, "Eddie never saw Arthur's DONE"
    await process_status(system, worker.chat_process_id, "IDLE")

    async def arthur_heard_the_user() -> bool:
        messages = await system.processes.ListChatMessages(
            ppb.ListChatMessagesRequest(process_id=worker.chat_process_id)
        )
        return any(x.content == f"Backend only {m}" for x in messages.messages)

    await eventually(arthur_heard_the_user, what="Arthur's chat holding the user's answer")

    # The user reads and answers the inbox item; the answer reaches Eddie as INBOX_ANSWER.
    item_id = spoken["meta"]["inboxItemId"]
    system.script(act("answer", f'inbox-answer item=\\"{item_id}', message=f"Noted {m}."))
    read = await rest(system, "POST", f"/inbox/{item_id}/mark", token, {"read": True})
    assert read.json()["read"] is True
    answered = await rest(system, "POST", f"/inbox/{item_id}/answer", token, {"answer": "Go"})
    assert answered.json()["answered"] is True and answered.json()["answer"] == "Go"
    again = await rest(system, "POST", f"/inbox/{item_id}/answer", token, {"answer": "Stop"})
    assert again.json()["answer"] == "Go"  # answered once
    await eddie_says(client, f"Noted {m}.")
    _, other_token = await new_user(system)
    assert (await rest(system, "GET", f"/inbox/{item_id}", other_token)).status_code == 404
    await client.close()
