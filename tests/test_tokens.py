"""Login tokens: their lifetime, refresh, revocation on logout and by an admin, the ways a
browser can hand its token to the WebSocket without putting it in a URL, and that no token
reaches the services' logs."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import jwt
import pytest
import websockets
from websockets.typing import Subprotocol

from tests.harness import System, WsClient, eventually
from tests.hostile_support import logged_tokens
from tests.sessions_support import new_user
from vance.v1 import tokens_pb2 as tpb
from vance.v1 import tokens_pb2_grpc

DEFAULT_TTL_S = 12 * 3600


def protocols(*names: str) -> list[Subprotocol]:
    return [Subprotocol(n) for n in names]


def url(system: System, path: str) -> str:
    return f"http://{system.gateway}/brain/default{path}"


def ws_url(system: System) -> str:
    return f"ws://{system.gateway}/brain/default/ws"


async def post(system: System, path: str, token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.post(url(system, path), headers=headers)


async def me(system: System, token: str) -> int:
    """Any authenticated REST call: the status it gets with this token."""
    async with httpx.AsyncClient(timeout=30) as http:
        r = await http.get(url(system, "/sessions"), headers={"Authorization": f"Bearer {token}"})
        return r.status_code


async def refused_socket(system: System, token: str) -> tuple[int, str]:
    ws = await websockets.connect(
        ws_url(system), additional_headers={"Authorization": f"Bearer {token}"}
    )
    with pytest.raises(websockets.ConnectionClosed) as info:
        await ws.recv()
    assert info.value.rcvd is not None
    return info.value.rcvd.code, info.value.rcvd.reason


async def test_tokens_live_twelve_hours_and_expired_ones_are_refused(system: System) -> None:
    _, token = await new_user(system)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == DEFAULT_TTL_S and claims["jti"]
    # A token signed with the gateway's own secret but past its expiry.
    secret = (Path(system.config.data_dir) / "jwt-secret").read_text().strip()
    expired = jwt.encode(
        {**claims, "iat": int(time.time()) - 100, "exp": int(time.time()) - 10}, secret, "HS256"
    )
    assert await refused_socket(system, expired) == (4401, "bad_token")
    assert await me(system, expired) == 401


async def test_refresh_gives_a_new_working_token(system: System) -> None:
    user, token = await new_user(system)
    r = await post(system, "/access/refresh", token)
    assert r.status_code == 200, r.text
    body = r.json()
    fresh = body["token"]
    assert fresh != token and body["userId"] == user and body["tenantId"] == "default"
    assert body["expiresAt"] > (time.time() + DEFAULT_TTL_S - 60) * 1000
    client = await WsClient(
        await websockets.connect(
            ws_url(system), additional_headers={"Authorization": f"Bearer {fresh}"}
        )
    ).start()
    await client.close()
    refused = await post(system, "/access/refresh")
    assert refused.status_code == 401 and refused.json()["detail"]["reason"] == "token_required"
    forged = await post(system, "/access/refresh", token[:-4] + "AAAA")
    assert forged.status_code == 401 and forged.json()["detail"]["reason"] == "bad_token"


async def test_logout_revokes_the_token_over_websocket_and_rest(system: System) -> None:
    _, token = await new_user(system)
    _, other = await new_user(system)
    client = await system.connect(token)
    assert (await client.ok("logout")) == {}
    await eventually(client.closed.is_set, what="logout closing the socket")
    assert await me(system, token) == 401
    assert await refused_socket(system, token) == (4401, "token_revoked")
    r = await post(system, "/access/refresh", token)
    assert r.status_code == 401 and r.json()["detail"]["reason"] == "token_revoked"
    # Over REST, and only that one token.
    _, second = await new_user(system)
    assert (await post(system, "/access/logout", second)).status_code == 200
    assert await me(system, second) == 401
    assert await me(system, other) == 200


async def test_an_admin_revokes_every_token_of_a_user(system: System) -> None:
    user, first = await new_user(system)
    second = await system.login(user, "pw")
    _, plain = await new_user(system)
    admin = await system.login()
    open_socket = await system.connect(first)
    refused = await post(system, f"/admin/users/{user}/revoke-tokens", plain)
    assert refused.status_code == 403 and refused.json()["detail"]["reason"] == "admin_required"
    assert await me(system, first) == 200
    done = await post(system, f"/admin/users/{user}/revoke-tokens", admin)
    assert done.status_code == 200, done.text
    assert await me(system, first) == 401 and await me(system, second) == 401
    # The open socket is closed at its next frame.
    await open_socket.send("ping", {})
    await eventually(open_socket.closed.is_set, what="the revoked socket closing")
    assert open_socket.ws.close_code == 4401
    # Logging in again works: the revocation covers tokens issued before it.
    again = await system.login(user, "pw")
    assert await me(system, again) == 200
    assert await me(system, plain) == 200


async def test_a_revocation_written_elsewhere_reaches_the_gateway_within_its_refresh(
    system: System,
) -> None:
    """A token revoked through another gateway replica (here: TokenService directly) stops
    working on this one at its next snapshot refresh (auth.revocation_refresh_s, 2 s), with
    no per-user read on the frame path; other users' tokens are untouched."""
    user, token = await new_user(system)
    _, other = await new_user(system)
    assert await me(system, token) == 200
    stub = tokens_pb2_grpc.TokenServiceStub(system.channel("session_service"))
    await stub.RevokeTokens(tpb.RevokeTokensRequest(tenant_id="default", username=user, all=True))
    started = time.monotonic()

    async def refused() -> bool:
        return await me(system, token) == 401

    await eventually(refused, what="the gateway refusing the revoked token")
    # Two refreshes and then some, for a loaded machine.
    assert time.monotonic() - started < 15
    assert await me(system, other) == 200


async def test_the_token_as_a_subprotocol(system: System) -> None:
    _, token = await new_user(system)
    ws = await websockets.connect(
        ws_url(system),
        subprotocols=protocols("vance.v1", f"vance.bearer.{token}"),
    )
    assert ws.subprotocol == "vance.v1"
    client = await WsClient(ws).start()
    pong = await client.request("ping", {"clientTimestamp": 5})
    assert (pong["type"], pong["data"]["clientTimestamp"]) == ("pong", 5)
    await client.close()
    bad = await websockets.connect(
        ws_url(system),
        subprotocols=protocols("vance.v1", "vance.bearer.forged"),
    )
    with pytest.raises(websockets.ConnectionClosed) as info:
        await bad.recv()
    assert info.value.rcvd is not None and info.value.rcvd.code == 4401


async def test_the_token_in_a_first_auth_frame(system: System) -> None:
    user, token = await new_user(system)
    ws = await websockets.connect(ws_url(system), subprotocols=protocols("vance.v1"))
    assert ws.subprotocol == "vance.v1"
    await ws.send(f'{{"id": "a1", "type": "auth", "data": {{"token": "{token}"}}}}')
    client = await WsClient(ws).start()
    assert client.of_type("welcome")[0]["data"]["userId"] == user
    await client.ok("session-create", {"projectId": "demo"})
    await client.close()
    for first in ('{"id": "a1", "type": "auth", "data": {"token": "forged"}}', '{"type": "ping"}'):
        ws = await websockets.connect(ws_url(system))
        await ws.send(first)
        with pytest.raises(websockets.ConnectionClosed) as info:
            await ws.recv()
        assert info.value.rcvd is not None and info.value.rcvd.code == 4401


async def test_a_socket_without_any_token_is_closed_after_ten_seconds(system: System) -> None:
    ws = await websockets.connect(ws_url(system))
    started = time.monotonic()
    with pytest.raises(websockets.ConnectionClosed) as info:
        await ws.recv()
    assert info.value.rcvd is not None
    assert (info.value.rcvd.code, info.value.rcvd.reason) == (4401, "token_required")
    assert time.monotonic() - started >= 9


async def test_no_token_is_written_to_the_logs(system: System) -> None:
    _, token = await new_user(system)
    # The ways a token travels: ?token= (logged by uvicorn with the path), header, subprotocol.
    for ws in (
        await websockets.connect(f"{ws_url(system)}?token={token}"),
        await websockets.connect(
            ws_url(system), subprotocols=protocols("vance.v1", f"vance.bearer.{token}")
        ),
    ):
        client = await WsClient(ws).start()
        await client.close()
    await me(system, token)
    await me(system, token + "x")  # a refused one is not logged either

    logs = system.supervisor.log_to
    assert logs is not None
    # The gateway did log the socket's path, with the token taken out.
    await eventually(
        lambda: "token=[redacted]" in (Path(logs) / "gateway.log").read_text(errors="replace"),
        what="the socket's path in the gateway's log",
    )
    found = logged_tokens(system)
    assert not found, found[:3]
