"""The gateway's one event stream to process_service for all its sockets (gateway/event_feed.py,
process_service/events/follow.py): each socket gets exactly its own session's events, in seq
order; a socket that reconnects mid-answer misses nothing and sees nothing twice; a follow whose
reader stops is bounded and does not hold up the others, and catches up later; a process_service
restart mid-answer loses and repeats nothing on the socket."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from gateway.event_feed import EventFeed, Follow
from tests.harness import System, WsClient, eventually, has_workers
from tests.test_restart import answers as answers_of
from tests.test_restart import respond_streamed
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import process_internal_pb2_grpc
from vance.protoutil import dict_to_struct
from vance.v1 import common_pb2 as pb


def _answered(client: WsClient, pid: str, text: str) -> Callable[[dict[str, Any]], bool]:
    return lambda _: bool(answers_of(client, pid, text))


def _seqs(client: WsClient) -> list[int]:
    return [int(f["seq"]) for f in client.frames if f.get("seq") is not None]


async def test_many_sockets_on_one_gateway_each_get_their_own_events_in_order(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    n = 12
    clients = [await system.connect() for _ in range(n)]
    made = [await c.ok("session-create", {"projectId": "demo"}) for c in clients]
    answers = [f"{m}-{i} answer " + " ".join(f"w{i}x{k}" for k in range(24)) for i in range(n)]
    system.script(*(respond_streamed(f"{m}-{i} ask", answers[i]) for i in range(n)))
    await asyncio.gather(
        *(
            c.ok("process-steer", {"processId": s["chatProcessId"], "content": f"{m}-{i} ask"})
            for i, (c, s) in enumerate(zip(clients, made, strict=True))
        )
    )
    for i, (c, s) in enumerate(zip(clients, made, strict=True)):
        await c.wait_for(_answered(c, s["chatProcessId"], answers[i]), timeout=60)
    for i, (c, s) in enumerate(zip(clients, made, strict=True)):
        pid = s["chatProcessId"]
        seqs = _seqs(c)
        assert seqs == sorted(seqs) and len(seqs) == len(set(seqs)), seqs
        mine = [
            f
            for f in c.frames
            if f["type"] in ("chat-message-stream-chunk", "chat-message-appended")
        ]
        # Nothing of another session: every message and chunk frame is of its own chat.
        assert {f["data"]["thinkProcessId"] for f in mine} == {pid}
        chunks = [f["data"]["chunk"] for f in mine if f["type"] == "chat-message-stream-chunk"]
        assert len(chunks) >= 2, chunks  # the answer streamed
        assert answers[i].startswith("".join(chunks)) or "".join(chunks) in answers[i]
        assert len(answers_of(c, pid, answers[i])) == 1
    for c in clients:
        await c.close()


async def test_a_socket_dropped_mid_answer_resumes_from_its_last_seq(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    answer = f"{m} answer " + " ".join(f"word{k}" for k in range(40))
    system.script(respond_streamed(f"{m} ask", answer, stream_ms=3000))
    client = await system.connect()
    made = await client.ok("session-create", {"projectId": "demo"})
    sid, pid = made["sessionId"], made["chatProcessId"]
    await client.ok("process-steer", {"processId": pid, "content": f"{m} ask"})
    chunk = await client.wait_for(
        lambda f: f["type"] == "chat-message-stream-chunk", timeout=30, what="a chunk"
    )
    seen = [f for f in client.frames if f.get("seq") is not None]
    last = int(chunk["seq"])
    await client.close()  # the socket drops while the answer streams

    resumed = await system.connect()
    await resumed.ok("session-resume", {"sessionId": sid, "takeover": True, "sinceSeq": last})
    await resumed.wait_for(lambda f: bool(answers_of(resumed, pid, answer)), timeout=60)
    later = _seqs(resumed)
    assert later and min(later) > last
    assert later == sorted(later) and len(later) == len(set(later))
    # Seen before the drop plus after the resume: every stored event of the session once.
    everything = await system.connect()
    await everything.ok("session-resume", {"sessionId": sid, "takeover": True, "sinceSeq": 0})
    await everything.wait_for(lambda f: bool(answers_of(everything, pid, answer)), timeout=30)
    stored = {
        int(f["seq"])
        for f in everything.frames
        if f.get("seq") is not None and f["type"] != "chat-message-stream-chunk"
    }
    got = {int(f["seq"]) for f in seen} | set(later)
    assert stored <= got
    assert len(answers_of(resumed, pid, answer)) == 1
    await resumed.close()
    await everything.close()


async def test_a_user_token_cannot_follow_sessions(system: System) -> None:
    """The stream names any session: it is for the gateway's service credentials only."""
    token = await system.login()
    channel = grpc.aio.insecure_channel(system.config.address("process_service"))
    try:
        stub = process_internal_pb2_grpc.ProcessInternalServiceStub(channel)
        # No request is written: the refusal comes before the server reads any (a request
        # written meanwhile would race it and fail on the client's side instead).
        call = stub.FollowSessions(metadata=(("authorization", f"Bearer {token}"),))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            async for _ in call:
                pass
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    finally:
        await channel.close()


async def _read(follow: Follow, want: int, out: list[pb.SessionEvent]) -> None:
    while sum(1 for e in out if e.WhichOneof("kind") == "notice") < want:
        out.extend(await follow.next())


async def test_a_follow_nobody_reads_is_bounded_and_does_not_hold_up_the_others(
    system: System,
) -> None:
    """The gateway's feed against the real process_service: one follow is not read while both
    sessions get many events; the other gets all of its own at once, the unread one keeps at
    most its bound, and once read it gets every event in order (replayed), none twice."""
    slow_sid, quick_sid = f"s-slow-{uuid.uuid4().hex[:8]}", f"s-quick-{uuid.uuid4().hex[:8]}"
    feed = EventFeed(system.processes_internal, queue_limit=8)
    events = 60
    async with asyncio.TaskGroup() as tasks:
        runner = tasks.create_task(feed.run())
        slow, quick = feed.follow(slow_sid, 0), feed.follow(quick_sid, 0)
        for i in range(events):
            notice = pb.Notice(type="feed-test", data=dict_to_struct({"i": i}))
            await system.processes_internal.PublishNotice(
                pipb.PublishNoticeRequest(session_ids=[slow_sid, quick_sid], notice=notice)
            )
        got: list[pb.SessionEvent] = []
        await asyncio.wait_for(_read(quick, events, got), 30)
        assert {e.session_id for e in got} == {quick_sid}
        assert [e.notice.data["i"] for e in got] == list(range(events))
        # The unread one stopped taking events at its bound.
        await eventually(lambda: slow.paused, what="the unread follow to pause")
        assert slow.queued <= 8
        late: list[pb.SessionEvent] = []
        await asyncio.wait_for(_read(slow, events, late), 30)
        seqs = [e.seq for e in late]
        assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
        assert {e.session_id for e in late} == {slow_sid}
        assert [e.notice.data["i"] for e in late] == list(range(events))
        assert feed.streams_opened == 1
        slow.close()
        quick.close()
        runner.cancel()


async def test_events_go_to_the_socket_at_once_and_wait_in_order_when_it_cannot_take_one(
    system: System,
) -> None:
    """A follow hands its events to the socket (`deliver`) as they arrive. Once the socket
    cannot take one (a reply of its own is being sent), that event and every later one wait in
    the queue, and the socket is asked again only after its pump has sent them: every event
    once, in seq order, whichever way it went."""
    sid = f"s-direct-{uuid.uuid4().hex[:8]}"
    feed = EventFeed(system.processes_internal)
    delivered: list[int] = []
    busy = False

    def deliver(event: pb.SessionEvent) -> bool:
        if busy:
            return False
        delivered.append(int(event.notice.data.fields["i"].number_value))
        return True

    async def publish(numbers: range) -> None:
        for i in numbers:
            await system.processes_internal.PublishNotice(
                pipb.PublishNoticeRequest(
                    session_ids=[sid],
                    notice=pb.Notice(type="feed-test", data=dict_to_struct({"i": i})),
                )
            )

    def numbers(events: list[pb.SessionEvent]) -> list[int]:
        return [int(e.notice.data.fields["i"].number_value) for e in events]

    async with asyncio.TaskGroup() as tasks:
        runner = tasks.create_task(feed.run())
        follow = feed.follow(sid, 0, deliver)
        await publish(range(0, 10))
        await eventually(lambda: len(delivered) == 10, what="ten events delivered at once")
        busy = True
        await publish(range(10, 15))
        await eventually(lambda: follow.queued == 5, what="the refused events to queue")
        busy = False  # the socket could take events again, but five wait before them
        await publish(range(15, 20))
        await eventually(lambda: follow.queued == 10, what="the later events to queue too")
        pumped = await follow.next()
        # The pump holds what it took until it asks again: nothing may pass it meanwhile.
        await publish(range(20, 25))
        await eventually(lambda: follow.queued == 5, what="events behind the pump to queue")
        pumped += await follow.next()
        waiting = tasks.create_task(follow.next())  # the pump sent them all and asks again
        await publish(range(25, 30))
        await eventually(lambda: len(delivered) == 15, what="deliveries to resume")
        assert delivered == [*range(0, 10), *range(25, 30)]
        assert numbers(pumped) == list(range(10, 25))
        assert not waiting.done()
        waiting.cancel()
        follow.close()
        runner.cancel()


async def test_the_socket_misses_nothing_across_a_process_service_restart(
    own_system: System,
) -> None:
    """The feed's stream breaks with process_service; it reopens and adds each follow again
    from the last seq it received: the socket gets the answer once, seqs in order, none twice."""
    system = own_system
    m = uuid.uuid4().hex[:8]
    answer = f"{m} answer " + " ".join(f"word{k}" for k in range(30))
    system.script(respond_streamed(f"{m} ask", answer, arg_chunks=12, stream_ms=6000, repeat=True))
    client = await system.connect()
    made = await client.ok("session-create", {"projectId": "demo"})
    pid = made["chatProcessId"]
    await client.ok("process-steer", {"processId": pid, "content": f"{m} ask"})
    await client.wait_for(lambda f: f["type"] == "chat-message-stream-chunk", timeout=30)
    await system.supervisor.restart_service("process_service")
    await eventually(lambda: has_workers(system), what="workers back", timeout=60)
    await client.wait_for(lambda f: bool(answers_of(client, pid, answer)), timeout=90)
    seqs = _seqs(client)
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs)), seqs
    assert len(answers_of(client, pid, answer)) == 1
    # New events after the restart reach the same socket.
    system.script(respond_streamed(f"{m} again", f"{m} second answer"))
    await client.ok("process-steer", {"processId": pid, "content": f"{m} again"})
    await client.wait_for(lambda f: bool(answers_of(client, pid, f"{m} second answer")), timeout=60)
    await client.close()
