"""Every gRPC service wants credentials (vance/authz.py, vance/policy.py): no token or a forged
one is UNAUTHENTICATED, another user's token PERMISSION_DENIED; a body never raises rights."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import grpc
import jwt
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.harness import System
from vance.auth import mint_service_token, user_secret
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.internal.v1 import session_internal_pb2_grpc, tool_pb2_grpc
from vance.internal.v1 import tool_pb2 as tpb
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc, recipe_pb2_grpc, session_pb2_grpc
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import session_pb2 as spb

TENANT = "default"


@dataclass
class People:
    alice: str  # a user with a session
    mallory: str  # another user of the same tenant
    outsider: str  # a correctly signed token of another tenant
    forged: str  # alice's claims signed with a key the system never had
    forged_service: str
    session_id: str
    chat_process_id: str


async def _user(system: System, name: str) -> str:
    try:
        await system.sessions.CreateUser(
            spb.CreateUserRequest(tenant_id=TENANT, username=name, password=f"{name}-pw")
        )
    except grpc.aio.AioRpcError as exc:
        assert exc.code() == grpc.StatusCode.ALREADY_EXISTS
    return await system.login(name, f"{name}-pw")


def _token(secret: str, sub: str, tenant: str, roles: list[str]) -> str:
    now = int(time.time())
    claims = {"sub": sub, "tenant": tenant, "roles": roles, "iat": now, "exp": now + 600}
    return jwt.encode(claims, secret, algorithm="HS256")


@pytest.fixture(scope="module")
async def people(system: System) -> AsyncIterator[People]:
    alice = await _user(system, "alice")
    mallory = await _user(system, "mallory")
    client = await system.connect(alice)
    created = await client.ok("session-create", {"projectId": "demo"})
    await client.close()
    yield People(
        alice=alice,
        mallory=mallory,
        outsider=_token(user_secret(system.config), "eve", "elsewhere", ["admin"]),
        forged=_token("not-the-secret", "alice", TENANT, ["admin"]),
        forged_service=mint_service_token("not-the-secret", "intruder", 600),
        session_id=created["sessionId"],
        chat_process_id=created["chatProcessId"],
    )


def _md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()


async def _code(call: Callable[[Any], Any], token: str) -> grpc.StatusCode:
    """The status of one call made with `token` (empty: no credentials) on a bare channel."""
    try:
        result = call(_md(token))
        if hasattr(result, "__aiter__"):
            async for _ in result:
                break
        else:
            await result
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


@pytest.fixture(scope="module")
async def bare(system: System) -> AsyncIterator[dict[str, grpc.aio.Channel]]:
    """Channels without the harness's service credential: each call brings its own."""
    channels = {
        s: grpc.aio.insecure_channel(system.config.address(s))
        for s in ("session_service", "process_service", "tool_service", "recipe_service")
    }
    yield channels
    for channel in channels.values():
        await channel.close()


def _representatives(
    bare: dict[str, grpc.aio.Channel], p: People
) -> dict[str, Callable[[Any], Any]]:
    sessions = session_pb2_grpc.SessionServiceStub(bare["session_service"])
    processes = process_pb2_grpc.ProcessServiceStub(bare["process_service"])
    tools = tool_pb2_grpc.ToolServiceStub(bare["tool_service"])
    host = tool_pb2_grpc.ToolHostServiceStub(bare["process_service"])
    recipes = recipe_pb2_grpc.RecipeServiceStub(bare["recipe_service"])
    return {
        "session_service": lambda md: sessions.GetSession(
            spb.GetSessionRequest(tenant_id=TENANT, session_id=p.session_id), metadata=md
        ),
        "process_service": lambda md: processes.ListChatMessages(
            ppb.ListChatMessagesRequest(session_id=p.session_id, process_id=p.chat_process_id),
            metadata=md,
        ),
        "process_service (stream)": lambda md: processes.SubscribeSession(
            ppb.SubscribeSessionRequest(session_id=p.session_id), metadata=md
        ),
        "tool_service": lambda md: tools.ListTools(tpb.ListToolsRequest(), metadata=md),
        # process_service's tool host: process tools acting in the caller's session
        "tool host": lambda md: host.Invoke(
            tpb.InvokeToolRequest(tool_name="no_such_tool", session_id=p.session_id),
            metadata=md,
        ),
        "recipe_service": lambda md: recipes.ListRecipes(
            rpb.ListRecipesRequest(tenant_id=TENANT), metadata=md
        ),
    }


async def test_every_service_refuses_calls_without_valid_credentials(
    system: System, bare: dict[str, grpc.aio.Channel], people: People
) -> None:
    for name, call in _representatives(bare, people).items():
        for token in ("", "not-a-jwt", people.forged, people.forged_service):
            assert await _code(call, token) == grpc.StatusCode.UNAUTHENTICATED, (name, token)


async def test_every_service_refuses_other_users(
    system: System, bare: dict[str, grpc.aio.Channel], people: People
) -> None:
    calls = _representatives(bare, people)
    for name, call in calls.items():
        # another tenant's correctly signed admin token
        assert await _code(call, people.outsider) == grpc.StatusCode.PERMISSION_DENIED, name
        if name != "recipe_service":  # recipes are the tenant's, readable by its users
            assert await _code(call, people.mallory) == grpc.StatusCode.PERMISSION_DENIED, name
    # the owner reaches their own session; tools are for services only
    for name in ("session_service", "process_service", "recipe_service"):
        assert await _code(calls[name], people.alice) == grpc.StatusCode.OK, name
    for name in ("tool_service", "tool host"):
        assert await _code(calls[name], people.alice) == grpc.StatusCode.PERMISSION_DENIED
    service = system.credential.header().removeprefix("Bearer ")
    for name, call in calls.items():
        if name not in ("process_service (stream)", "tool host"):
            assert await _code(call, service) == grpc.StatusCode.OK, name


async def test_health_stays_open(system: System, bare: dict[str, grpc.aio.Channel]) -> None:
    for channel in bare.values():
        resp = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert resp.status == health_pb2.HealthCheckResponse.SERVING


async def test_a_body_never_raises_the_callers_rights(
    system: System, bare: dict[str, grpc.aio.Channel], people: People
) -> None:
    sessions = session_pb2_grpc.SessionServiceStub(bare["session_service"])
    processes = process_pb2_grpc.ProcessServiceStub(bare["process_service"])
    admin_user = spb.CreateUserRequest(
        tenant_id=TENANT, username="sneaky", password="pw", roles=["admin"]
    )
    # CreateUser with roles [admin]: only a service or a tenant admin
    for token, code in (
        ("", grpc.StatusCode.UNAUTHENTICATED),
        (people.mallory, grpc.StatusCode.PERMISSION_DENIED),
        (people.outsider, grpc.StatusCode.PERMISSION_DENIED),
    ):
        got = await _code(lambda md: sessions.CreateUser(admin_user, metadata=md), token)
        assert got == code
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await system.sessions.GetUser(spb.GetUserRequest(tenant_id=TENANT, username="sneaky"))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    # ListSessions as a self-declared admin: refused; without the claim: only one's own
    as_admin = spb.ListSessionsRequest(
        tenant_id=TENANT, caller=spb.Caller(user_id="mallory", roles=["admin"])
    )
    got = await _code(lambda md: sessions.ListSessions(as_admin, metadata=md), people.mallory)
    assert got == grpc.StatusCode.PERMISSION_DENIED
    as_alice = spb.ListSessionsRequest(tenant_id=TENANT, caller=spb.Caller(user_id="alice"))
    got = await _code(lambda md: sessions.ListSessions(as_alice, metadata=md), people.mallory)
    assert got == grpc.StatusCode.PERMISSION_DENIED
    listed = await sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id=TENANT), metadata=_md(people.mallory)
    )
    assert people.session_id not in {s.session_id for s in listed.sessions}
    assert {s.owner_user_id for s in listed.sessions} <= {"mallory"}
    mine = await sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id=TENANT), metadata=_md(people.alice)
    )
    assert people.session_id in {s.session_id for s in mine.sessions}
    # another user's session: neither steered, nor bound by a heartbeat's reclaim, nor deleted
    steer = ppb.SteerRequest(
        target=ppb.ProcessRef(process_id=people.chat_process_id),
        message=pb.SteerMessage(user_chat_input=pb.UserChatInput(content="not yours")),
    )
    got = await _code(lambda md: processes.Steer(steer, metadata=md), people.mallory)
    assert got == grpc.StatusCode.PERMISSION_DENIED
    beat = spb.HeartbeatRequest(session_id=people.session_id, connection_id="x", reclaim=True)
    got = await _code(lambda md: sessions.Heartbeat(beat, metadata=md), people.mallory)
    assert got == grpc.StatusCode.PERMISSION_DENIED
    delete = spb.SessionOpRequest(tenant_id=TENANT, session_id=people.session_id)
    got = await _code(lambda md: sessions.DeleteSession(delete, metadata=md), people.mallory)
    assert got == grpc.StatusCode.PERMISSION_DENIED
    # methods for services only stay closed to every user, admins included
    sweeps = sipb.RunSweepsRequest(only_session_ids=["none"])
    dev = await system.login()
    internal = session_internal_pb2_grpc.SessionInternalServiceStub(bare["session_service"])
    got = await _code(lambda md: internal.RunSweeps(sweeps, metadata=md), dev)
    assert got == grpc.StatusCode.PERMISSION_DENIED
    assert (await system.process(people.chat_process_id)).session_id == people.session_id
