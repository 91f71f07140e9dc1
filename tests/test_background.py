"""Long-running service tasks (vance/background.py): a failure is logged, shown by gRPC health,
and leaves the other tasks running; stopping the server cancels and awaits every task."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.harness import eventually
from vance.config import load_config
from vance.internal.v1 import tokens_internal_pb2 as tipb
from vance.server import GrpcHost

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def _no_revocations(since_ms: int) -> tipb.ListTokenRevocationsSinceResponse:
    return tipb.ListTokenRevocationsSinceResponse(as_of_ms=since_ms + 1)


async def test_a_failed_task_turns_health_not_serving_and_the_others_run_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = load_config(env={"VANCE_DATA_DIR": str(tmp_path / "data")})
    host = GrpcHost(["vance.v1.Probe"], config, revocations=_no_revocations)
    port = host.bind("127.0.0.1", 0)
    fail = asyncio.Event()
    ticks = 0
    cancelled: list[str] = []

    async def steady() -> None:
        nonlocal ticks
        try:
            while True:
                ticks += 1
                await asyncio.sleep(0.01)
        finally:
            cancelled.append("steady")

    async def fragile() -> None:
        await fail.wait()
        raise ValueError("the store said no")

    host.background.start("steady", steady())
    host.background.start("fragile", fragile())
    await host.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)

        async def status(service: str = "") -> int:
            reply = await health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            return int(reply.status)

        assert await status() == SERVING
        fail.set()

        async def not_serving() -> bool:
            return await status() == NOT_SERVING and await status("vance.v1.Probe") == NOT_SERVING

        await eventually(not_serving, timeout=30)
        assert host.background.failures == {"fragile": "ValueError: the store said no"}
        assert "background task fragile failed" in caplog.text
        seen = ticks
        await eventually(lambda: ticks > seen + 3, timeout=30)  # the group is still up
    await host.stop(grace=0)
    assert cancelled == ["steady"]


async def test_a_forever_task_that_returns_is_a_failure_and_best_effort_is_not(
    tmp_path: Path,
) -> None:
    config = load_config(env={"VANCE_DATA_DIR": str(tmp_path / "data")})
    host = GrpcHost(["vance.v1.Probe"], config, revocations=_no_revocations)
    host.bind("127.0.0.1", 0)

    async def returns() -> None:
        return None

    async def warm_up() -> None:
        raise OSError("no model reachable")

    host.background.start("warm-up", warm_up(), forever=False, best_effort=True)
    host.background.start("one-shot", returns(), forever=False)
    host.background.start("sweeps", returns())
    await host.start()
    await eventually(lambda: bool(host.background.failures), timeout=30)
    assert host.background.failures == {"sweeps": "ended"}
    await host.stop(grace=0)
