"""The suspend cause reaches `engine.resume()` (seed 002 §9): a turn cut off by a FORCED suspend
is resumed with the cause on the process, and Arthur tells its model the turn was cut off."""

from __future__ import annotations

import uuid

from tests.harness import System, eventually
from tests.lifecycle_support import create, wait_engine, wait_status
from tests.test_arthur_flow import assistant_says
from vance.testing.scripted_llm import Rule
from vance.v1 import session_pb2 as spb


async def test_a_forced_suspend_reaches_the_resumed_engine(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    text = f"{m} a long job"
    system.script(Rule(match_last=text, text="never seen", delay_ms=8_000))
    client = await system.connect()
    created = await create(client)
    sid, pid = created["sessionId"], created["chatProcessId"]
    await assistant_says(client, "Hi, I'm Arthur")
    await client.ok("process-steer", {"processName": "chat", "content": text})
    await wait_engine(system, pid, "RUNNING")
    await eventually(lambda: system.model_requests(text), what="the turn's model call")
    await system.sessions.SuspendSession(
        spb.SuspendSessionRequest(tenant_id="default", session_id=sid)
    )
    await wait_status(system, sid, "SUSPENDED")
    chat = await system.process(pid)
    assert chat.last_suspend_cause == "FORCED"
    system.script(
        Rule(
            match='cause=\\"FORCED\\"',
            match_last=text,
            tool_calls=[
                {
                    "name": "respond",
                    "arguments": {"message": f"resumed {m}", "awaiting_user_input": False},
                }
            ],
        )
    )
    await system.sessions.ResumeSession(spb.SessionOpRequest(tenant_id="default", session_id=sid))
    await assistant_says(client, f"resumed {m}")
    resumed = [r for r in system.model_requests(text) if 'cause="FORCED"' in str(r["messages"])]
    assert resumed and resumed[-1]["messages"][-1]["content"] == text
    await client.close()
