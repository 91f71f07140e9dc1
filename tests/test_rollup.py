"""Lists and status filters show the engines' current state (seed 002 §4): the RUNNING/IDLE
roll-up is written on every engine status change, not only when one session is read."""

from __future__ import annotations

import uuid

from tests.harness import System, eventually
from tests.test_arthur_flow import assistant_says
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb


async def _listed(system: System, session_id: str, status: int) -> bool:
    resp = await system.sessions.ListSessions(
        spb.ListSessionsRequest(
            tenant_id="default",
            statuses=[status],  # type: ignore[list-item]
            caller=spb.Caller(user_id="admin", roles=["admin"]),
        )
    )
    return any(s.session_id == session_id for s in resp.sessions)


async def test_a_busy_engine_shows_running_in_lists_and_idle_after(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(Rule(match_last=f"{m} think long", text=f"done thinking {m}", delay_ms=4_000))
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    sid = created["sessionId"]
    await assistant_says(client, "Hi, I'm Arthur")
    await eventually(lambda: _listed(system, sid, pb.SESSION_STATUS_IDLE), what="IDLE listed")
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} think long"})
    # Nobody reads the session itself: only the list and its status filter.
    await eventually(
        lambda: _listed(system, sid, pb.SESSION_STATUS_RUNNING), what="RUNNING in the list"
    )
    assert not await _listed(system, sid, pb.SESSION_STATUS_IDLE)
    await assistant_says(client, f"done thinking {m}")
    await eventually(lambda: _listed(system, sid, pb.SESSION_STATUS_IDLE), what="IDLE again")
    assert not await _listed(system, sid, pb.SESSION_STATUS_RUNNING)
    await client.close()
