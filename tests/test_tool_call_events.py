"""A turn's tool calls and spawns as session events (docs/protocol.md, frames
tool-call-started, tool-call-completed, process-spawned), the `how_do_i` tool, and
`process_create` answering with the child's status once it has started."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.harness import System, eventually
from tests.test_arthur_flow import assistant_says, call, child_asks, wait_statuses
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


async def _stored_notices(system: System, session_id: str, upto: int) -> list[dict[str, Any]]:
    """The session's stored notice events, replayed from the store (not the live overlay)."""
    out: list[dict[str, Any]] = []
    stream = system.processes.SubscribeSession(
        ppb.SubscribeSessionRequest(session_id=session_id, since_seq=0)
    )
    async for e in stream:
        if e.WhichOneof("kind") == "notice":
            out.append({"type": e.notice.type, **struct_to_dict(e.notice.data)})
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
        *child_asks(
            m,
            f"{m} go",
            goal,
            "counter",
            f"Which shelf? {m}",
            first=(call("how_do_i", question="recipe promptMode OVERWRITE"),),
        )
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

    def frames(type_: str) -> list[dict[str, Any]]:
        return [f["data"] for f in client.of_type(type_) if f["data"]["processName"] == "chat"]

    started = await eventually(lambda: frames("tool-call-started"), what="tool call frames")
    assert [s["toolName"] for s in started] == ["how_do_i", "process_create"]
    assert started[1]["params"] == {"recipe": "analyze", "goal": goal, "name": "counter"}
    assert all(s["processId"] == created["chatProcessId"] for s in started)
    completed = await eventually(
        lambda: len(frames("tool-call-completed")) == 2 and frames("tool-call-completed"),
        what="tool call completions",
    )
    assert [c["toolCallId"] for c in completed] == [s["toolCallId"] for s in started]
    assert all(c["status"] == "SUCCESS" and c["resultSize"] > 10 for c in completed)
    (spawn,) = frames("process-spawned")
    assert spawn["goal"] == goal and spawn["childProcessName"] == "counter"
    assert spawn["processId"] == created["chatProcessId"]

    # They are in the session's stored stream, not only sent live.
    last_seq = max(int(f.get("seq") or 0) for f in client.frames)
    stored = await _stored_notices(system, created["sessionId"], last_seq)
    types = [e["type"] for e in stored if e["processName"] == "chat"]
    assert types.count("tool-call-started") == 2 and types.count("tool-call-completed") == 2
    assert types.count("process-spawned") == 1
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
