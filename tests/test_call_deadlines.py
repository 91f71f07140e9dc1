"""Calls between our services have deadlines (vance/authclient.py, vance/config.py `calls`): a
peer that accepts a call and never answers fails it with DEADLINE_EXCEEDED within the deadline,
and a service whose own call ran out answers its caller the same way (vance/errors.py), never a
hang. Real gRPC servers on ephemeral ports: a stuck process_service stand-in, and a front
service with the servers' error mapping (vance/rpc_calls.py) that calls it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from vance.channels import Channels
from vance.clients.process import ProcessClient
from vance.config import Config, load_config
from vance.errors import DeadlineExceededError, reason_of
from vance.rpc_calls import ServerCalls
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc

DEADLINE_S = 0.5


Context = grpc.aio.ServicerContext[object, object]


class Stuck:
    """Takes ListProcesses calls and never answers (a hung peer)."""

    def __init__(self) -> None:
        self.calls = 0

    async def list_processes(
        self, request: ppb.ListProcessesRequest, context: Context
    ) -> ppb.ListProcessesResponse:
        self.calls += 1
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    def handlers(self) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
        return {
            "ListProcesses": grpc.unary_unary_rpc_method_handler(
                self.list_processes,
                ppb.ListProcessesRequest.FromString,
                ppb.ListProcessesResponse.SerializeToString,
            )
        }


class Front:
    """A service that asks the stuck one while answering its own caller: through the typed
    client (GetProcess), and through a bare stub (Pause)."""

    def __init__(self, client: ProcessClient) -> None:
        self.client = client

    async def get_process(
        self, request: ppb.GetProcessRequest, context: Context
    ) -> pb.ThinkProcess:
        await self.client.engines("sess_x")
        return pb.ThinkProcess()

    async def pause(self, request: ppb.ProcessRef, context: Context) -> pb.ThinkProcess:
        await self.client.stub.ListProcesses(ppb.ListProcessesRequest(session_id="sess_x"))
        return pb.ThinkProcess()

    def handlers(self) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
        out = pb.ThinkProcess.SerializeToString
        return {
            "GetProcess": grpc.unary_unary_rpc_method_handler(
                self.get_process, ppb.GetProcessRequest.FromString, out
            ),
            "Pause": grpc.unary_unary_rpc_method_handler(
                self.pause, ppb.ProcessRef.FromString, out
            ),
        }


async def serve(
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]],
) -> tuple[grpc.aio.Server, int]:
    """A vance.v1.ProcessService with these methods and the servers' error mapping."""
    server = grpc.aio.server(interceptors=[ServerCalls()])
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("vance.v1.ProcessService", handlers),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port


@pytest.fixture
async def stuck(tmp_path: Path) -> AsyncIterator[tuple[Stuck, Config]]:
    servicer = Stuck()
    server, port = await serve(servicer.handlers())
    config = load_config(
        env={
            "VANCE_DATA_DIR": str(tmp_path),
            "VANCE_SERVICE_SECRET": "a-test-secret-for-the-call-deadlines-test",
            "VANCE_PROCESS_SERVICE_ADDR": f"127.0.0.1:{port}",
            "VANCE_CALL_TIMEOUT_S": str(DEADLINE_S),
        }
    )
    try:
        yield servicer, config
    finally:
        await server.stop(0)


async def test_a_call_to_a_peer_that_does_not_answer_fails_within_its_deadline(
    stuck: tuple[Stuck, Config],
) -> None:
    servicer, config = stuck
    channels = Channels(config, name="tests")
    try:
        client = ProcessClient(channels.get("process_service"))
        started = time.monotonic()
        with pytest.raises(DeadlineExceededError) as raised:
            await client.engines("sess_x")
        took = time.monotonic() - started
        assert servicer.calls == 1  # it was asked, and did not answer
        assert DEADLINE_S <= took < DEADLINE_S + 3, took
        err = raised.value
        assert err.code == grpc.StatusCode.DEADLINE_EXCEEDED and err.http_status == 504
        assert err.reason == "deadline_exceeded"
        assert "did not answer within the call's deadline" in err.message
    finally:
        await channels.close()


async def test_a_service_whose_call_ran_out_answers_its_caller_deadline_exceeded(
    stuck: tuple[Stuck, Config],
) -> None:
    _, config = stuck
    channels = Channels(config, name="tests")
    front, port = await serve(Front(ProcessClient(channels.get("process_service"))).handlers())
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = process_pb2_grpc.ProcessServiceStub(channel)
            for call in (
                stub.GetProcess(ppb.GetProcessRequest(process_id="p"), timeout=10),
                stub.Pause(ppb.ProcessRef(process_id="p"), timeout=10),
            ):
                started = time.monotonic()
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    await call
                # The front's own deadline ran out, not the caller's (10 s): it said so.
                assert time.monotonic() - started < DEADLINE_S + 3
                err = raised.value
                assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED, err
                assert reason_of(err) == "deadline_exceeded"
                assert "did not answer within the call's deadline" in (err.details() or "")
    finally:
        await front.stop(0)
        await channels.close()
