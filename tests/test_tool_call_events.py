"""A turn's tool calls and spawns as session events (docs/protocol.md, process-progress kinds
TOOL_CALL_STARTED, TOOL_CALL_COMPLETED, PROCESS_SPAWNED), the `how_do_i` tool, and
`process_create` answering with the child's status once it has started."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.harness import System, eventually
from tests.test_arthur_flow import assistant_says, call, wait_statuses
from vance.protoutil import struct_to_dict
from vance.testing.scripted_llm import Rule
from vance.v1 import process_pb2 as ppb


def _tool_results(system: System, marker: str) -> list[dict[str, Any]]:
    return [
        json.loads(msg["content"])
        for body in system.model_requests(marker)
        for msg in body["messages"]
        if msg.get("role") == "tool"
    ]


async def _stored_progress(system: System, session_id: str, upto: int) -> list[dict[str, Any]]:
    """The session's stored progress events, replayed from the store (not the live overlay)."""
    out: list[dict[str, Any]] = []
    stream = system.processes.SubscribeSession(
        ppb.SubscribeSessionRequest(session_id=session_id, since_seq=0)
    )
    async for e in stream:
        if e.WhichOneof("kind") == "process_progress":
            g = e.process_progress
            out.append({"kind": g.kind, "name": g.process_name, **struct_to_dict(g.payload)})
        if e.seq >= upto:
            break
    stream.cancel()
    return out


async def test_tool_calls_and_spawns_are_events_and_how_do_i_finds_the_manual(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    goal = f"Count the shelves {m}"
    system.script(
        Rule(
            match_last=f"{m} go",
            tool_calls=[
                call("how_do_i", question="recipe promptMode OVERWRITE"),
                call("process_create", recipe="analyze", goal=goal, name="counter"),
            ],
        ),
        Rule(
            match=f"{m} go",
            match_last="tool_call_id",
            tool_calls=[call("respond", message=f"Started {m}.", awaiting_user_input=False)],
        ),
        Rule(
            match_last=goal,
            tool_calls=[call("respond", message=f"Which shelf? {m}", awaiting_user_input=True)],
        ),
        Rule(
            match_last=f"Which shelf? {m}",
            tool_calls=[call("respond", message=f"counter asks ({m})", awaiting_user_input=False)],
        ),
    )
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} go"})
    await assistant_says(client, f"counter asks ({m})")
    await wait_statuses(client, {"chat": "IDLE", "counter": "BLOCKED"})

    results = _tool_results(system, f"{m} go")
    found = next(r for r in results if "sections" in r)
    assert found["sections"], found
    top = found["sections"][0]
    assert top["source"] == "manual:recipes" and "promptMode" in top["text"], top
    assert all(s["title"] for s in found["sections"])
    spawned = next(r for r in results if r.get("name") == "counter")
    # Answered once the child had started: never the INIT of its creation.
    assert spawned["status"] in ("RUNNING", "BLOCKED"), spawned

    def frames(kind: str) -> list[dict[str, Any]]:
        return [
            f["data"]
            for f in client.of_type("process-progress")
            if f["data"]["kind"] == kind and f["data"]["processName"] == "chat"
        ]

    started = await eventually(lambda: frames("TOOL_CALL_STARTED"), what="tool call frames")
    assert [s["payload"]["toolName"] for s in started] == ["how_do_i", "process_create"]
    create = started[1]["payload"]
    assert create["params"] == {"recipe": "analyze", "goal": goal, "name": "counter"}
    completed = await eventually(
        lambda: len(frames("TOOL_CALL_COMPLETED")) == 2 and frames("TOOL_CALL_COMPLETED"),
        what="tool call completions",
    )
    assert [c["payload"]["toolCallId"] for c in completed] == [
        s["payload"]["toolCallId"] for s in started
    ]
    assert all(c["payload"]["status"] == "SUCCESS" for c in completed)
    assert all(c["payload"]["resultSize"] > 10 for c in completed)
    (spawn,) = frames("PROCESS_SPAWNED")
    assert spawn["payload"]["goal"] == goal and spawn["payload"]["childProcessName"] == "counter"
    assert spawn["processId"] == created["chatProcessId"]

    # They are in the session's stored stream, not only sent live.
    last_seq = max(int(f.get("seq") or 0) for f in client.frames)
    stored = await _stored_progress(system, created["sessionId"], last_seq)
    kinds = [e["kind"] for e in stored if e["name"] == "chat"]
    assert kinds.count("TOOL_CALL_STARTED") == 2 and kinds.count("TOOL_CALL_COMPLETED") == 2
    assert "PROCESS_SPAWNED" in kinds
    await client.close()


async def test_how_do_i_refuses_a_bad_limit(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(
        Rule(match_last=f"{m} look", tool_calls=[call("how_do_i", question="lanes", limit=99)]),
        Rule(
            match=f"{m} look",
            match_last="tool_call_id",
            tool_calls=[call("respond", message=f"Looked {m}.", awaiting_user_input=False)],
        ),
    )
    client = await system.connect()
    await client.ok("session-create", {"projectId": "demo"})
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} look"})
    await assistant_says(client, f"Looked {m}.")
    errors = [r for r in _tool_results(system, f"{m} look") if r.get("status") == "ERROR"]
    assert errors and "'limit' must be a whole number from 1 to 5" in errors[0]["error"]
    await client.close()
