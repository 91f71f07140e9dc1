"""The engine runtime under concurrency and failure: inboxes, lanes, leases, the event stream."""

from __future__ import annotations

import asyncio
import itertools
import signal
import time
import uuid

import grpc
import pytest

from tests.harness import System, WsClient, eventually
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb


def marker() -> str:
    return f"m-{uuid.uuid4().hex[:10]}"


def status_of(p: pb.ThinkProcess) -> str:
    return pb.ProcessStatus.Name(p.status).removeprefix("PROCESS_STATUS_")


async def new_session(system: System) -> tuple[WsClient, dict[str, str]]:
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    await wait_status(system, created["chatProcessId"], "IDLE")
    return client, created


async def wait_status(
    system: System, pid: str, status: str, timeout: float = 30
) -> pb.ThinkProcess:
    async def check() -> pb.ThinkProcess | None:
        p = await system.process(pid)
        return p if status_of(p) == status else None

    found: pb.ThinkProcess = await eventually(check, timeout=timeout, what=f"{pid} to be {status}")
    return found


def steer_request(pid: str, content: str, key: str = "") -> ppb.SteerRequest:
    return ppb.SteerRequest(
        target=ppb.ProcessRef(process_id=pid),
        message=pb.SteerMessage(
            idempotency_key=key, user_chat_input=pb.UserChatInput(from_user="dev", content=content)
        ),
    )


def statuses(client: WsClient, pid: str) -> list[str]:
    return [
        f["data"]["status"]
        for f in client.frames
        if f["type"] == "process-progress"
        and f["data"]["kind"] == "STATUS"
        and f["data"]["processId"] == pid
    ]


async def chat(system: System, pid: str) -> list[pb.ChatMessage]:
    resp = await system.processes.ListChatMessages(ppb.ListChatMessagesRequest(process_id=pid))
    return list(resp.messages)


async def test_fifty_concurrent_steers_are_each_handled_once_without_overlap(
    system: System,
) -> None:
    m = marker()
    # A slow model widens the window in which a second turn could wrongly start.
    system.script(Rule(match=m, text=f"ack {m}", delay_ms=30, repeat=True))
    client, created = await new_session(system)
    pid = created["chatProcessId"]
    contents = [f"{m} message {i}" for i in range(50)]
    replies = await asyncio.gather(
        *[system.processes.Steer(steer_request(pid, c)) for c in contents]
    )
    outcomes = {pb.DeliveryOutcome.Name(r.outcome) for r in replies}
    assert outcomes <= {"DELIVERY_OUTCOME_STARTED", "DELIVERY_OUTCOME_QUEUED"}
    assert not any(r.duplicate for r in replies)

    async def all_answered() -> bool:
        msgs = await chat(system, pid)
        users = [x.content for x in msgs if x.role == pb.CHAT_ROLE_USER]
        return len(users) == 50 and status_of(await system.process(pid)) == "IDLE"

    await eventually(all_answered, timeout=60, what="all 50 messages handled")
    msgs = await chat(system, pid)
    users = [x.content for x in msgs if x.role == pb.CHAT_ROLE_USER]
    assert sorted(users) == sorted(contents)  # each exactly once
    answers = [x for x in msgs if x.role == pb.CHAT_ROLE_ASSISTANT and m in x.content]
    # Each message went to the model exactly once, across however many turns there were.
    seen = [
        c
        for r in system.model_requests(m)
        for c in contents
        if any(msg.get("content") == c for msg in r["messages"][-50:] if msg.get("role") == "user")
    ]
    assert len(answers) == len(system.model_requests(m)) >= 1
    assert len(set(seen)) == 50
    # No two turns overlap: the lane's statuses strictly alternate RUNNING, IDLE.
    await client.wait_for(
        lambda f: (
            f.get("seq", 0) > 0
            and f["type"] == "chat-message-appended"
            and f["data"]["content"] == answers[-1].content
        )
    )
    lane = [s for s in statuses(client, pid) if s in ("RUNNING", "IDLE")]
    lane = lane[lane.index("RUNNING") :]
    assert all(a != b for a, b in itertools.pairwise(lane)), lane
    await client.close()


async def test_a_duplicate_idempotency_key_is_handled_once(system: System) -> None:
    m = marker()
    client, created = await new_session(system)
    pid = created["chatProcessId"]
    first, second = await asyncio.gather(
        system.processes.Steer(steer_request(pid, f"{m} once", key=f"{m}-key")),
        system.processes.Steer(steer_request(pid, f"{m} once", key=f"{m}-key")),
    )
    assert sorted([first.duplicate, second.duplicate]) == [False, True]
    await eventually(lambda: _answered(system, pid, m), what="the answer")
    # The same key again after it was handled: still once.
    third = await system.processes.Steer(steer_request(pid, f"{m} once", key=f"{m}-key"))
    assert third.duplicate
    await wait_status(system, pid, "IDLE")
    users = [x for x in await chat(system, pid) if x.content == f"{m} once"]
    assert len(users) == 1
    assert len(system.model_requests(m)) == 1
    await client.close()


async def test_a_process_of_another_session_cannot_be_steered(system: System) -> None:
    m = marker()
    mine, _ = await new_session(system)
    theirs, created = await new_session(system)
    their_chat = created["chatProcessId"]
    # Over the socket: a client bound to one session names another session's process by id.
    reply = await mine.request("process-steer", {"processId": their_chat, "content": f"{m} x"})
    assert reply["type"] == "process-steer" and reply["data"]["outcome"] == "REJECTED", reply
    assert reply["data"]["status"] is None  # nothing about the other session's process
    # Over gRPC, with the session given, as the gateway sends it; with and without a key.
    for key in ("", f"{m}-key"):
        request = steer_request(their_chat, f"{m} intruder", key=key)
        request.target.session_id = "sess_someone_else"
        refused = await system.processes.Steer(request)
        assert refused.outcome == pb.DELIVERY_OUTCOME_REJECTED and not refused.duplicate
    # Once the key is handled in its own session, the other session still learns nothing.
    await system.processes.Steer(steer_request(their_chat, f"{m} theirs", key=f"{m}-key"))
    await eventually(lambda: _answered(system, their_chat, m), what="their answer")
    request = steer_request(their_chat, f"{m} theirs", key=f"{m}-key")
    request.target.session_id = "sess_someone_else"
    assert (await system.processes.Steer(request)).outcome == pb.DELIVERY_OUTCOME_REJECTED
    assert not [x for x in await chat(system, their_chat) if "intruder" in x.content]
    await mine.close()
    await theirs.close()


async def _answered(system: System, pid: str, m: str) -> bool:
    return any(x.role == pb.CHAT_ROLE_ASSISTANT and m in x.content for x in await chat(system, pid))


async def test_a_steer_of_a_waiting_chat_starts_its_turn_and_its_key_stays_unique(
    system: System,
) -> None:
    """A steer that finds the chat IDLE starts the turn in the same write that stores it
    (process_service/runtime/lanes.py `take_steered`); the reply still tells the status it found, and
    the message's key is taken for as long as its turn runs."""
    m = marker()
    system.script(Rule(match=f"{m} slow", text=f"ack {m}", delay_ms=400))
    client, created = await new_session(system)
    pid = created["chatProcessId"]
    await system.processes.Steer(steer_request(pid, f"{m} warm"))  # the engine becomes known
    await eventually(lambda: _answered(system, pid, m), what="the first answer")
    await wait_status(system, pid, "IDLE")

    started = await system.processes.Steer(steer_request(pid, f"{m} slow", key=f"{m}-k"))
    assert started.outcome == pb.DELIVERY_OUTCOME_STARTED and not started.duplicate
    assert status_of(started.process) == "IDLE"
    assert status_of(await system.process(pid)) == "RUNNING"  # taken with the steer
    again = await system.processes.Steer(steer_request(pid, f"{m} slow", key=f"{m}-k"))
    assert again.duplicate and again.message_id == started.message_id

    await client.wait_for(
        lambda f: f["type"] == "chat-message-appended" and f["data"]["content"] == f"ack {m}"
    )
    await wait_status(system, pid, "IDLE")
    users = [x.content for x in await chat(system, pid) if x.role == pb.CHAT_ROLE_USER]
    assert users.count(f"{m} slow") == 1
    assert len(system.model_requests(f"{m} slow")) == 1
    await client.close()


async def test_paused_does_not_wake_and_resumes_with_everything_queued(system: System) -> None:
    m = marker()
    client, created = await new_session(system)
    pid = created["chatProcessId"]
    paused = await client.ok("process-pause", {"processName": "chat"})
    assert paused["status"] == "PAUSED"
    for i in range(3):
        reply = await client.ok("process-steer", {"processName": "chat", "content": f"{m} {i}"})
        assert reply["outcome"] == "DEFERRED"
    # Let the dispatcher prove it had its chance: another session's turn completes meanwhile.
    other, other_created = await new_session(system)
    await other.ok("process-steer", {"processName": "chat", "content": "ping"})
    await eventually(lambda: _answered(system, other_created["chatProcessId"], "ping"))
    p = await system.process(pid)
    assert status_of(p) == "PAUSED" and p.pending_count == 3
    assert system.model_requests(m) == []
    resumed = await client.ok("process-resume", {"processName": "chat"})
    assert resumed["status"] in ("IDLE", "RUNNING")
    await eventually(lambda: _answered(system, pid, m), what="the resumed turn")
    await wait_status(system, pid, "IDLE")
    requests = system.model_requests(m)
    assert len(requests) == 1  # one turn drained all three
    last_user = [x["content"] for x in requests[0]["messages"] if x["role"] == "user"][-3:]
    assert last_user == [f"{m} 0", f"{m} 1", f"{m} 2"]
    await client.close()
    await other.close()


async def test_a_killed_worker_turn_is_redone_by_another_worker_once(system: System) -> None:
    m = marker()
    system.script(Rule(match=m, text=f"survived {m}", delay_ms=2500, repeat=True))
    client, created = await new_session(system)
    pid = created["chatProcessId"]
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} slow question"})
    await eventually(lambda: len(system.model_requests(m)) == 1, what="the first model call")
    workers = await system.workers()
    owner = next(w for w in workers if w.running_turns)
    child = next(
        name
        for name, c in system.supervisor.children.items()
        if name.startswith("worker-") and owner.worker_id.startswith(f"{name}-")
    )
    killed_at = time.monotonic()
    system.supervisor.kill(child, signal.SIGKILL)
    await eventually(lambda: _answered(system, pid, m), timeout=30, what="the redone turn")
    elapsed_ms = (time.monotonic() - killed_at) * 1000
    assert elapsed_ms < system.config.lanes.lease_ms
    await wait_status(system, pid, "IDLE")
    answers = [
        x for x in await chat(system, pid) if x.role == pb.CHAT_ROLE_ASSISTANT and m in x.content
    ]
    users = [x for x in await chat(system, pid) if m in x.content and x.role == pb.CHAT_ROLE_USER]
    assert len(answers) == 1 and len(users) == 1
    assert len(system.model_requests(m)) == 2  # the lost attempt and the redo
    await system.supervisor.stop_child(child)
    await system.supervisor.start_worker(int(child.split("-")[1]))
    await eventually(lambda: _worker_count(system, 2), timeout=60, what="the worker back")
    await client.close()


async def _worker_count(system: System, n: int) -> bool:
    return len(await system.workers()) == n


async def test_resume_with_since_seq_replays_exactly_the_missed_events(system: System) -> None:
    m = marker()
    first, created = await new_session(system)
    sid, pid = created["sessionId"], created["chatProcessId"]
    await first.ok("process-steer", {"processName": "chat", "content": f"{m} one"})
    await eventually(lambda: _answered(system, pid, f"{m} one"))
    await wait_status(system, pid, "IDLE")
    await first.wait_for(
        lambda f: (
            f["type"] == "process-progress"
            and f["data"].get("status") == "IDLE"
            and f["seq"] > 0
            and f["seq"] == max(x.get("seq", 0) for x in first.frames)
        )
    )
    cut = max(f.get("seq", 0) for f in first.frames)
    await first.close()  # the client drops; events go on
    second_turn = f"{m} two"
    await (await system.connect()).close()
    reply = await system.processes.Steer(steer_request(pid, second_turn))
    assert pb.DeliveryOutcome.Name(reply.outcome) == "DELIVERY_OUTCOME_STARTED"
    await eventually(lambda: _answered(system, pid, second_turn))
    await wait_status(system, pid, "IDLE")
    back = await system.connect()
    resumed = await back.ok("session-resume", {"sessionId": sid, "sinceSeq": cut})
    assert resumed["sessionId"] == sid
    await back.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and second_turn in f["data"]["content"]
            and f["data"]["role"] == "assistant"
        )
    )
    replayed = [f for f in back.frames if "seq" in f]
    seqs = [f["seq"] for f in replayed]
    assert seqs == sorted(seqs) and min(seqs) == cut + 1
    assert len(seqs) == len(set(seqs))  # nothing twice
    # Every persisted event of the turn, in order. Its stream chunks left memory with its
    # commit (the answer replaces them, docs/protocol.md "What is replayed"): their seqs are
    # the only gap.
    turn = [
        (f["type"], f["data"].get("status") or f["data"].get("role"))
        for f in replayed
        if f["type"] in ("chat-message-appended", "process-progress")
    ]
    assert turn == [
        ("process-progress", "RUNNING"),
        ("chat-message-appended", "user"),
        ("chat-message-appended", "assistant"),
        ("process-progress", "IDLE"),
    ], turn
    assert "chat-message-stream-chunk" not in [f["type"] for f in replayed]
    assert max(seqs) - cut > len(seqs)  # the answer was streamed: its chunks had seqs
    # Live events follow the replay on the same socket.
    await back.ok("process-steer", {"processName": "chat", "content": f"{m} three"})
    live = await back.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f"{m} three" in f["data"]["content"]
            and f["data"]["role"] == "assistant"
        )
    )
    assert live["seq"] > max(seqs)
    await back.close()


async def test_a_version_mismatch_closes_the_process_stale(system: System) -> None:
    _, created = await new_session(system)
    created_process = await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default",
            project_id="demo",
            session_id=created["sessionId"],
            name="old-worker",
            engine="ford",
            engine_version="0.9.0",
            goal="old work",
            start=True,
        )
    )
    p = await wait_status(system, created_process.id, "CLOSED")
    assert pb.CloseReason.Name(p.close_reason) == "CLOSE_REASON_STALE"
    assert "0.9.0" in p.close_detail


async def test_a_child_reports_to_its_parent_when_done(system: System) -> None:
    m = marker()
    system.script(Rule(match=f"{m} child goal", text=f"{m} result: 3 contradictions"))
    client, created = await new_session(system)
    child = await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default",
            project_id="demo",
            session_id=created["sessionId"],
            name="paper-diff",
            engine="ford",
            goal=f"{m} child goal",
            parent_process_id=created["chatProcessId"],
            start=True,
        )
    )
    p = await wait_status(system, child.id, "CLOSED")
    assert pb.CloseReason.Name(p.close_reason) == "CLOSE_REASON_DONE"
    tag = f'<process-event sourceProcessId="{child.id}" type="done">{m} result'

    def parent_saw_it() -> bool:
        return any(
            tag in m2["content"]
            for r in system.model_requests(m)
            for m2 in r["messages"]
            if m2["role"] == "user"
        )

    await eventually(parent_saw_it, what="the parent's turn on the child's event")
    await wait_status(system, created["chatProcessId"], "IDLE")
    await client.close()


async def test_a_worker_whose_turn_keeps_failing_closes_with_a_reason(
    system: System,
) -> None:
    """A worker process (one with a parent) closes STALE when its turn fails every attempt
    (a chat stays open instead: tests/test_chat_outage.py)."""
    m = marker()
    goal = f"{m} never works"
    system.script(Rule(match_last=goal, fail_status=400, repeat=True))
    client, created = await new_session(system)
    worker = await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default",
            project_id="demo",
            session_id=created["sessionId"],
            name="doomed",
            engine="ford",
            goal=goal,
            parent_process_id=created["chatProcessId"],
            start=True,
        )
    )
    p = await wait_status(system, worker.id, "CLOSED", timeout=60)
    assert pb.CloseReason.Name(p.close_reason) == "CLOSE_REASON_STALE"
    assert "failed 3 times" in p.close_detail
    tried = [r for r in system.model_requests(goal) if goal in str(r["messages"][-1])]
    assert len(tried) == system.config.lanes.max_attempts
    # The failing worker never blocked anyone else's lane.
    await client.ok("process-steer", {"processName": "chat", "content": f"{m[::-1]} fine"})
    await eventually(lambda: _answered(system, created["chatProcessId"], m[::-1]))
    await client.close()


async def test_process_operations_and_session_wide_pause(system: System) -> None:
    m = marker()
    system.script(Rule(match=m, text="slow", delay_ms=1500))
    client, created = await new_session(system)
    init = await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default",
            project_id="demo",
            session_id=created["sessionId"],
            name="not-started",
            engine="ford",
            goal="later",
            start=False,
        )
    )
    refused = await client.request("process-pause", {"processName": "not-started"})
    assert refused["type"] == "error" and refused["data"]["errorCode"] == 409
    assert refused["data"]["reason"] == "process_init"
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} think"})
    await wait_status(system, created["chatProcessId"], "RUNNING")
    esc = await client.ok("process-pause", {})
    assert {p["processName"] for p in esc["processes"]} == {"chat", "not-started"}
    # The running turn finishes at its boundary, then the chat holds.
    await wait_status(system, created["chatProcessId"], "PAUSED")
    assert status_of(await system.process(init.id)) == "PAUSED"
    listed = await client.ok("process-list", {})
    assert {p["processName"]: p["status"] for p in listed["processes"]} == {
        "chat": "PAUSED",
        "not-started": "PAUSED",
    }
    stopped = await client.ok("process-stop", {"processName": "not-started"})
    assert stopped["status"] == "CLOSED" and stopped["closeReason"] == "STOPPED"
    assert len((await client.ok("process-list", {}))["processes"]) == 1
    everything = await client.ok("process-list", {"includeTerminated": True})
    assert len(everything["processes"]) == 2
    rejected = await client.ok("process-steer", {"processName": "not-started", "content": "x"})
    assert rejected["outcome"] == "REJECTED" and "closed" in rejected["reason"]
    unknown = await client.ok("process-steer", {"processName": "nobody", "content": "x"})
    assert unknown["outcome"] == "REJECTED" and "unknown" in unknown["reason"]
    messages = await client.ok("process-messages", {"processName": "chat", "limit": 2})
    assert [x["role"] for x in messages["messages"]] == ["user", "assistant"]
    await client.close()


async def test_a_draining_worker_finishes_its_turn(system: System) -> None:
    m = marker()
    system.script(Rule(match=m, text=f"finished {m}", delay_ms=1500, repeat=True))
    client, created = await new_session(system)
    pid = created["chatProcessId"]
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} drain me"})
    await eventually(lambda: len(system.model_requests(m)) == 1, what="the model call")
    owner = next(w for w in await system.workers() if w.running_turns)
    child = next(
        name
        for name in system.supervisor.children
        if name.startswith("worker-") and owner.worker_id.startswith(f"{name}-")
    )
    system.supervisor.kill(child, signal.SIGTERM)
    await eventually(lambda: _answered(system, pid, m), what="the drained turn")
    proc = system.supervisor.children[child].proc
    assert proc is not None
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    assert len(system.model_requests(m)) == 1  # finished, not redone
    await system.supervisor.stop_child(child)
    await system.supervisor.start_worker(int(child.split("-")[1]))
    await eventually(lambda: _worker_count(system, 2), timeout=60, what="the worker back")
    await client.close()


@pytest.mark.parametrize("op", ["Pause", "Resume", "Stop"])
async def test_only_start_is_allowed_in_init(system: System, op: str) -> None:
    _, created = await new_session(system)
    p = await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default",
            project_id="demo",
            session_id=created["sessionId"],
            name=f"init-{op.lower()}",
            engine="ford",
            goal="x",
            start=False,
        )
    )
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await getattr(system.processes, op)(ppb.ProcessRef(process_id=p.id))
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def test_a_child_stopped_by_the_user_reports_stopped_to_its_parent(
    system: System,
) -> None:
    m = marker()
    system.script(
        Rule(match_last=f"{m} long goal", text="late", delay_ms=3000),
        Rule(match_last="'long-one' stopped", text=f"noted {m}"),
    )
    client, created = await new_session(system)
    await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default",
            project_id="demo",
            session_id=created["sessionId"],
            name="long-one",
            engine="ford",
            goal=f"{m} long goal",
            parent_process_id=created["chatProcessId"],
            start=True,
        )
    )
    await eventually(lambda: len(system.model_requests(f"{m} long goal")) == 1)
    stopped = await client.ok("process-stop", {"processName": "long-one"})
    assert stopped["status"] == "CLOSED" and stopped["closeReason"] == "STOPPED"
    await eventually(
        lambda: _answered(system, created["chatProcessId"], f"noted {m}"),
        what="the parent's turn on the STOPPED event",
    )
    await client.close()
