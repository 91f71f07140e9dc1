"""A crashed and restarted process_service loses and duplicates nothing (the brief's standard):
on a system of its own, process_service is killed with SIGKILL while a turn runs and started
again. The turn finishes (its worker reports to the new replica, or it is redone once its lease
runs out), the client gets exactly one answer, the chat holds each message once, and the event
stream goes on with fresh seqs that a resuming client sees once each."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from tests.harness import System, WsClient, eventually, has_workers, running_system
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb


@pytest.fixture(scope="module")
async def own_system(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[System]:
    async with running_system(tmp_path_factory.mktemp("restart"), llm) as system:
        yield system


def _answers(client: WsClient, pid: str, m: str) -> list[dict[str, object]]:
    return [
        f
        for f in client.frames
        if f["type"] == "chat-message-appended"
        and f["data"]["thinkProcessId"] == pid
        and f["data"]["role"] == "assistant"
        and m in str(f["data"]["content"])
    ]


async def test_a_turn_cut_by_a_process_service_crash_is_redone_once(own_system: System) -> None:
    system = own_system
    m = f"m-{uuid.uuid4().hex[:10]}"
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    sid, pid = created["sessionId"], created["chatProcessId"]
    await client.ok("process-steer", {"processId": pid, "content": f"{m} warm"})
    await client.wait_for(lambda f: bool(_answers(client, pid, f"{m} warm")))
    # A slow answer, so the crash comes while the turn runs.
    system.script(Rule(text=f"{m} slow answer", match_last=f"{m} slow", delay_ms=1500, repeat=True))
    await client.ok("process-steer", {"processId": pid, "content": f"{m} slow"})

    async def running() -> bool:
        status: int = (await system.process(pid)).status
        return status == pb.PROCESS_STATUS_RUNNING

    await eventually(running, what="the turn to run")
    await system.supervisor.restart_service("process_service")
    await eventually(lambda: has_workers(system), what="workers back", timeout=60)
    # One answer reaches the client, once (a redo waits for the lease: 6 s here).
    await client.wait_for(lambda f: bool(_answers(client, pid, f"{m} slow answer")), timeout=60)
    chat = (
        await system.processes.ListChatMessages(
            ppb.ListChatMessagesRequest(session_id=sid, process_id=pid)
        )
    ).messages
    contents = [x.content for x in chat]
    assert contents.count(f"{m} slow") == 1
    assert contents.count(f"{m} slow answer") == 1
    # The stream went on: a client resuming from the start sees every seq once, in order.
    late = await system.connect()
    await late.ok("session-resume", {"sessionId": sid, "takeover": True, "sinceSeq": 0})
    await late.wait_for(lambda f: bool(_answers(late, pid, f"{m} slow answer")))
    seqs = [int(f["seq"]) for f in late.frames if f.get("seq") is not None]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
    assert len(_answers(late, pid, f"{m} slow answer")) == 1
    # And new work after the restart runs as before.
    await late.ok("process-steer", {"processId": pid, "content": f"{m} after"})
    await late.wait_for(lambda f: bool(_answers(late, pid, f"{m} after")))
    await client.close()
    await late.close()
