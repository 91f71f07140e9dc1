"""The parent always hears (issue 24, part 4): a child's close and its parent's notification are
one durable step. process_service is made to exit between the child's commit and the delivery
of what the commit owes (the fault hook of process_service/runtime/outbox.py); the real supervisor
restarts it, and the parent still gets the child's DONE exactly once and answers it once."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import System, eventually, running_system
from tests.lifecycle_support import store
from tests.test_arthur_flow import assistant_says, call
from vance.supervisor_status import ChildStatus, read_status
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm
from vance.v1 import process_pb2 as ppb

FAULT_ENV = "VANCE_FAULT_EXIT_BEFORE_OUTBOX"


@pytest.fixture(scope="module")
async def faulty(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[tuple[System, Path]]:
    tmp = tmp_path_factory.mktemp("outbox")
    fault = tmp / "exit-before-outbox"  # armed while it exists; the first delivery removes it
    env = {FAULT_ENV: str(fault)}
    async with running_system(tmp, llm, extra_env=env, self_healing=True) as system:
        yield system, fault


def _status(system: System, name: str) -> ChildStatus:
    return next(c for c in read_status(system.supervisor.status_file).children if c.name == name)


def _events(system: System, m: str) -> list[str]:
    """The process events the parent's model was shown (each model call that carried one)."""
    out = []
    for body in system.model_requests(m):
        last = (body.get("messages") or [{}])[-1]
        if "<process-event" in str(last.get("content")):
            out.append(str(last["content"]))
    return out


async def _chat(system: System, session_id: str, process_id: str) -> list[str]:
    resp = await system.processes.ListChatMessages(
        ppb.ListChatMessagesRequest(session_id=session_id, process_id=process_id), timeout=10
    )
    return [m.content for m in resp.messages]


async def test_a_crash_between_a_childs_close_and_its_parents_event_loses_nothing(
    faulty: tuple[System, Path],
) -> None:
    system, fault = faulty
    m = uuid.uuid4().hex[:8]
    goal = f"Outbox analysis {m}"
    report = f"reporter finished ({m})"
    system.script(
        Rule(
            match_last=f"{m} start the task",
            tool_calls=[call("process_create", recipe="analyze", goal=goal, name="reporter")],
        ),
        Rule(
            match=f"{m} start the task",
            match_last="tool_call_id",
            tool_calls=[call("respond", message="Started reporter.", awaiting_user_input=False)],
        ),
        Rule(
            match_last=goal,
            tool_calls=[call("respond", message=f"{m} result", awaiting_user_input=False)],
        ),
        Rule(
            match=m,
            match_last="<process-event",
            tool_calls=[call("respond", message=report, awaiting_user_input=False)],
        ),
    )
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    before = _status(system, "process_service")
    fault.touch()  # the next outbox delivery (the child's DONE) ends process_service
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} start the task"})

    def restarted() -> bool:
        now = _status(system, "process_service")
        return now.restarts == before.restarts + 1 and now.state == "running"

    await eventually(restarted, timeout=90, what="process_service to exit and be restarted")
    exit_ = _status(system, "process_service").last_exit
    assert exit_ is not None and exit_.code == 3, exit_  # the fault hook's exit, not a kill
    assert not fault.exists()

    session, parent = str(created["sessionId"]), str(created["chatProcessId"])

    async def answered() -> bool:
        return report in await _chat(system, session, parent)

    await eventually(answered, timeout=120, what="the parent to answer its child's DONE")
    await client.close()

    # Exactly once: the child's outbox is empty (nothing is left to deliver again), the
    # parent's model saw one DONE event, and the parent answered once.
    async with store(system) as db:
        child: dict[str, Any] | None = await db["processes"].find_one(
            {"session_id": session, "name": "reporter"}
        )
    assert child is not None and child["status"] == "CLOSED"
    assert not child.get("outbox"), child.get("outbox")
    events = _events(system, m)
    assert len(events) == 1, events
    assert 'type="done"' in events[0] and f"{m} result" in events[0]
    assert (await _chat(system, session, parent)).count(report) == 1
