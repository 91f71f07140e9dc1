"""Helpers for the session lifecycle tests: sweeps at a chosen time, session reads, a direct
store handle (settings, and proving a deleted session left nothing), users, and a second
in-process session_service replica with a hand-moved clock."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
from pymongo import AsyncMongoClient

from session_service.lifecycle.hooks import Hooks
from session_service.server import create_server
from tests.harness import System, WsClient, eventually
from vance.authclient import authed_channel
from vance.clock import ManualClock
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.internal.v1 import session_internal_pb2_grpc
from vance.testing.ports import free_port_block
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import recipe_pb2_grpc, session_pb2_grpc
from vance.v1 import session_pb2 as spb

MIN = 60_000
HOUR = 60 * MIN
DAY = 24 * HOUR


def marker() -> str:
    return uuid.uuid4().hex[:10]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def name(enum: Any, value: int, prefix: str) -> str:
    return str(enum.Name(value)).removeprefix(prefix)


async def get(system: System, sid: str, tenant: str = "default") -> spb.Session:
    s: spb.Session = await system.sessions.GetSession(
        spb.GetSessionRequest(tenant_id=tenant, session_id=sid)
    )
    return s


async def status(system: System, sid: str, tenant: str = "default") -> str:
    return name(pb.SessionStatus, (await get(system, sid, tenant)).status, "SESSION_STATUS_")


async def wait_status(system: System, sid: str, expected: str, tenant: str = "default") -> None:
    async def check() -> bool:
        return await status(system, sid, tenant) == expected

    await eventually(check, what=f"session {sid} {expected}")


async def sweep(system: System, at_ms: int, *only: str) -> sipb.RunSweepsResponse:
    report: sipb.RunSweepsResponse = await system.sessions_internal.RunSweeps(
        sipb.RunSweepsRequest(now_ms=at_ms, only_session_ids=list(only))
    )
    return report


async def engines(system: System, sid: str) -> dict[str, str]:
    listed = await system.processes.ListProcesses(
        ppb.ListProcessesRequest(session_id=sid, include_terminated=True)
    )
    return {p.name: name(pb.ProcessStatus, p.status, "PROCESS_STATUS_") for p in listed.processes}


async def wait_engine(system: System, pid: str, expected: str) -> None:
    async def check() -> bool:
        p = await system.process(pid)
        return name(pb.ProcessStatus, p.status, "PROCESS_STATUS_") == expected

    await eventually(check, what=f"process {pid} {expected}")


async def create(client: WsClient, **data: Any) -> dict[str, Any]:
    return await client.ok("session-create", {"projectId": "demo", **data})


async def chat_once(system: System, client: WsClient, pid: str, text: str) -> None:
    """One completed question-and-answer pair (the scripted model echoes)."""
    await client.ok("process-steer", {"processId": pid, "content": text})
    await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["role"] == "assistant"
            and text in f["data"]["content"]
        ),
        what=f"the answer to {text!r}",
    )
    await wait_engine(system, pid, "IDLE")


def op(sid: str, tenant: str = "default", user: str = "") -> spb.SessionOpRequest:
    return spb.SessionOpRequest(
        tenant_id=tenant, session_id=sid, caller=spb.Caller(user_id=user, roles=[])
    )


async def user(system: System, tenant: str, username: str, *roles: str) -> str:
    """Creates a user (and its token) in `tenant`."""
    await system.sessions.CreateUser(
        spb.CreateUserRequest(
            tenant_id=tenant, username=username, password="pw-" + username, roles=list(roles)
        )
    )
    return await system.login(username, "pw-" + username, tenant)


async def rest(
    system: System, method: str, path: str, token: str, body: dict[str, Any] | None = None
) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.request(
            method,
            f"http://{system.gateway}{path}",
            json=body,
            headers={"Authorization": f"Bearer {token}"},
        )


@contextlib.asynccontextmanager
async def store(system: System) -> AsyncIterator[Any]:
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(system.config.mongodb_uri)
    try:
        yield client[system.config.store.db_name]
    finally:
        await client.close()


async def put_settings(system: System, key: str, values: dict[str, str]) -> None:
    """Tenant (`<tenant>`) or project (`<tenant>:<project>`) settings, as a tenant admin over
    gRPC (tests/test_rest.py drives the same through the gateway)."""
    tenant, _, project = key.partition(":")
    await system.sessions.UpdateSettings(
        spb.UpdateSettingsRequest(
            tenant_id=tenant,
            project_id=project,
            caller=spb.Caller(user_id="admin", roles=["admin"]),
            set=values,
        )
    )


@contextlib.asynccontextmanager
async def replica(
    system: System, clock: ManualClock, *, hooks: Hooks | None = None, **lifecycle: Any
) -> AsyncIterator[ReplicaStubs]:
    """A second session_service replica in this process, on the same store and services,
    whose clock the test moves."""
    config = system.config.model_copy(
        update={
            "seed_defaults": False,
            "lifecycle": system.config.lifecycle.model_copy(update=lifecycle),
        }
    )
    port = free_port_block(1)
    host, bound = await create_server(config, port=port, clock=clock, hooks=hooks)
    await host.start()
    channel = authed_channel(f"127.0.0.1:{bound}", system.credential)
    try:
        yield ReplicaStubs(
            session_pb2_grpc.SessionServiceStub(channel),
            session_internal_pb2_grpc.SessionInternalServiceStub(channel),
        )
    finally:
        await channel.close()
        await host.stop(0)


@dataclass(frozen=True)
class ReplicaStubs:
    """A second session_service replica's public and service-only services."""

    sessions: session_pb2_grpc.SessionServiceAsyncStub
    internal: session_internal_pb2_grpc.SessionInternalServiceAsyncStub


def recipes(system: System) -> recipe_pb2_grpc.RecipeServiceAsyncStub:
    return recipe_pb2_grpc.RecipeServiceStub(system.channel("recipe_service"))


async def cut_off(system: System, sid: str) -> None:
    """A FORCED suspend as a gateway replica's shutdown makes it when no client comes back:
    the session was bound through the replica, its work was cut off, and the takeover after
    the reconnect grace suspends it (session_service/lifecycle/replica_takeover.py). The takeover
    is asked for
    a moment just past that grace; the live gateway's lease, renewed for a whole lease, is not
    over by then."""
    m = uuid.uuid4().hex[:8]
    conn = f"conn_{m}"
    await system.sessions.BindSession(
        spb.BindSessionRequest(tenant_id="default", session_id=sid, connection_id=conn)
    )
    await system.sessions_internal.ShutdownReplica(
        sipb.ReplicaRequest(replica_id=f"gw_{m}", sessions={sid: conn})
    )
    grace = system.config.lifecycle.reconnect_grace_ms
    await system.sessions_internal.TakeOverReplicas(
        sipb.TakeOverReplicasRequest(now_ms=now_ms() + grace + 1_000)
    )
