"""What an observed worker's output becomes for its observers (process_service/lifecycle/observations.py):
four Eddies of one user watch the same Arthur, each in another channel mode; its side-channel
frames reach every hub socket tagged `forwardedBy`; a worker addressed through Eddie never sees
client tools."""

from __future__ import annotations

import uuid
from typing import Any

from tests.eddie_support import act, eddie_says, hub
from tests.harness import System, eventually
from tests.sessions_support import new_user
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import tool_pb2_grpc
from vance.profiles import CLIENT_TOOL_PROFILES
from vance.protoutil import dict_to_struct
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb

MODES = ("milestones", "verbatim", "summary", "inbox")


def _eddie_inputs(system: System, marker: str, mode: str) -> list[str]:
    """The process events an Eddie in `mode` was given for the worker of `marker`."""
    tag = f"mode {mode}]"
    out = []
    for r in system.model_requests(marker):
        for msg in r["messages"]:
            content = str(msg.get("content") or "")
            if msg["role"] == "user" and tag in content and "<process-event" in content:
                out.append(content)
    return out


async def test_channel_modes_forwarding_and_profile_pruning(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"obs_{m}"
    client_tool = f"client_file_read_{m}"
    await tool_pb2_grpc.ToolServiceStub(system.channel("tool_service")).RegisterTools(
        tpb.RegisterToolsRequest(
            owner="test-client",
            address="127.0.0.1:9",
            tools=[
                tpb.ToolSpec(
                    name=client_tool,
                    description="reads a file on the user's machine",
                    allowed_profiles=CLIENT_TOOL_PROFILES,
                    parameters=dict_to_struct({"type": "object", "properties": {}}),
                )
            ],
        )
    )
    user, token = await new_user(system)
    hubs: dict[str, Any] = {}
    for mode in MODES:
        hubs[mode] = await hub(system, token, "web")
    milestones_client, _ = hubs["milestones"]
    system.script(act("project_create", f"{m} create", name=project))
    system.script(act("answer", project, match=f"{m} create", message="Created."))
    await milestones_client.ok("process-steer", {"content": f"{m} create"})
    await eddie_says(milestones_client, "Created.")
    sessions = await system.sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id="default", project_id=project)
    )
    worker = sessions.sessions[0]
    arthur = worker.chat_process_id
    for mode in MODES[1:]:
        client, _ = hubs[mode]
        system.script(
            act("process_observe", f"{m} observe {mode}", processId=arthur, channelMode=mode),
            act("answer", "channelMode", match=f"{m} observe {mode}", message=f"Watching {mode}."),
        )
        await client.ok("process-steer", {"content": f"{m} observe {mode}"})
        await eddie_says(client, f"Watching {mode}.")

    # Two worker turns: a command that ends without an answer (not a milestone), then a task
    # that uses a tool (side-channel progress) and answers (DONE).
    result = f"Result {m}: three findings, all minor"
    system.script(
        Rule(match="Summarise this worker output", match_last=result, text=f"Short {m}."),
        Rule(
            match_last=f"{m} work",
            tool_calls=[{"name": "process_list", "arguments": {}}],
        ),
        act("respond", "processes", match=f"{m} work", message=result, awaiting_user_input=False),
        Rule(match_last=m, match='type=\\"', text="noted", repeat=True),
    )
    steer = system.processes.Steer
    target = ppb.ProcessRef(process_id=arthur)
    command = pb.SteerMessage(external_command=pb.ExternalCommand(command="approve"))
    await steer(ppb.SteerRequest(target=target, message=command))
    await eddie_says(hubs["verbatim"][0], "noted", timeout=60)  # its own turn, told verbatim
    work = pb.SteerMessage(user_chat_input=pb.UserChatInput(from_user=user, content=f"{m} work"))
    await steer(ppb.SteerRequest(target=target, message=work))
    for mode in MODES:
        await eddie_says(hubs[mode][0], "noted", timeout=60)

    async def all_heard() -> bool:
        return all(
            any('type="done"' in x for x in _eddie_inputs(system, m, mode)) for mode in MODES
        )

    await eventually(all_heard, timeout=60, what="every observer hearing DONE")
    milestones = _eddie_inputs(system, m, "milestones")
    verbatim = _eddie_inputs(system, m, "verbatim")
    summary = _eddie_inputs(system, m, "summary")
    inbox = _eddie_inputs(system, m, "inbox")
    # milestones: only the DONE, with the answer; no event for the command's turn.
    assert milestones and all('type="done"' in x and result in x for x in milestones)
    # verbatim: the command's turn too, and the DONE with all the worker wrote.
    assert any('type="summary"' in x for x in verbatim)
    assert any('type="done"' in x and result in x for x in verbatim)
    # summary: condensed by a fast-tier call in Eddie's lane.
    assert any('type="done"' in x and f"Short {m}." in x and result not in x for x in summary)
    # inbox: an acknowledgement for Eddie, the original in the user's inbox.
    assert any("in the user's inbox" in x and result not in x for x in inbox)
    items = await system.sessions.ListInboxItems(
        spb.ListInboxItemsRequest(tenant_id="default", user_id=user)
    )
    assert [i.body for i in items.items if i.source_process_id == arthur] == [result]
    # The DONE reached the milestones Eddie once: its turn's input holds it once.
    last = [
        r
        for r in system.model_requests(result)
        if any("mode milestones]" in str(x.get("content")) for x in r["messages"])
    ][-1]
    assert sum(result in str(x.get("content")) for x in last["messages"]) == 1

    # Side channel: Arthur's tool progress reached every hub socket, tagged with the hop.
    for mode in MODES:
        client, opened = hubs[mode]
        forwarded = await client.wait_for(
            lambda f: (
                f["type"] == "process-progress"
                and f.get("forwardedBy")
                and f["data"]["processId"] == arthur
            ),
            timeout=30,
            what=f"a forwarded progress frame ({mode})",
        )
        assert forwarded["forwardedBy"] == {
            "engine": "eddie",
            "processId": opened["chatProcessId"],
            "viaSession": opened["sessionId"],
        }
        assert forwarded["data"]["payload"]["tool"] == "process_list"

    # The worker addressed through Eddie (profile eddie) never saw the client tool.
    arthur_requests = [r for r in system.model_requests(f"{m} work") if r.get("tools")]
    assert arthur_requests
    for r in arthur_requests:
        names = [t["function"]["name"] for t in r["tools"]]
        assert "process_create" in names and client_tool not in names
    pool = await tool_pb2_grpc.ToolServiceStub(system.channel("tool_service")).ResolvePool(
        tpb.ResolvePoolRequest(engine_tools=["client_*"], profile="foot")
    )
    assert client_tool in [t.name for t in pool.tools]
    for _, (client, _) in hubs.items():
        await client.close()
