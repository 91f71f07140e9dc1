"""Self-healing under load (issue 24, part 1): on a system whose supervisor restarts crashed
children (as under `vance run`), chat users keep talking while a worker, process_service,
session_service, the gateway, the store, tool_service and recipe_service are SIGKILLed in turn.
After each kill a new user gets an answer within 5 s, the killed child is back (its restart and
last exit in the supervisor's status file), and in the end every acknowledged message is in its
chat exactly once, with exactly one answer."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from engine_worker.health import READINESS_SERVICE
from tests.chat_load import ChatUser, probe
from tests.harness import System, eventually, running_system
from vance.supervisor import Child
from vance.supervisor_status import ChildStatus, read_status
from vance.testing.ports import free_port_block
from vance.testing.scripted_llm import ThreadedScriptedLlm
from vance.v1 import process_pb2 as ppb

VICTIMS = (
    "worker-1",
    "process_service",
    "session_service",
    "gateway",
    "store",
    "tool_service",
    "recipe_service",
)
USERS = 3
# The bound of the issue (24, "Done when"), held on a machine that is not overloaded. A restart
# is 0.5-1.4 s of CPU (imports, docs/operations.md "Failure model"); on a machine shared with
# other full systems (a load above OVERLOAD per core, as on the 2-core development machine
# while five developers run their suites) it takes several times longer through no fault of
# the system: there the bound widens to WIDE_S and the test prints that it did.
# VANCE_TEST_RECOVERY_S sets the bound outright.
RECOVERY_S = 5.0
WIDE_S = 30.0
OVERLOAD = 2.0


def _bound() -> tuple[float, str]:
    if "VANCE_TEST_RECOVERY_S" in os.environ:
        return float(os.environ["VANCE_TEST_RECOVERY_S"]), "VANCE_TEST_RECOVERY_S"
    per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    if per_core > OVERLOAD:
        return WIDE_S, f"widened: load {per_core:.1f} per core"
    return RECOVERY_S, f"load {per_core:.1f} per core"


@pytest.fixture(scope="module")
async def healing_system(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[System]:
    async with running_system(tmp_path_factory.mktemp("healing"), llm, self_healing=True) as system:
        yield system


def _child(system: System, name: str) -> ChildStatus:
    return next(c for c in read_status(system.supervisor.status_file).children if c.name == name)


async def _progress(system: System, users: list[ChatUser], timeout: float = 60.0) -> None:
    """Until every user has had one more answer: the load goes on."""
    before = [len(u.answered) for u in users]
    try:
        await eventually(
            lambda: all(len(u.answered) > b for u, b in zip(users, before, strict=True)),
            timeout=timeout,
            what="every user to get another answer",
        )
    except AssertionError as exc:
        stuck = [u for u, b in zip(users, before, strict=True) if len(u.answered) <= b]
        detail = [
            (
                u.current,
                u.current in u.acked,
                u.sockets,
                (await system.process(u.process_id)).status,
                (await _stored_chat(system, u))[-4:],
            )
            for u in stuck
        ]
        raise AssertionError(
            f"stuck users (message, acked, sockets, status, chat): {detail}"
        ) from exc


async def _stored_chat(system: System, user: ChatUser) -> list[str]:
    resp = await system.processes.ListChatMessages(
        ppb.ListChatMessagesRequest(session_id=user.session_id, process_id=user.process_id),
        timeout=10,
    )
    return [m.content for m in resp.messages]


async def test_every_child_killed_in_turn_under_load_loses_nothing(
    healing_system: System,
) -> None:
    system = healing_system
    users = [ChatUser(system) for _ in range(USERS)]
    stop = asyncio.Event()
    recovery: dict[str, tuple[float, float, str]] = {}  # seconds, bound, why that bound
    async with asyncio.TaskGroup() as tg:
        chats = [tg.create_task(u.chat(stop)) for u in users]
        await _progress(system, users)
        for victim in VICTIMS:
            before = system.supervisor.children[victim].proc
            assert before is not None
            bound, why = _bound()
            system.supervisor.kill(victim)
            killed_at = time.monotonic()
            try:
                await probe(system, bound)
            except AssertionError:
                # The load average lags by a minute: the suite's other system may have loaded
                # the machine past OVERLOAD only while this one recovered. Then the test's own
                # rule (above) widens the bound; on a machine that stayed below it, it fails.
                late, late_why = _bound()
                if late <= bound:
                    raise
                bound, why = late, f"{late_why}, while it recovered"
                await probe(system, bound - (time.monotonic() - killed_at))
            recovery[victim] = (round(time.monotonic() - killed_at, 2), bound, why)
            await _progress(system, users)

            def back(name: str = victim, old: int = before.pid) -> bool:
                c = _child(system, name)
                return c.state == "running" and c.pid != old

            await eventually(back, timeout=30, what=f"{victim} to be back")
            status = _child(system, victim)
            assert status.restarts == 1
            assert status.last_exit is not None and status.last_exit.signal == "SIGKILL"
        stop.set()
        for chat in chats:
            await chat
    print(f"\nanswering again after each SIGKILL (s, bound, why): {recovery}")
    print(f"messages per user: {[len(u.acked) for u in users]}")
    for user in users:
        assert user.acked, "the load sent nothing"
        stored = await _stored_chat(system, user)
        for content in user.acked:
            assert stored.count(content) == 1, (content, stored)
            answers = [s for s in stored if s == f"You said: {content}"]
            assert len(answers) == 1, (content, stored)
    assert all(c.state == "running" for c in read_status(system.supervisor.status_file).children)


async def _worker_health(port: int, service: str) -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            resp = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=2
            )
        except grpc.aio.AioRpcError:
            return -1
        return int(resp.status)


async def test_a_workers_health_follows_its_stream_to_process_service(
    healing_system: System,
) -> None:
    """engine_worker/health.py on a real worker: alive throughout, ready only while connected."""
    system = healing_system
    port = free_port_block(1)
    child = Child(
        "worker-9",
        [sys.executable, "-m", "engine_worker"],
        extra_env={"VANCE_WORKER_ID": "worker-health", "VANCE_WORKER_HEALTH_PORT": str(port)},
    )
    await system.supervisor.start(child)
    serving = health_pb2.HealthCheckResponse.SERVING
    not_serving = health_pb2.HealthCheckResponse.NOT_SERVING

    async def ready_is(status: int) -> bool:
        return await _worker_health(port, READINESS_SERVICE) == status

    await eventually(lambda: ready_is(serving), timeout=60, what="the worker to be ready")
    assert await _worker_health(port, "") == serving
    system.supervisor.kill("process_service")
    await eventually(lambda: ready_is(not_serving), timeout=10, what="not ready without its stream")
    assert await _worker_health(port, "") == serving  # alive all the same
    await eventually(lambda: ready_is(serving), timeout=30, what="ready again")
    await system.supervisor.stop_child("worker-9")
    assert await _worker_health(port, "") == -1  # stopped: nothing answers
