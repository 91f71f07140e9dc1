"""A crashed and restarted process_service loses and duplicates nothing (the brief's standard):
on a system of its own, process_service is killed with SIGKILL while a turn runs and started
again. The turn finishes (its worker reports to the new replica, or it is redone once its lease
runs out), the client gets exactly one answer, the chat holds each message once, and the event
stream goes on with fresh seqs that a resuming client sees once each."""

from __future__ import annotations

import uuid
from typing import Any

from tests.harness import System, WsClient, eventually, has_workers
from tests.lifecycle_support import store
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb


def respond_streamed(
    marker: str, answer: str, *, arg_chunks: int = 8, stream_ms: int = 600, repeat: bool = False
) -> Rule:
    """The model answers `marker` through `respond`, its message streamed in pieces."""
    return Rule(
        match_last=marker,
        tool_calls=[
            {"name": "respond", "arguments": {"message": answer, "awaiting_user_input": False}}
        ],
        arg_chunks=arg_chunks,
        stream_ms=stream_ms,
        repeat=repeat,
    )


def answers(client: WsClient, pid: str, m: str) -> list[dict[str, Any]]:
    """The assistant's chat messages of process `pid` on `client` that contain `m`."""
    return [
        f
        for f in client.frames
        if f["type"] == "chat-message-appended"
        and f["data"]["thinkProcessId"] == pid
        and f["data"]["role"] == "assistant"
        and m in str(f["data"]["content"])
    ]


async def warm_session(system: System, m: str) -> tuple[WsClient, str, str]:
    """A session whose chat has answered once (its start turn behind it): the client, the
    session id and the chat process id."""
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    sid, pid = created["sessionId"], created["chatProcessId"]
    await client.ok("process-steer", {"processId": pid, "content": f"{m} warm"})
    await client.wait_for(lambda f: bool(answers(client, pid, f"{m} warm")))
    return client, sid, pid


async def test_a_turn_cut_by_a_process_service_crash_is_redone_once(own_system: System) -> None:
    system = own_system
    m = f"m-{uuid.uuid4().hex[:10]}"
    client, sid, pid = await warm_session(system, m)
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
    await client.wait_for(lambda f: bool(answers(client, pid, f"{m} slow answer")), timeout=60)
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
    await late.wait_for(lambda f: bool(answers(late, pid, f"{m} slow answer")))
    seqs = [int(f["seq"]) for f in late.frames if f.get("seq") is not None]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
    assert len(answers(late, pid, f"{m} slow answer")) == 1
    # And new work after the restart runs as before.
    await late.ok("process-steer", {"processId": pid, "content": f"{m} after"})
    await late.wait_for(lambda f: bool(answers(late, pid, f"{m} after")))
    await client.close()
    await late.close()


async def test_a_client_resuming_from_a_chunk_seen_before_a_crash_misses_nothing(
    own_system: System,
) -> None:
    """process_service claims chunk seqs a block at a time and keeps the chunks in memory
    (process_service/events/log.py): killed between a streamed answer's chunk and the turn's
    commit, it comes back numbering after every seq it handed out, so a client that saw chunk N
    and resumes from N gets the answer and every other stored event after N."""
    system = own_system
    m = f"m-{uuid.uuid4().hex[:10]}"
    answer = f"{m} streamed " + " ".join(f"word{i}" for i in range(30))
    # The crash comes while the answer streams; the redone turn asks the model again.
    system.script(respond_streamed(f"{m} ask", answer, arg_chunks=12, stream_ms=6000, repeat=True))
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    sid, pid = created["sessionId"], created["chatProcessId"]
    mark = len(client.frames)
    await client.ok("process-steer", {"processId": pid, "content": f"{m} ask"})
    chunk = await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-stream-chunk"
            and client.frames.index(f) >= mark
            and f["data"]["thinkProcessId"] == pid
        ),
        timeout=30,
        what="a chunk of the answer",
    )
    seen = int(chunk["seq"])
    before = client.frames.index(chunk)
    await system.supervisor.restart_service("process_service")
    await eventually(lambda: has_workers(system), what="workers back", timeout=60)
    # The client's own socket follows on from the chunk it saw.
    await client.wait_for(lambda f: bool(answers(client, pid, answer)), timeout=90)
    assert len(answers(client, pid, answer)) == 1

    def stored(c: WsClient, since: int) -> list[tuple[str, int]]:
        return stored_in(c.frames, since)

    def stored_in(frames: list[dict[str, Any]], since: int) -> list[tuple[str, int]]:
        """The frames of stored events after `since` (chunks are not stored)."""
        return [
            (str(f["type"]), int(f["seq"]))
            for f in frames
            if f.get("seq") is not None
            and int(f["seq"]) > since
            and f["type"] != "chat-message-stream-chunk"
        ]

    everything = await system.connect()
    await everything.ok("session-resume", {"sessionId": sid, "takeover": True, "sinceSeq": 0})
    await everything.wait_for(lambda f: bool(answers(everything, pid, answer)), timeout=30)
    # What was stored after the chunk: everything but what the client had before it.
    after_chunk = set(stored(everything, 0)) - set(stored_in(client.frames[:before], 0))
    await everything.close()
    resumed = await system.connect()
    await resumed.ok("session-resume", {"sessionId": sid, "takeover": True, "sinceSeq": seen})
    await resumed.wait_for(lambda f: bool(answers(resumed, pid, answer)), timeout=30)
    # The answer came after the chunk, and nothing stored after the chunk is missing or twice.
    answered = answers(resumed, pid, answer)
    assert len(answered) == 1 and int(str(answered[0]["seq"])) > seen
    assert after_chunk
    await eventually(lambda: after_chunk <= set(stored(resumed, seen)), what="every event")
    assert len(stored(resumed, seen)) == len(set(stored(resumed, seen)))
    await client.close()
    await resumed.close()


def running_frames(client: WsClient, pid: str, since: int = 0) -> list[dict[str, Any]]:
    return [
        f
        for f in client.frames
        if f["type"] == "process-progress"
        and f["data"].get("processId") == pid
        and f["data"].get("status") == "RUNNING"
        and int(f["seq"]) > since
    ]


async def test_a_running_event_handed_out_before_its_write_is_never_contradicted(
    own_system: System,
) -> None:
    """A turn's RUNNING event goes to the client before it is stored and is stored with the
    turn's next write (process_service/events/log.py `announce`). Killed in between, the new
    replica has neither the event nor the seq to give again: a client that saw RUNNING at N and
    resumes from N gets the redo and the answer after N, and one resuming from the start never
    sees N (a gap) but sees the redo's RUNNING and the answer once each."""
    system = own_system
    m = f"m-{uuid.uuid4().hex[:10]}"
    client, sid, pid = await warm_session(system, m)
    # The answer takes long enough for the crash to come before the turn writes anything.
    system.script(Rule(text=f"{m} slow answer", match_last=f"{m} slow", delay_ms=4000, repeat=True))
    mark = len(client.frames)
    await client.ok("process-steer", {"processId": pid, "content": f"{m} slow"})
    running = await client.wait_for(
        lambda f: client.frames.index(f) >= mark and f in running_frames(client, pid),
        what="the RUNNING frame",
    )
    seen = int(running["seq"])
    async with store(system) as db:
        # The window this test is about: the client has the event, the store does not.
        assert await db["session_events"].find_one({"_id": f"{sid}:{seen}"}) is None
    await system.supervisor.restart_service("process_service")
    await eventually(lambda: has_workers(system), what="workers back", timeout=60)
    await client.wait_for(lambda f: bool(answers(client, pid, f"{m} slow answer")), timeout=60)
    assert len(answers(client, pid, f"{m} slow answer")) == 1

    resumed = await system.connect()
    await resumed.ok("session-resume", {"sessionId": sid, "takeover": True, "sinceSeq": seen})
    await resumed.wait_for(lambda f: bool(answers(resumed, pid, f"{m} slow answer")), timeout=30)
    after = [f for f in resumed.frames if f.get("seq") is not None]
    assert after and all(int(f["seq"]) > seen for f in after)
    await resumed.close()

    everything = await system.connect()
    await everything.ok("session-resume", {"sessionId": sid, "takeover": True, "sinceSeq": 0})
    await everything.wait_for(lambda f: bool(answers(everything, pid, f"{m} slow answer")))
    seqs = [int(f["seq"]) for f in everything.frames if f.get("seq") is not None]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
    assert seen not in seqs
    # The redo started like any turn, after the lost event's seq, and ended once.
    assert running_frames(everything, pid, seen)
    assert len(answers(everything, pid, f"{m} slow answer")) == 1
    await client.close()
    await everything.close()
