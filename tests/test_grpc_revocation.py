"""A revoked login token is refused by the gRPC services themselves, not only by the gateway:
each service keeps a snapshot of the revocation record, refreshed every couple of seconds
(vance/revocations.py), and consults it on every call, verified-token cache hit or not."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
import pytest

from tests.harness import System, eventually
from tests.sessions_support import TENANT, new_user
from tests.test_tokens import post
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc, session_pb2_grpc
from vance.v1 import session_pb2 as spb

# Well below the services' verified-token cache (auth.cache_s, 30 s): a refusal within this
# deadline shows the cache does not keep a revoked token alive.
REFUSAL_DEADLINE_S = 15.0

Probe = Callable[[str], Awaitable[grpc.StatusCode]]


@pytest.fixture(scope="module")
async def bare(system: System) -> AsyncIterator[dict[str, grpc.aio.Channel]]:
    """Channels without the harness's service credential: each call brings the user's token."""
    channels = {
        s: grpc.aio.insecure_channel(system.config.address(s))
        for s in ("session_service", "process_service")
    }
    yield channels
    for channel in channels.values():
        await channel.close()


async def _status(call: Awaitable[object]) -> grpc.StatusCode:
    try:
        await call
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


async def _probes(
    system: System, bare: dict[str, grpc.aio.Channel], token: str
) -> dict[str, Probe]:
    """One user-token RPC per service on a session of the token's user."""
    client = await system.connect(token)
    created = await client.ok("session-create", {"projectId": "demo"})
    await client.close()
    sessions = session_pb2_grpc.SessionServiceStub(bare["session_service"])
    processes = process_pb2_grpc.ProcessServiceStub(bare["process_service"])
    get_session = spb.GetSessionRequest(tenant_id=TENANT, session_id=created["sessionId"])
    messages = ppb.ListChatMessagesRequest(
        session_id=created["sessionId"], process_id=created["chatProcessId"]
    )

    def md(t: str) -> tuple[tuple[str, str]]:
        return (("authorization", f"Bearer {t}"),)

    return {
        "session_service": lambda t: _status(sessions.GetSession(get_session, metadata=md(t))),
        "process_service": lambda t: _status(processes.ListChatMessages(messages, metadata=md(t))),
    }


async def _refused_everywhere(probes: dict[str, Probe], token: str) -> float:
    """Polls until every service answers UNAUTHENTICATED; the seconds it took."""
    start = time.monotonic()
    for name, probe in probes.items():

        async def refused(probe: Probe = probe) -> bool:
            return await probe(token) == grpc.StatusCode.UNAUTHENTICATED

        await eventually(refused, timeout=REFUSAL_DEADLINE_S, interval=0.1, what=name)
    return time.monotonic() - start


async def _works_everywhere(probes: dict[str, Probe], token: str) -> None:
    for name, probe in probes.items():
        assert await probe(token) == grpc.StatusCode.OK, name


async def test_logout_revokes_the_token_on_every_service(
    system: System, bare: dict[str, grpc.aio.Channel]
) -> None:
    user, token = await new_user(system)
    other = await system.login(user, "pw")
    probes = await _probes(system, bare, token)
    await _works_everywhere(probes, token)  # now in each service's verified-token cache
    assert (await post(system, "/access/logout", token)).status_code == 200
    await _refused_everywhere(probes, token)
    # Logout revokes only that token.
    await _works_everywhere(probes, other)


async def test_an_admin_revoke_reaches_every_service(
    system: System, bare: dict[str, grpc.aio.Channel]
) -> None:
    user, token = await new_user(system)
    probes = await _probes(system, bare, token)
    await _works_everywhere(probes, token)
    admin = await system.login()
    done = await post(system, f"/admin/users/{user}/revoke-tokens", admin)
    assert done.status_code == 200, done.text
    await _refused_everywhere(probes, token)
    # The revocation covers tokens issued before it, not a later login.
    again = await system.login(user, "pw")
    await _works_everywhere(probes, again)
    assert await probes["process_service"](token) == grpc.StatusCode.UNAUTHENTICATED
