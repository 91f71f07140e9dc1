"""One turn that cannot be handed to its worker fails alone (process_service/runtime/
worker_stream.py, `_unsendable`): on a system of its own with one engine worker, a process whose
document holds a malformed inbox message is steered while another session's turn streams on the
same worker. The malformed one's turn fails for good at once, not redone: the chat says why (a
notice in the chat, the detail on its IDLE status frame) and stays open, and its next message
is answered; the other turn goes on and answers, the worker keeps its stream (the worker's old
stream ending would cut and redo every turn on it)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pymongo import AsyncMongoClient

from engine_worker import protocol as ew
from tests.harness import System, WsClient, eventually, running_system
from tests.test_restart import answers
from vance.domain import ChatRole, ProcessStatus
from vance.internal.v1 import worker_pb2 as wkpb
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb


@pytest.fixture(scope="module")
async def one_worker(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[System]:
    """A system of its own (the malformed document lives in its database only), with one
    worker, so both sessions' turns run on it."""
    tmp = tmp_path_factory.mktemp("containment")
    async with running_system(tmp, llm, extra_env={"VANCE_ENGINE_WORKERS": "1"}) as system:
        yield system


def failed_frames(client: WsClient, pid: str) -> list[dict[str, Any]]:
    """STATUS frames of a turn that failed for good (docs/protocol.md "A turn that failed")."""
    return [
        f
        for f in client.frames
        if f["type"] == "process-progress"
        and f["data"].get("processId") == pid
        and f["data"].get("status") == "IDLE"
        and f["data"].get("closeDetail")
    ]


async def warm_answer(client: WsClient, pid: str, m: str) -> None:
    await client.wait_for(lambda f: bool(answers(client, pid, f"{m} warm")))


async def test_an_assignment_that_does_not_convert_fails_its_turn_only(
    one_worker: System,
) -> None:
    system = one_worker
    m = f"c-{uuid.uuid4().hex[:10]}"
    hold = f"hold-{m}"
    # A socket is bound to one session: one client each.
    client, client_b = await system.connect(), await system.connect()
    a = await client.ok("session-create", {"projectId": "demo"})
    b = await client_b.ok("session-create", {"projectId": "demo"})
    pid_a, pid_b = a["chatProcessId"], b["chatProcessId"]
    for c, pid in ((client, pid_a), (client_b, pid_b)):
        await c.ok("process-steer", {"processId": pid, "content": f"{m} warm"})
        await warm_answer(c, pid, m)
    (worker,) = await system.workers()

    # Session A's answer streams, then waits mid-stream on the one worker.
    system.script(Rule(match_last=f"{m} long", text=f"{m} long answer", hold=hold, chunks=3))
    await client.ok("process-steer", {"processId": pid_a, "content": f"{m} long"})
    await eventually(lambda: system.llm.script.in_flight > 0, what="A's answer to stream")

    # Session B's chat process gets a bare message (no content) written into its inbox.
    store: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(system.config.mongodb_uri)
    try:
        key = f"bare-{m}"
        pushed = await store[system.config.store.db_name]["processes"].update_one(
            {"_id": pid_b},
            {
                "$push": {
                    "pending": {"id": key, "idempotency_key": key, "kind": "USER_CHAT_INPUT"},
                    "pending_keys": key,
                }
            },
        )
        assert pushed.modified_count == 1
    finally:
        await store.close()
    await client_b.ok("process-steer", {"processId": pid_b, "content": f"{m} to b"})

    # B's turn fails for good, not redone: the client is told why, and B's chat stays open.
    await client_b.wait_for(lambda f: bool(failed_frames(client_b, pid_b)))
    (frame,) = failed_frames(client_b, pid_b)
    detail = frame["data"]["closeDetail"]
    assert detail.startswith("the turn could not be sent to a worker:"), detail
    notice = await client_b.wait_for(
        lambda f: f["type"] == "chat-message-appended" and f["data"]["role"] == "system",
        what="B's notice",
    )
    assert notice["data"]["content"].startswith(f"No answer came: {detail}")
    got = await system.process(pid_b)
    assert got.status == pb.PROCESS_STATUS_IDLE and not got.close_detail
    assert not system.model_requests(f"{m} to b")

    # A's turn was not cut: released, it answers once, on the same worker stream.
    system.llm.release(hold)
    await client.wait_for(lambda f: bool(answers(client, pid_a, f"{m} long answer")))
    assert len(system.model_requests(f"{m} long")) == 1
    # ...and A chats on.
    await client.ok("process-steer", {"processId": pid_a, "content": f"{m} again"})
    await client.wait_for(lambda f: bool(answers(client, pid_a, f"{m} again")))
    (after,) = await system.workers()
    assert (after.worker_id, after.connected_at_ms) == (worker.worker_id, worker.connected_at_ms)
    chat = await system.processes.ListChatMessages(
        ppb.ListChatMessagesRequest(session_id=a["sessionId"], process_id=pid_a)
    )
    contents = [x.content for x in chat.messages]
    assert contents.count(f"{m} long answer") == 1
    # ...and so does B: the message that broke its turn is not taken again.
    await client_b.ok("process-steer", {"processId": pid_b, "content": f"{m} b again"})
    await client_b.wait_for(lambda f: bool(answers(client_b, pid_b, f"{m} b again")))
    (b_request,) = system.model_requests(f"{m} b again")
    assert f"{m} to b" in json.dumps(b_request["messages"])  # kept in B's chat
    await client.close()
    await client_b.close()


async def test_a_worker_message_that_does_not_read_fails_its_own_turn_only(
    one_worker: System,
) -> None:
    """A stand-in worker on a real WorkerConnect stream (it has the most free slots, so the new
    session's first turn goes to it) sends a chat message without a role: process_service
    cancels that turn on it and redoes it after the backoff, on the same stream, where it
    commits. Was: the stream ended, and with it every turn on that worker."""
    system = one_worker
    worker_id = f"stand-in-{uuid.uuid4().hex[:6]}"
    outbox: asyncio.Queue[wkpb.WorkerMessage | None] = asyncio.Queue()

    async def requests() -> AsyncIterator[wkpb.WorkerMessage]:
        while (msg := await outbox.get()) is not None:
            yield msg

    # A worker of the older form (no DispatchBatch): every message comes on its own.
    hello = ew.Hello(worker_id, {"arthur": "1.0.0"}, {}, 100, reads_batch=False)
    outbox.put_nowait(ew.to_proto(hello))
    call = system.worker_service.WorkerConnect(requests())
    received: list[wkpb.DispatchMessage] = []

    async def read() -> None:
        async for msg in call:
            received.append(msg)

    reader = asyncio.create_task(read())

    def assignments() -> list[wkpb.TurnAssignment]:
        return [m.assignment for m in received if m.WhichOneof("kind") == "assignment"]

    async def connected() -> ppb.WorkerInfo | None:
        return next((w for w in await system.workers() if w.worker_id == worker_id), None)

    try:
        joined = await eventually(connected, what="the stand-in to connect")
        client = await system.connect()
        created = await client.ok("session-create", {"projectId": "demo"})
        pid = created["chatProcessId"]
        await eventually(lambda: assignments(), what="a turn for the stand-in")
        first = assignments()[0]
        assert first.process.id == pid and first.attempt == 1
        bad = ew.to_proto(
            ew.ChatAppend(first.turn_id, f"{first.turn_id}:1", ChatRole.ASSISTANT, "hi", {})
        )
        bad.event.chat_append.ClearField("role")
        outbox.put_nowait(bad)
        # That turn is cancelled on the stand-in, and redone on the same stream.
        await eventually(
            lambda: any(m.cancel_turn_id == first.turn_id for m in received),
            what="the turn's cancel",
        )
        await eventually(lambda: len(assignments()) > 1, what="the redo")
        redo = assignments()[1]
        assert (redo.turn_id, redo.attempt, redo.process.id) == (first.turn_id, 2, pid)
        outbox.put_nowait(
            ew.to_proto(ew.Commit(redo.turn_id, ProcessStatus.IDLE, None, "", "", {}, None, 0, []))
        )
        await eventually(
            lambda: any(m.WhichOneof("kind") == "commit_ack" and m.commit_ack.ok for m in received),
            what="the redo's commit ack",
        )
        got = await system.process(pid)
        assert got.status == pb.PROCESS_STATUS_IDLE
        after = await connected()
        assert after is not None and after.connected_at_ms == joined.connected_at_ms
        await client.close()
    finally:
        outbox.put_nowait(None)
        call.cancel()
        await asyncio.gather(reader, return_exceptions=True)
