"""The gateway's steers on one stream to process_service (gateway/steer_stream.py,
process_service/runtime/steer_stream.py): each call gets exactly the reply or the error the
unary `Steer` gives for the same request and user, however many sockets steer at once; a
process_service killed while steers are in flight loses and duplicates none of them; one that
does not answer holds at most the gateway's bound of calls, each failing at its deadline."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Any

import grpc

from gateway.errors import ErrorInfo, describe
from gateway.steer_stream import SteerStreams
from tests.harness import System, WsClient, eventually, has_workers
from tests.sessions_support import new_user
from vance.auth import on_behalf_of
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import process_internal_pb2_grpc
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb


def _steer(pid: str, sid: str, content: str, key: str = "") -> ppb.SteerRequest:
    return ppb.SteerRequest(
        target=ppb.ProcessRef(process_id=pid, session_id=sid),
        message=pb.SteerMessage(
            idempotency_key=key, user_chat_input=pb.UserChatInput(from_user="dev", content=content)
        ),
    )


async def _as(token: str, call: Callable[[], Awaitable[Any]]) -> Any:
    """`call` made for the user of `token`, as the gateway makes a socket's calls; its reply,
    or the error a socket would be shown."""

    async def made_for() -> Any:  # a task of its own: the token stays in its context
        on_behalf_of.set(token)
        try:
            return await call()
        except Exception as exc:
            return describe(exc)

    return await asyncio.create_task(made_for())


async def test_each_call_on_the_stream_gets_what_the_unary_call_gives(system: System) -> None:
    owner_token = await system.login()
    _, other_token = await new_user(system)
    n = 24
    clients = [await system.connect(owner_token) for _ in range(n)]
    made = [await c.ok("session-create", {"projectId": "demo"}) for c in clients]
    stub = system.processes
    m = uuid.uuid4().hex[:8]
    # Through the gateway: every socket steers at once, each gets its own process's reply.
    replies = await asyncio.gather(
        *(
            c.ok("process-steer", {"processId": s["chatProcessId"], "content": f"{m}-{i}"})
            for i, (c, s) in enumerate(zip(clients, made, strict=True))
        )
    )
    assert [r["thinkProcessId"] for r in replies] == [s["chatProcessId"] for s in made]
    assert len({r["messageId"] for r in replies}) == n
    streams = SteerStreams([system.processes_internal], timeout_s=10)
    runner = asyncio.create_task(streams.run())
    try:
        # Every socket's steers at once, each for its own session, plus a second user steering
        # into each of them (refused per call by Steer's rule, on the same stream).
        calls = []
        for i, s in enumerate(made):
            pid, sid = s["chatProcessId"], s["sessionId"]
            for k in range(3):
                req = _steer(pid, sid, f"{m}-{i}-{k}", key=f"{m}-{i}-{k}")
                calls.append((owner_token, req))
            calls.append((other_token, _steer(pid, sid, f"{m}-{i}-foreign")))
        results = await asyncio.gather(*(_as(t, partial(streams.steer, r)) for t, r in calls))
        message_ids = set()
        first = ""  # the id of the first socket's first message
        for (token, req), got in zip(calls, results, strict=True):
            if token == other_token:
                assert got == ErrorInfo(403, got.message, "session_foreign"), got
                continue
            assert isinstance(got, ppb.SteerResponse), got
            assert got.process.id == req.target.process_id  # its own process, not another's
            assert got.outcome in (pb.DELIVERY_OUTCOME_STARTED, pb.DELIVERY_OUTCOME_QUEUED)
            assert not got.duplicate
            message_ids.add(got.message_id)
            first = first or got.message_id
        assert len(message_ids) == 3 * n  # one stored message per call, none shared

        # The same requests again: the unary call and the stream give the same answer.
        pid, sid = made[0]["chatProcessId"], made[0]["sessionId"]
        for token, req in [
            (owner_token, _steer(pid, sid, f"{m}-0-0", key=f"{m}-0-0")),  # a duplicate
            (other_token, _steer(pid, sid, "not yours")),  # PERMISSION_DENIED
            (owner_token, ppb.SteerRequest(target=ppb.ProcessRef(process_id=pid))),  # no message
            (owner_token, _steer("p-missing", sid, "to nobody")),  # NOT_FOUND
            ("not-a-token", _steer(pid, sid, "who?")),  # UNAUTHENTICATED
        ]:
            unary = await _as(token, partial(stub.Steer, req, timeout=10))
            streamed = await _as(token, partial(streams.steer, req))
            if isinstance(unary, ErrorInfo):
                assert streamed == unary
            else:
                assert isinstance(streamed, ppb.SteerResponse)
                assert streamed.duplicate and unary.duplicate
                # The original's id, also when a turn's commit moved it to the archive
                # meanwhile (process_service/runtime/inbox.py reads it there).
                assert streamed.message_id == unary.message_id == first
        assert streams.opened == 1
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        for c in clients:
            await c.close()


async def _steer_until_answered(
    client: WsClient, pid: str, content: str, tally: dict[str, int]
) -> None:
    """Sends until the steer is acknowledged, the same idempotency key every time (what a
    client does on an error frame, docs/protocol.md)."""
    while True:
        reply = await client.request(
            "process-steer",
            {"processId": pid, "content": content, "idempotencyKey": f"key-{content}"},
            timeout=30,
        )
        if reply["type"] == "process-steer":
            tally["duplicate" if reply["data"]["duplicate"] else "stored"] += 1
            return
        error = f"error {reply['data']['errorCode']} {reply['data']['reason']}"
        tally[error] = tally.get(error, 0) + 1
        assert reply["data"]["errorCode"] in (503, 504), reply


async def _user_messages(system: System, sid: str, pid: str) -> list[str]:
    resp = await system.processes.ListChatMessages(
        ppb.ListChatMessagesRequest(session_id=sid, process_id=pid), timeout=10
    )
    return [msg.content for msg in resp.messages if msg.role == pb.CHAT_ROLE_USER]


async def test_steers_in_flight_when_process_service_is_killed_are_kept_once(
    own_system: System,
) -> None:
    system = own_system
    m = uuid.uuid4().hex[:8]
    sockets, per_socket = 6, 12
    clients = [await system.connect() for _ in range(sockets)]
    made = [await c.ok("session-create", {"projectId": "demo"}) for c in clients]
    tally = {"stored": 0, "duplicate": 0}
    contents = [[f"[{m}-{i}-{k}]" for k in range(per_socket)] for i in range(sockets)]
    sent_half = asyncio.Event()

    async def user(i: int) -> None:
        for k, content in enumerate(contents[i]):
            if i == 0 and k == per_socket // 2:
                sent_half.set()
            await _steer_until_answered(clients[i], made[i]["chatProcessId"], content, tally)

    async with asyncio.TaskGroup() as tasks:
        for i in range(sockets):
            tasks.create_task(user(i))
        await sent_half.wait()
        # SIGKILL while the sockets steer back to back: calls are on the stream.
        await system.supervisor.restart_service("process_service")
    await eventually(lambda: has_workers(system), what="workers back", timeout=60)
    for i, s in enumerate(made):
        sid, pid = s["sessionId"], s["chatProcessId"]

        async def all_in(sid: str = sid, pid: str = pid, i: int = i) -> bool:
            stored = await _user_messages(system, sid, pid)
            return all(c in "".join(stored) for c in contents[i])

        await eventually(all_in, timeout=90, what=f"socket {i}'s messages in its chat")
        joined = "\n".join(await _user_messages(system, sid, pid))
        for content in contents[i]:
            assert joined.count(content) == 1, (content, joined)
    # Every steer was acknowledged once (retries of one whose outcome was unknown may say
    # duplicate: it had been stored).
    assert tally["stored"] + tally["duplicate"] == sockets * per_socket, tally
    # New steers after the restart go on the reopened stream.
    await clients[0].ok("process-steer", {"processId": made[0]["chatProcessId"], "content": m})
    print("steer outcomes across the kill:", tally)
    for c in clients:
        await c.close()


class _Stuck:
    """A process_service that reads steers and never answers one (a hung or overloaded peer)."""

    def __init__(self) -> None:
        self.calls: list[pipb.SteerCall] = []

    async def steer_stream(self, requests: AsyncIterator[pipb.SteerStreamRequest], _: Any) -> None:
        async for request in requests:
            self.calls.extend(request.calls)
        await asyncio.Event().wait()

    def handler(self) -> grpc.GenericRpcHandler:
        return grpc.method_handlers_generic_handler(
            "vance.internal.v1.ProcessInternalService",
            {
                "SteerStream": grpc.stream_stream_rpc_method_handler(
                    self.steer_stream,
                    pipb.SteerStreamRequest.FromString,
                    pipb.SteerStreamReply.SerializeToString,
                )
            },
        )


async def test_a_stuck_peer_gets_at_most_the_bound_and_each_call_fails_in_time() -> None:
    stuck = _Stuck()
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([stuck.handler()])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    streams = SteerStreams(
        [process_internal_pb2_grpc.ProcessInternalServiceStub(channel)],
        timeout_s=0.5,
        max_in_flight=4,
    )
    runner = asyncio.create_task(streams.run())
    try:
        started = asyncio.get_running_loop().time()
        steers = [
            asyncio.create_task(_as("", partial(streams.steer, _steer("p", "s", f"m{i}"))))
            for i in range(10)
        ]
        # The bound: 4 calls on the wire at once (the writer sends all it has in one message,
        # so without the bound all ten would arrive together); the others wait in the gateway.
        await eventually(lambda: len(stuck.calls) >= 4, what="the first calls on the stream")
        assert len(stuck.calls) == 4
        assert all(0 < c.timeout_ms <= 500 for c in stuck.calls)
        results = await asyncio.gather(*steers)
        # None hangs: each fails as a unary call past its deadline does (504 at the socket).
        assert results == [ErrorInfo(504, "Deadline Exceeded", "deadline_exceeded")] * 10
        assert asyncio.get_running_loop().time() - started < 5
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await channel.close()
        await server.stop(None)
