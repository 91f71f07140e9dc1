"""Engines can pause a process (seed 002 §12.1): the `process_pause` tool, as the user's
process-pause frame does; pausing oneself is refused."""

from __future__ import annotations

import json
import uuid

from tests.harness import System
from tests.test_arthur_flow import assistant_says, call, child_asks, wait_statuses
from vance.testing.scripted_llm import Rule


async def test_arthur_pauses_a_worker_with_the_process_pause_tool(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    goal = f"Survey the archive {m}"
    system.script(
        *child_asks(m, f"{m} start it", goal, "survey", f"Which shelf? {m}"),
        Rule(
            match_last=f"{m} hold it",
            tool_calls=[call("process_pause", name="survey"), call("process_pause", name="chat")],
        ),
        Rule(
            match=f"{m} hold it",
            match_last="cannot pause itself",
            tool_calls=[call("respond", message=f"Paused {m}.", awaiting_user_input=False)],
        ),
    )
    client = await system.connect()
    await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} start it"})
    await assistant_says(client, f"survey asks ({m})")
    await wait_statuses(client, {"chat": "IDLE", "survey": "BLOCKED"})
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} hold it"})
    await assistant_says(client, f"Paused {m}.")
    await wait_statuses(client, {"chat": "IDLE", "survey": "PAUSED"})
    results = [
        msg
        for body in system.model_requests(f"{m} hold it")
        for msg in body["messages"]
        if msg.get("role") == "tool" and "PAUSED" in str(msg.get("content"))
    ]
    assert results and json.loads(results[0]["content"])["name"] == "survey"
    await client.close()
