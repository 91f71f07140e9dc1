"""Eddie's guards (seed 001 §5.5-5.6, §8), over the WebSocket: spawn and steer tools refused on
a turn that carries only events; worker Markdown never spoken; tools hidden from the model not
invocable by it (and `hub_switch_to` refused for a profile that cannot mediate); `project_list`
limited to the user's own and shared projects; a failed summary falls back to the milestone
text; hub settings private to their owner, admins included, with the user's own
`chat.language` settable without admin rights; profiles applying per connection."""

from __future__ import annotations

import json
import uuid
from typing import Any

import websockets

from tests.eddie_support import act, call, eddie_says, hub, process_status, rest
from tests.harness import System, WsClient, eventually
from tests.sessions_support import new_user
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import tool_pb2_grpc
from vance.profiles import CLIENT_TOOL_PROFILES
from vance.protoutil import dict_to_struct
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb


def _tool_results(system: System, marker: str) -> list[dict[str, Any]]:
    request = system.model_requests(marker)[-1]
    return [json.loads(x["content"]) for x in request["messages"] if x["role"] == "tool"]


async def test_event_turns_refuse_spawns_and_worker_markdown_is_never_spoken(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    user, token = await new_user(system)
    client, opened = await hub(system, token)
    goal = f"Look something up {m}"
    markdown = f"**Result {m}**\n\n- alpha\n- beta"
    system.script(
        act("process_create", f"{m} look", name="lookup", goal=goal, recipe="quick-lookup"),
        act("answer", "lookup", match=f"{m} look", message="Looking."),
        Rule(match_last=goal, text=markdown),
        # The event-only turn tries to spawn and create: both refused, nothing started.
        Rule(
            match_last='type=\\"done\\"',
            match=f"Result {m}",
            tool_calls=[
                call("process_create", name="again", goal="more"),
                call("project_create", name=f"loop_{m}"),
            ],
        ),
        act("relay", "refused", match=f"Result {m}", source="lookup"),
    )
    await client.ok("process-steer", {"content": f"{m} look"})
    await eddie_says(client, "Looking.")
    shown = await eddie_says(client, "Here is what", timeout=60)
    assert shown["content"] == "Here is what lookup says."  # spoken: no Markdown
    assert shown["meta"]["action"] == "answer" and shown["meta"]["info"] == markdown
    spawn, create = _tool_results(system, f"Result {m}")[-2:]
    assert spawn["status"] == "ERROR" and spawn["error"].startswith("refused")
    assert create["status"] == "ERROR" and create["error"].startswith("refused")
    listed = await system.processes.ListProcesses(
        ppb.ListProcessesRequest(session_id=opened["sessionId"], include_terminated=True)
    )
    assert "again" not in [p.name for p in listed.processes]
    projects = (await rest(system, "GET", "/projects", token)).json()["projects"]
    assert f"loop_{m}" not in [p["projectId"] for p in projects]

    # Long output with code: never spoken, it goes to the inbox.
    goal2 = f"Write the script {m}"
    code = f"Script {m}:\n\n```python\n" + "print('x')\n" * 150 + "```"
    system.script(
        act("process_create", f"{m} script", name="coder", goal=goal2, recipe="quick-lookup"),
        act("answer", "coder", match=f"{m} script", message="Writing."),
        Rule(match_last=goal2, text=code),
        act("relay", 'type=\\"done\\"', match=f"Script {m}", source="coder", message=code),
    )
    await client.ok("process-steer", {"content": f"{m} script"})
    inboxed = await eddie_says(client, "It is in your inbox.", timeout=60)
    assert inboxed["meta"]["action"] == "relay_inbox" and "```" not in inboxed["content"]
    items = await system.sessions.ListInboxItems(
        spb.ListInboxItemsRequest(tenant_id="default", user_id=user)
    )
    assert [i.id for i in items.items if i.body == code] == [inboxed["meta"]["inboxItemId"]]
    await client.close()


async def test_hidden_tools_project_scope_and_summary_fallback(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    other, _ = await new_user(system)
    user, token = await new_user(system)
    for owner, name in ((other, f"theirs_{m}"), (user, f"mine_{m}")):
        await system.sessions.CreateProject(
            spb.CreateProjectRequest(
                tenant_id="default", project_id=name, title=name, owner_user_id=owner
            )
        )
    client, opened = await hub(system, token, "web")
    system.script(
        Rule(
            match_last=f"{m} guess",
            tool_calls=[
                call("project_list"),
                call("hub_switch_to", target=f"mine_{m}", reason="guessed"),
                call("plan_store", title="sneaky", steps=["x"]),
            ],
        ),
        act("answer", "unknown tool", match=f"{m} guess", message=f"Checked {m}."),
    )
    await client.ok("process-steer", {"content": f"{m} guess"})
    await eddie_says(client, f"Checked {m}.")
    listed, switch, store = _tool_results(system, f"{m} guess")[-3:]
    names = [p["name"] for p in listed["projects"]]
    assert f"mine_{m}" in names and "demo" in names and f"theirs_{m}" not in names
    assert switch["status"] == "ERROR" and "unknown tool" in switch["error"]
    assert store["status"] == "ERROR" and "unknown tool" in store["error"]
    assert not client.of_type("switch-to") and not client.of_type("plan-proposed")

    # Called by an engine for a profile that cannot mediate, hub_switch_to is refused too.
    invoked = await tool_pb2_grpc.ToolServiceStub(system.channel("tool_service")).InvokeTool(
        tpb.InvokeToolRequest(
            tool_name="hub_switch_to",
            arguments=dict_to_struct({"target": f"mine_{m}", "reason": "x"}),
            process_id=opened["chatProcessId"],
            session_id=opened["sessionId"],
            tool_call_id="probe",
            idempotency_key=f"probe-{m}",
            profile="mobile",
        )
    )
    assert invoked.status == pb.TOOL_CALL_STATUS_ERROR and "cannot mediate" in invoked.error

    # channelMode summary with a failing summarizer: Eddie hears the milestone's own text.
    result = f"Findings {m}: nothing critical"
    system.script(
        act(
            "project_create",
            f"{m} summarise",
            name=f"sum_{m}",
            steerContent=f"Task sum {m}",
            channelMode="summary",
        ),
        act("answer", f"sum_{m}", match=f"{m} summarise", message=f"Made sum {m}."),
        act("respond", f"Task sum {m}", message=result, awaiting_user_input=False),
        Rule(match="Summarise this worker output", match_last=result, fail_status=500, repeat=True),
        act("answer", result, match='type=\\"done\\"', message=f"Heard {m}."),
    )
    await client.ok("process-steer", {"content": f"{m} summarise"})
    await eddie_says(client, f"Heard {m}.", timeout=90)
    tried = [r for r in system.model_requests(result) if "Summarise this worker" in json.dumps(r)]
    assert tried  # the summary was asked for, failed (500), and the milestone text stood
    heard = [
        r
        for r in system.model_requests(result)
        if 'type=\\"done\\"' in json.dumps(r) and "Summarise this worker" not in json.dumps(r)
    ]
    assert heard and "You said" not in json.dumps(heard[-1]["messages"][-1])
    await client.close()


async def test_hub_settings_are_private_and_users_set_their_language(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    user, token = await new_user(system)
    _, admin_token = await new_user(system, admin=True)
    hub_settings = f"/project/_user_{user}/settings"
    assert (await rest(system, "GET", hub_settings, admin_token)).status_code == 404
    patched = await rest(
        system, "PATCH", hub_settings, admin_token, {"set": {"chat.language": "fr"}}
    )
    assert patched.status_code == 404
    # The user sets their own language, no admin role needed; other keys stay admin-only.
    mine = await rest(system, "PATCH", "/me/settings", token, {"set": {"chat.language": "de"}})
    assert mine.status_code == 200, mine.text
    assert mine.json()["effective"]["chat.language"] == "de"
    assert mine.json()["projectId"] == f"_user_{user}"
    lifecycle = await rest(
        system, "PATCH", "/me/settings", token, {"set": {"vance.session.idle-timeout-ms": "1000"}}
    )
    assert lifecycle.status_code == 403 and lifecycle.json()["detail"]["reason"] == "admin_required"
    tenant = await rest(system, "PATCH", "/settings", token, {"set": {"chat.language": "de"}})
    assert tenant.status_code == 403
    assert (await rest(system, "GET", "/me/settings", token)).json()["values"] == {
        "chat.language": "de"
    }
    # Eddie speaks it from the next turn.
    client, _ = await hub(system, token)
    system.script(act("answer", f"{m} hallo", message=f"Hallo {m}."))
    await client.ok("process-steer", {"content": f"{m} hallo"})
    await eddie_says(client, f"Hallo {m}.")
    prompt = system.model_requests(f"{m} hallo")[-1]["messages"][0]["content"]
    assert "Speak de" in prompt and "Perfekt statt" in prompt
    await client.close()


async def _connect(system: System, token: str, profile: str) -> WsClient:
    ws = await websockets.connect(
        f"ws://{system.gateway}/brain/default/ws",
        additional_headers={"Authorization": f"Bearer {token}", "X-Vance-Profile": profile},
        max_size=None,
    )
    return await WsClient(ws).start()


async def test_a_user_in_a_project_eddie_made_gets_their_own_client_tools(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"prof_{m}"
    probe = f"process_clientprobe_{m}"  # in Arthur's pool (process_*) for client profiles only
    await tool_pb2_grpc.ToolServiceStub(system.channel("tool_service")).RegisterTools(
        tpb.RegisterToolsRequest(
            owner=f"test-client-{m}",
            address="127.0.0.1:9",
            tools=[
                tpb.ToolSpec(
                    name=probe,
                    description="runs on the user's machine",
                    allowed_profiles=CLIENT_TOOL_PROFILES,
                    parameters=dict_to_struct({"type": "object", "properties": {}}),
                )
            ],
        )
    )
    _, token = await new_user(system)
    client, _ = await hub(system, token)
    first, second = f"First task {m}", f"Second task {m}"
    system.script(
        act("project_create", f"{m} make", name=project, steerContent=first),
        act("answer", project, match=f"{m} make", message=f"Made {m}."),
        act("respond", first, message=f"One {m}", awaiting_user_input=False),
        act("respond", second, message=f"Two {m}", awaiting_user_input=False),
    )
    await client.ok("process-steer", {"content": f"{m} make"})
    await eddie_says(client, f"Made {m}.")
    worker = (
        await system.sessions.ListSessions(
            spb.ListSessionsRequest(tenant_id="default", project_id=project)
        )
    ).sessions[0]
    await process_status(system, worker.chat_process_id, "IDLE")

    def tools_of(marker: str) -> list[str]:
        request = next(
            r for r in system.model_requests(marker) if r["messages"][-1]["content"] == marker
        )
        return [t["function"]["name"] for t in request["tools"]]

    await eventually(lambda: system.model_requests(f"One {m}") or None, what="the first turn")
    assert probe not in tools_of(first)  # addressed through Eddie: profile eddie

    # The user goes into the project with their terminal client (profile foot).
    foot = await _connect(system, token, "foot")
    await foot.ok("session-resume", {"sessionId": worker.session_id})
    assert (await system.process(worker.chat_process_id)).connection_profile == "foot"
    await foot.ok("process-steer", {"content": second})
    await foot.wait_for(
        lambda f: f["type"] == "chat-message-appended" and f["data"]["content"] == f"Two {m}",
        timeout=45,
        what="the second answer",
    )
    assert probe in tools_of(second)
    await foot.close()

    async def reset() -> bool:
        return str((await system.process(worker.chat_process_id)).connection_profile) == ""

    await eventually(reset, what="the session's own profile back")
    await client.close()
