"""What the browser relies on from the gateway: the token as a WebSocket subprotocol, and the
built client served at `/` with a fallback for client routes that never hides an API 404."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import websockets
from websockets.typing import Subprotocol

from tests.harness import System


async def test_socket_takes_the_token_as_a_subprotocol(system: System) -> None:
    token = await system.login()
    async with websockets.connect(
        f"ws://{system.gateway}/brain/default/ws",
        subprotocols=[Subprotocol("vance.v1"), Subprotocol(f"vance.bearer.{token}")],
    ) as ws:
        assert ws.subprotocol == "vance.v1"
        welcome: dict[str, Any] = json.loads(await ws.recv())
    assert welcome["type"] == "welcome" and welcome["data"]["userId"] == "dev"


async def test_a_forged_subprotocol_token_is_refused(system: System) -> None:
    ws = await websockets.connect(
        f"ws://{system.gateway}/brain/default/ws",
        subprotocols=[Subprotocol("vance.v1"), Subprotocol("vance.bearer.forged")],
    )
    with pytest.raises(websockets.ConnectionClosed) as info:
        await ws.recv()
    assert info.value.rcvd is not None
    assert (info.value.rcvd.code, info.value.rcvd.reason) == (4401, "bad_token")


async def test_the_client_is_served_with_a_fallback_that_spares_the_api(system: System) -> None:
    async with httpx.AsyncClient(base_url=f"http://{system.gateway}") as http:
        root = await http.get("/")
        assert root.status_code == 200 and '<div id="app">' in root.text
        # A client route gets the app; a hashed asset is served as is, cached for good.
        assert (await http.get("/some/client/route")).text == root.text
        script = root.text.split('src="', 1)[1].split('"', 1)[0]
        asset = await http.get(script)
        assert asset.status_code == 200 and "immutable" in asset.headers["cache-control"]
        # API paths never fall back to HTML.
        missing = await http.get("/brain/default/nothing-here")
        assert missing.status_code == 404
        assert missing.json()["detail"]["reason"] == "not_found"
        assert (await http.get("/healthz")).json()["status"] == "ok"
