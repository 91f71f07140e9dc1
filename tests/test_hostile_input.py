"""Hostile input over the WebSocket and REST: every class of bad frame or body gets an error
with a reason, the socket stays open (or, above the server's frame limit, is closed with a close
frame), nothing answers 5xx, the gateway's memory comes back after oversized frames, and a
normal chat still answers afterwards."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
import websockets

from tests.harness import System, WsClient, eventually
from tests.hostile_support import (
    HOSTILE_FRAMES,
    SURROGATE,
    Mutator,
    gateway_rss_kb,
    nested,
)
from tests.sessions_support import ask, chat_session, new_user, word

MUTATED_FRAMES = 3000
BATCH = 50


def errors(client: WsClient) -> list[dict[str, Any]]:
    return [f for f in client.frames if f["type"] == "error"]


async def expect_error(client: WsClient, raw: str | bytes) -> dict[str, Any]:
    """Sends one frame and returns the error frame it got (frames are answered in order)."""
    before = len(errors(client))
    await client.ws.send(raw)
    await eventually(lambda: len(errors(client)) > before, what="an error frame")
    data: dict[str, Any] = errors(client)[before]["data"]
    return data


async def still_answers(client: WsClient) -> None:
    assert not client.closed.is_set(), "the socket was dropped"
    pong = await client.request("ping", {"clientTimestamp": 42})
    assert pong["type"] == "pong" and pong["data"]["clientTimestamp"] == 42
    await client.ws.ping()  # the WebSocket protocol's own ping is answered too


async def test_each_class_of_hostile_frame_gets_an_error_with_a_reason(system: System) -> None:
    _, token = await new_user(system)
    client, _ = await chat_session(system, token)
    got = await expect_error(client, b"\x00\x01binary")
    assert (got["errorCode"], got["reason"]) == (400, "binary_frame")
    for what, raw, reason in HOSTILE_FRAMES:
        got = await expect_error(client, raw)
        assert got["errorCode"] == 400, (what, got)
        assert got["reason"] == reason, (what, got)
        await still_answers(client)
    # Nothing was half-written: no session was created by the refused session-create frames.
    listed = await client.ok("process-list", {"includeTerminated": True})
    assert [p["processName"] for p in listed["processes"]] == ["chat"]
    await client.close()


async def test_a_first_auth_frame_that_is_hostile_closes_with_4401(system: System) -> None:
    for raw in (f'{{"type": "auth", "data": {{"token": "{SURROGATE}"}}}}', nested(100_000)):
        ws = await websockets.connect(f"ws://{system.gateway}/brain/default/ws")
        await ws.send(raw)
        with pytest.raises(websockets.ConnectionClosed) as info:
            await ws.recv()
        assert info.value.rcvd is not None and info.value.rcvd.code == 4401


async def test_thousands_of_mutated_frames_each_get_one_answer(system: System) -> None:
    # Not bound to a session: every frame would otherwise also pay the bind's heartbeat, and
    # the checks under test all run before a handler looks at the binding.
    _, token = await new_user(system)
    client = await system.connect(token)
    mutator = Mutator(seed=20261130, session_id="sess_nobody")
    reasons: dict[str, int] = {}
    for start in range(0, MUTATED_FRAMES, BATCH):
        sent_from = len(client.frames)
        for i in range(start, start + BATCH):
            await client.ws.send(mutator.frame(f"m{i}"))
            await client.ws.send(json.dumps({"id": f"end{i}", "type": "ping", "data": {}}))
        last = f"end{start + BATCH - 1}"

        def is_last(f: dict[str, Any], last: str = last) -> bool:
            return f.get("replyTo") == last

        await client.wait_for(is_last, timeout=60)
        answers = [f for f in client.frames[sent_from:] if "seq" not in f]
        # Between two of our pings, exactly one answer: a reply or an error with a reason.
        current: list[dict[str, Any]] = []
        for f in answers:
            if f["type"] == "pong" and str(f.get("replyTo", "")).startswith("end"):
                assert len(current) == 1, (f["replyTo"], current)
                current = []
                continue
            if f["type"] == "error":
                data = f["data"]
                assert data["errorCode"] < 500 and data["reason"], data
                reasons[data["reason"]] = reasons.get(data["reason"], 0) + 1
            current.append(f)
        assert not client.closed.is_set()
    await still_answers(client)
    assert len(reasons) >= 10, reasons  # the mutations reached many different checks
    await client.close()


async def test_oversized_frames_are_refused_and_the_memory_comes_back(system: System) -> None:
    _, token = await new_user(system)
    client, _ = await chat_session(system, token)
    await still_answers(client)
    start_kb = gateway_rss_kb(system)
    big = json.dumps({"id": "big", "type": "process-steer", "data": {"content": "x" * 900_000}})
    for _ in range(20):
        got = await expect_error(client, big)
        assert (got["errorCode"], got["reason"]) == (400, "frame_too_large")
    await still_answers(client)
    # Above the server's limit the frame is refused before it is read whole: a close frame
    # with 1009, never a dropped connection.
    huge = "x" * (4 * 1024 * 1024)
    for _ in range(10):
        ws = await websockets.connect(
            f"ws://{system.gateway}/brain/default/ws",
            additional_headers={"Authorization": f"Bearer {token}"},
        )
        await ws.recv()  # welcome
        await ws.send(huge)
        with pytest.raises(websockets.ConnectionClosed) as info:
            while True:
                await ws.recv()
        assert info.value.rcvd is not None and info.value.rcvd.code == 1009
    await eventually(
        lambda: gateway_rss_kb(system) <= start_kb * 1.2,
        timeout=30,
        what=f"the gateway's RSS back within 20% of {start_kb} kB",
    )
    await still_answers(client)
    w = word()
    await ask(system, client, f"still there {w}?", f"yes, {w}.")
    await client.close()


def api(system: System, token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=f"http://{system.gateway}/brain/default",
        headers={"Authorization": f"Bearer {token}", "content-type": "application/json"},
        timeout=30,
    )


async def raw_http(system: System, method: str, path: str, token: str) -> tuple[int, str, str]:
    host, port = system.gateway.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    request = (
        f"{method} /brain/default{path} HTTP/1.1\r\nHost: {system.gateway}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    writer.write(request.encode())
    await writer.drain()
    response = (await reader.read()).decode(errors="replace")
    writer.close()
    head, _, body = response.partition("\r\n\r\n")
    status = int(head.split(" ", 2)[1])
    ctype = next(
        (
            line.split(":", 1)[1].strip()
            for line in head.split("\r\n")
            if line.lower().startswith("content-type:")
        ),
        "",
    )
    return status, ctype, body


async def test_hostile_rest_bodies_and_ids_get_json_errors_with_reasons(system: System) -> None:
    _, token = await new_user(system)
    admin_token = await system.login()
    client, sid = await chat_session(system, token)
    cases: list[tuple[str, str, str, set[int]]] = [
        ("PATCH", f"/session/{sid}/metadata", f'{{"tags": ["a{SURROGATE}"]}}', {400}),
        ("PATCH", f"/session/{sid}/metadata", f'{{"title": "{SURROGATE}"}}', {400}),
        ("POST", f"/session/{sid}/extend", f'{{"extendByMs": {2**64}}}', {400, 422}),
        ("POST", f"/session/{sid}/extend", f'{{"transitionAt": {10**30}}}', {400, 422}),
        ("POST", f"/session/{sid}/extend", '{"extendByMs": true}', {422}),
        ("POST", f"/session/{sid}/extend", '{"extendByMs": NaN}', {400}),
        ("POST", f"/session/{sid}/extend", f'{{"extendByMs": {nested(500)}}}', {400}),
        ("POST", f"/session/{sid}/extend", nested(100_000), {400}),
        ("POST", f"/session/{sid}/extend", "{not json", {400}),
        ("PATCH", f"/session/{sid}/metadata", json.dumps({"title": "x" * 300_000}), {413}),
        ("POST", "/access/dev", f'{{"password": "{SURROGATE}"}}', {400}),
        ("GET", "/no/such/route", "", {404}),
        ("GET", f"/sessions?limit={10**30}", "", {400}),
        ("GET", "/sessions?includeArchived=maybe", "", {400}),
        ("GET", f"/sessions/search?q={'q' * 600}", "", {400}),
    ]
    async with api(system, token) as http:
        for method, path, body, codes in cases:
            r = await http.request(method, path, content=body.encode() if body else None)
            assert r.status_code in codes, (method, path[:80], r.status_code, r.text[:300])
            assert r.headers["content-type"].startswith("application/json"), r.text[:200]
            assert r.json()["detail"]["reason"], r.text[:300]
    # A 100 KB id (longer than httpx sends): over a plain connection.
    for method, path in (("GET", "/session/{}"), ("POST", "/session/{}/archive")):
        status, ctype, body = await raw_http(system, method, path.format("s" * 100_000), token)
        assert status in (400, 404), (status, body[:200])
        assert ctype.startswith("application/json") and json.loads(body)["detail"]["reason"]
    async with api(system, admin_token) as admin:
        r = await admin.patch("/settings", json={"set": {"vance.session.idleTimeoutMs": "9" * 30}})
        assert r.status_code == 400 and r.json()["detail"]["reason"] == "invalid_setting", r.text
    # The session was not touched by any of it, and the socket still talks.
    await still_answers(client)
    async with api(system, token) as http:
        got = (await http.get(f"/session/{sid}")).json()
        assert got["metadata"]["tags"] == [] and got["metadata"]["title"] is None
    await client.close()


async def test_mutated_rest_bodies_never_answer_5xx(system: System) -> None:
    _, token = await new_user(system)
    client, sid = await chat_session(system, token)
    mutator = Mutator(seed=7, session_id=sid)
    statuses: dict[int, int] = {}
    async with api(system, token) as http:
        for i in range(300):
            body = mutator.frame(f"r{i}")
            raw = body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass")
            path = (f"/session/{sid}/metadata", f"/session/{sid}/extend")[i % 2]
            r = await http.request("PATCH" if i % 2 == 0 else "POST", path, content=raw)
            statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
            assert r.status_code < 500, (raw[:200], r.text[:300])
            if r.status_code >= 400:
                assert r.json()["detail"]["reason"], r.text[:300]
    assert set(statuses) & {400, 422}, statuses
    await still_answers(client)
    await client.close()


async def test_parallel_sockets_survive_hostile_neighbours(system: System) -> None:
    """A socket sending garbage does not disturb another user's chat on the same gateway."""
    _, token = await new_user(system)
    calm, _ = await chat_session(system, token)
    noisy, _ = await chat_session(system, (await new_user(system))[1])

    async def noise() -> None:
        for _, raw, _ in HOSTILE_FRAMES:
            await noisy.ws.send(raw)

    w = word()
    await asyncio.gather(noise(), ask(system, calm, f"calm {w}?", f"calm {w}."))
    await still_answers(noisy)
    await calm.close()
    await noisy.close()
