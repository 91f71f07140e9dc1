"""What reaches the parent's model (seed 000 §3.4): a worker's payload, bounded, inside the
`<process-event>` tag; an asynchronous tool result as a tool message matched by its call id."""

from __future__ import annotations

import uuid
from typing import Any

from google.protobuf import struct_pb2

from tests.harness import System, eventually
from tests.test_arthur_flow import assistant_says, call
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb


def _last_messages(system: System, m: str, pred: Any) -> list[list[dict[str, Any]]]:
    return [list(b["messages"]) for b in system.model_requests(m) if pred(b["messages"][-1])]


async def test_a_workers_payload_reaches_the_parent_model_bounded(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    goal = f"Compare the drafts {m}"
    notes = "n" * 20_000
    system.script(
        Rule(
            match_last=f"{m} compare them",
            tool_calls=[call("process_create", recipe="analyze", goal=goal, name="drafts")],
        ),
        Rule(
            match=f"{m} compare them",
            match_last="tool_call_id",
            tool_calls=[call("respond", message="Started.", awaiting_user_input=False)],
        ),
        Rule(
            match_last=goal,
            tool_calls=[
                call(
                    "respond",
                    message="3 contradictions found",
                    awaiting_user_input=False,
                    payload={"report_id": f"mem_{m}", "notes": notes},
                )
            ],
        ),
        Rule(
            match=m,
            match_last="<process-event",
            tool_calls=[call("respond", message=f"Report mem_{m}", awaiting_user_input=False)],
        ),
    )
    client = await system.connect()
    await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} compare them"})
    await assistant_says(client, f"Report mem_{m}")
    seen = _last_messages(system, m, lambda last: "<process-event" in str(last.get("content")))
    assert len(seen) == 1
    event = str(seen[0][-1]["content"])
    assert 'type="done"' in event and "3 contradictions found" in event
    assert f'"report_id": "mem_{m}"' in event
    # The 20,000-character note is cut, and says so.
    assert "[cut:" in event and len(event) < 5_000, len(event)
    await client.close()


async def test_a_tool_result_is_a_tool_message_matched_by_its_call_id(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    call_id = f"call_{m}"
    system.script(
        Rule(
            match=call_id,
            match_last="tool_call_id",
            tool_calls=[call("respond", message=f"Fetched {m}", awaiting_user_input=False)],
        )
    )
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    result = struct_pb2.Value()
    result.struct_value.update({"text": f"page text {m}"})
    reply = await system.processes.Steer(
        ppb.SteerRequest(
            target=ppb.ProcessRef(process_id=created["chatProcessId"]),
            message=pb.SteerMessage(
                idempotency_key=f"tool-{m}",
                tool_result=pb.ToolResult(
                    tool_call_id=call_id,
                    tool_name="web_fetch",
                    status=pb.TOOL_CALL_STATUS_SUCCESS,
                    result=result,
                ),
            ),
        )
    )
    assert reply.outcome != pb.DELIVERY_OUTCOME_REJECTED, reply.reason
    await assistant_says(client, f"Fetched {m}")

    def requests() -> list[list[dict[str, Any]]]:
        return _last_messages(system, call_id, lambda last: last.get("role") == "tool")

    found = await eventually(requests, what="the model call with the tool result")
    messages = found[0]
    tool = messages[-1]
    assert tool["tool_call_id"] == call_id and f"page text {m}" in tool["content"]
    asked = messages[-2]
    assert asked["role"] == "assistant"
    assert [c["id"] for c in asked["tool_calls"]] == [call_id]
    assert asked["tool_calls"][0]["function"]["name"] == "web_fetch"
    await client.close()
