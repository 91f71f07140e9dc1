"""Client tools over a real WebSocket (docs/clients.md "Client tools"): a `foot` client hosts
`client_file_read` on a temporary folder, a scripted Arthur calls it and the answer reaches the
model; a client that leaves mid-call, or does not answer in time, gives the model an
UNAVAILABLE or TIMEOUT result; a profile without client tools, and bad frames, get error
frames on a socket that stays open."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import websockets

from tests.harness import System, WsClient, eventually
from tests.test_arthur_flow import assistant_says, call
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import tool_pb2_grpc
from vance.testing.ports import free_port_block
from vance.testing.scripted_llm import Rule

READ_TOOL = {
    "name": "client_file_read",
    "description": "Reads a text file in the user's workspace folder.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "relative to the workspace"}},
        "required": ["path"],
    },
}


async def connect(system: System, profile: str, gateway: str = "") -> WsClient:
    token = await system.login()
    ws = await websockets.connect(
        f"ws://{gateway or system.gateway}/brain/default/ws?profile={profile}",
        additional_headers={"Authorization": f"Bearer {token}"},
        max_size=None,
    )
    return await WsClient(ws).start()


def read_in(root: Path, params: dict[str, Any]) -> dict[str, Any]:
    """What a terminal client would do: read inside the workspace only."""
    path = (root / str(params.get("path", ""))).resolve()
    if not path.is_relative_to(root.resolve()):
        return {"callId": "", "status": "ERROR", "error": "outside the workspace"}
    return {"status": "SUCCESS", "result": {"path": params["path"], "text": path.read_text()}}


@asynccontextmanager
async def hosting(client: WsClient, root: Path) -> AsyncIterator[list[dict[str, Any]]]:
    """Answers every `client-tool-invoke` the client gets while the block runs; yields the
    invocations seen."""
    seen: list[dict[str, Any]] = []

    async def serve() -> None:
        while True:
            for f in client.of_type("client-tool-invoke")[len(seen) :]:
                seen.append(f["data"])
                answer = read_in(root, f["data"]["params"])
                await client.send("client-tool-result", {**answer, "callId": f["data"]["callId"]})
            await asyncio.sleep(0.01)

    task = asyncio.create_task(serve())
    try:
        yield seen
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def tool_results(system: System, marker: str) -> list[str]:
    return [
        str(msg["content"])
        for body in system.model_requests(marker)
        for msg in body["messages"]
        if msg.get("role") == "tool"
    ]


def offered(system: System, marker: str) -> set[str]:
    return {
        t["function"]["name"]
        for body in system.model_requests(marker)
        for t in body.get("tools", [])
    }


def calls_then_says(m: str, tool_call: dict[str, Any]) -> list[Rule]:
    return [
        Rule(match_last=f"{m} go", tool_calls=[tool_call]),
        Rule(
            match=f"{m} go",
            match_last="tool_call_id",
            tool_calls=[call("respond", message=f"Done {m}.", awaiting_user_input=False)],
        ),
    ]


async def bound(client: WsClient) -> dict[str, Any]:
    created = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    return created


async def test_a_client_tool_answer_reaches_the_model(system: System, tmp_path: Path) -> None:
    m = uuid.uuid4().hex[:8]
    (tmp_path / "note.txt").write_text(f"the key is under the mat {m}")
    system.script(*calls_then_says(m, call("client_file_read", path="note.txt")))
    client = await connect(system, "foot")
    try:
        await bound(client)
        registered = await client.ok("client-tool-register", {"tools": [READ_TOOL]})
        assert registered == {"registered": 1, "clientToolsEnabled": True}
        async with hosting(client, tmp_path) as seen:
            await client.ok("process-steer", {"content": f"{m} go"})
            await assistant_says(client, f"Done {m}.")
        assert [s["name"] for s in seen] == ["client_file_read"]
        assert seen[0]["params"] == {"path": "note.txt"} and seen[0]["callId"]
        assert "client_file_read" in offered(system, f"{m} go")
        [result] = tool_results(system, f"{m} go")
        assert json.loads(result) == {"path": "note.txt", "text": f"the key is under the mat {m}"}
        completed = await client.wait_for(
            lambda f: (
                f["type"] == "tool-call-completed" and f["data"]["toolName"] == "client_file_read"
            )
        )
        assert completed["data"]["status"] == "SUCCESS"
    finally:
        await client.close()


async def test_a_client_that_leaves_mid_call_gives_the_model_unavailable(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(*calls_then_says(m, call("client_file_read", path="a.txt")))
    client = await connect(system, "foot")
    created = await bound(client)
    await client.ok("client-tool-register", {"tools": [READ_TOOL]})
    await client.ok("process-steer", {"content": f"{m} go"})
    await client.wait_for(lambda f: f["type"] == "client-tool-invoke", what="the invocation")
    await client.close()  # gone before answering

    [result] = await eventually(lambda: tool_results(system, f"{m} go"), what="the tool result")
    assert json.loads(result)["status"] == "ERROR"
    assert json.loads(result)["error"].startswith("UNAVAILABLE: the client disconnected"), result

    # The turn went on without the client: its answer is in the chat for the next connection.
    again = await connect(system, "foot")
    try:
        await again.ok("session-resume", {"sessionId": created["sessionId"], "takeover": True})
        await assistant_says(again, f"Done {m}.")
        # The tools left with their socket: the next turn is not offered them.
        n = uuid.uuid4().hex[:8]
        system.script(Rule(match_last=f"{n} hello", text=f"hello back {n}"))
        await again.ok("process-steer", {"content": f"{n} hello"})
        await assistant_says(again, f"hello back {n}")
        assert "client_file_read" not in offered(system, f"{n} hello")
    finally:
        await again.close()


async def test_a_client_that_does_not_answer_in_time_gives_the_model_timeout(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(*calls_then_says(m, call("client_slow", x=1)))
    client = await connect(system, "foot")
    try:
        await bound(client)
        slow = {"name": "client_slow", "description": "never answers", "timeoutMs": 1000}
        await client.ok("client-tool-register", {"tools": [slow]})
        await client.ok("process-steer", {"content": f"{m} go"})
        invoke = await client.wait_for(lambda f: f["type"] == "client-tool-invoke")
        await assistant_says(client, f"Done {m}.")
        [result] = tool_results(system, f"{m} go")
        assert json.loads(result) == {
            "status": "TIMEOUT",
            "error": "the client did not answer client_slow within 1s",
        }
        # A late answer is refused: nobody waits for it any more.
        late = await client.request(
            "client-tool-result", {"callId": invoke["data"]["callId"], "result": 1}
        )
        assert late["type"] == "error" and late["data"]["reason"] == "unknown_call", late
    finally:
        await client.close()


async def test_profiles_without_client_tools_and_bad_frames_get_error_frames(
    system: System,
) -> None:
    web = await connect(system, "web")
    try:
        early = await web.request("client-tool-register", {"tools": []})
        assert early["data"]["reason"] == "no_session", early
        await web.ok("session-create", {"projectId": "demo"})
        refused = await web.request("client-tool-register", {"tools": [READ_TOOL]})
        assert refused["type"] == "error", refused
        assert refused["data"]["errorCode"] == 403
        assert refused["data"]["reason"] == "client_tools_not_allowed"
        # What the web client sends: it hosts none.
        none = await web.ok("client-tool-register", {"tools": []})
        assert none == {"registered": 0, "clientToolsEnabled": False}
        assert (await web.request("ping"))["type"] == "pong"
    finally:
        await web.close()

    foot = await connect(system, "foot")
    try:
        await foot.ok("session-create", {"projectId": "demo"})
        cases: list[tuple[dict[str, Any], str]] = [
            ({}, "tools_required"),
            ({"tools": [{"name": "file_read"}]}, "bad_tools"),  # not client_*
            ({"tools": [READ_TOOL, READ_TOOL]}, "bad_tools"),
            ({"tools": [{"name": "client_x", "parameters": "no"}]}, "bad_tools"),
            ({"tools": [{"name": "client_x", "timeoutMs": 5}]}, "bad_tools"),
        ]
        for data, reason in cases:
            reply = await foot.request("client-tool-register", data)
            assert reply["type"] == "error" and reply["data"]["reason"] == reason, (data, reply)
        results: list[tuple[dict[str, Any], str]] = [
            ({}, "callId_required"),
            ({"callId": "call_nobody", "result": 1}, "unknown_call"),
            ({"callId": "c", "status": "MAYBE"}, "bad_status"),
        ]
        for data, reason in results:
            reply = await foot.request("client-tool-result", data)
            assert reply["type"] == "error" and reply["data"]["reason"] == reason, (data, reply)
        assert (await foot.request("ping"))["type"] == "pong"
    finally:
        await foot.close()


@asynccontextmanager
async def second_gateway(system: System) -> AsyncIterator[str]:
    """Another gateway replica of the same system, on a port of its own."""
    port = free_port_block(1)
    env = {**os.environ, **system.supervisor.env, "VANCE_GATEWAY_PORT": str(port)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gateway",
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )

    async def healthy() -> bool:
        try:
            async with httpx.AsyncClient() as http:
                return (await http.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        await eventually(healthy, timeout=60, what="the second gateway")
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        await proc.wait()


async def test_a_call_reaches_the_client_on_whichever_gateway_replica_holds_it(
    system: System, tmp_path: Path
) -> None:
    m = uuid.uuid4().hex[:8]
    (tmp_path / "far.txt").write_text(f"served by the second replica {m}")
    system.script(*calls_then_says(m, call("client_file_read", path="far.txt")))
    async with second_gateway(system) as address:
        client = await connect(system, "foot", gateway=address)
        try:
            await bound(client)
            await client.ok("client-tool-register", {"tools": [READ_TOOL]})
            async with hosting(client, tmp_path) as seen:
                await client.ok("process-steer", {"content": f"{m} go"})
                await assistant_says(client, f"Done {m}.")
            assert len(seen) == 1
            [result] = tool_results(system, f"{m} go")
            assert json.loads(result)["text"] == f"served by the second replica {m}"
        finally:
            await client.close()


async def test_a_user_token_cannot_register_client_tools_directly(system: System) -> None:
    """The registration names the address tool_service calls with its service token: only a
    service (the gateway) may make it, never a user talking gRPC."""
    token = await system.login()
    async with grpc.aio.insecure_channel(system.config.address("tool_service")) as channel:
        stub = tool_pb2_grpc.ToolServiceStub(channel)
        request = tpb.RegisterClientToolsRequest(
            session_id="sess_x",
            connection_id="conn_x",
            address="127.0.0.1:9",
            tools=[tpb.ToolSpec(name="client_x")],
        )
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.RegisterClientTools(
                request, metadata=(("authorization", f"Bearer {token}"),)
            )
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
