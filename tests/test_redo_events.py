"""A redone turn announces what its first attempt stored but never announced (issue 24's
"nothing lost", found in session 11): process_service is made to exit after a turn's chat
messages are stored and before their events are written (the fault hook of
process_service/runtime/turns.py); the real supervisor restarts it, the turn is redone once its
lease runs out, and the client, still connected, gets the answer exactly once."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.harness import System, eventually, running_system
from tests.test_arthur_flow import assistant_says
from vance.supervisor_status import ChildStatus, read_status
from vance.testing.scripted_llm import ThreadedScriptedLlm
from vance.v1 import process_pb2 as ppb

FAULT_ENV = "VANCE_FAULT_EXIT_BEFORE_CHAT_EVENTS"


@pytest.fixture(scope="module")
async def faulty(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[tuple[System, Path]]:
    tmp = tmp_path_factory.mktemp("redo-events")
    fault = tmp / "exit-before-chat-events"  # armed while it exists; the first pass removes it
    async with running_system(
        tmp, llm, extra_env={FAULT_ENV: str(fault)}, self_healing=True
    ) as system:
        yield system, fault


def _status(system: System) -> ChildStatus:
    return next(
        c
        for c in read_status(system.supervisor.status_file).children
        if c.name == "process_service"
    )


async def test_an_answer_stored_before_a_crash_reaches_the_client_once(
    faulty: tuple[System, Path],
) -> None:
    system, fault = faulty
    m = uuid.uuid4().hex[:8]
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    before = _status(system)
    fault.touch()  # the next chat insert of a turn ends process_service before its events
    await client.ok("process-steer", {"processName": "chat", "content": f"hello {m}"})

    def restarted() -> bool:
        now = _status(system)
        return now.restarts == before.restarts + 1 and now.state == "running"

    await eventually(restarted, timeout=90, what="process_service to exit and be restarted")
    exit_ = _status(system).last_exit
    assert exit_ is not None and exit_.code == 3, exit_  # the fault hook's exit, not a kill
    assert not fault.exists()

    answer = f"You said: hello {m}"
    # The same socket: the gateway follows the session's stream again from its last seq.
    await assistant_says(client, answer)
    session, chat = str(created["sessionId"]), str(created["chatProcessId"])
    stored = await system.processes.ListChatMessages(
        ppb.ListChatMessagesRequest(session_id=session, process_id=chat), timeout=10
    )
    assert [x.content for x in stored.messages].count(answer) == 1
    assert [x.content for x in stored.messages].count(f"hello {m}") == 1

    # Wait for the redone turn's IDLE after the answer: nothing is announced twice.
    def idle_after_answer() -> bool:
        frames = list(client.frames)
        at = next(
            i
            for i, f in enumerate(frames)
            if f["type"] == "chat-message-appended" and f["data"]["content"] == answer
        )
        return any(
            f["type"] == "process-progress"
            and f["data"].get("kind") == "STATUS"
            and f["data"].get("processName") == "chat"
            and f["data"].get("status") == "IDLE"
            for f in frames[at + 1 :]
        )

    await eventually(idle_after_answer, timeout=30, what="the chat to be idle after the answer")
    appended = [f["data"]["content"] for f in client.of_type("chat-message-appended")]
    assert appended.count(answer) == 1, appended
    assert appended.count(f"hello {m}") == 1, appended
    await client.close()
