"""MCP tool servers (docs/clients.md): a project setting names a stdio server and a
streamable-HTTP server (tests/mcp_support/notes_server.py, written with the `mcp` package); a
scripted Arthur, whose project recipe adds `@mcp` tools and cuts one, calls them; a killed
server gives a clear UNAVAILABLE result and works again once it is back; a server that cannot
start, or whose secret is missing, shows as an unavailable tool with the reason."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.harness import System, WsClient, eventually
from tests.test_arthur_flow import assistant_says, call
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import tool_pb2_grpc
from vance.protoutil import dict_to_struct, from_value
from vance.testing.ports import free_port_block
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import recipe_pb2_grpc
from vance.v1 import session_pb2 as spb

SERVER = Path(__file__).parent / "mcp_support" / "notes_server.py"
ARTHUR = Path(__file__).parent.parent / "recipe_service" / "recipes" / "arthur.yaml"
TENANT = "default"


@dataclass
class Notes:
    """The project and what runs its servers."""

    project: str
    http_port: int
    stdio_pidfile: Path
    http_pidfile: Path


async def http_server(port: int, pidfile: Path) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVER),
        "http",
        str(port),
        str(pidfile),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )

    def listening() -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    await eventually(listening, timeout=60, what="the MCP HTTP server to listen")
    return proc


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
    await proc.wait()


@asynccontextmanager
async def notes_project(system: System, tmp_path: Path) -> AsyncIterator[tuple[Notes, Any]]:
    """A project whose setting lists the servers and whose `arthur` recipe may use them; yields
    it with the running HTTP server (a holder, so a test can restart it)."""
    m = uuid.uuid4().hex[:8]
    project = f"mcp-{m}"
    notes = Notes(project, free_port_block(1), tmp_path / "stdio.pid", tmp_path / "http.pid")
    secrets = Path(system.config.data_dir) / "secrets"
    secrets.mkdir(parents=True, exist_ok=True)
    (secrets / "NOTES_TOKEN").write_text(f"token-{m}\n")
    holder = {"proc": await http_server(notes.http_port, notes.http_pidfile)}
    try:
        await system.sessions.CreateProject(
            spb.CreateProjectRequest(tenant_id=TENANT, project_id=project, title=project)
        )
        recipe = ARTHUR.read_text() + (
            "allowedToolsAdd: ['@mcp:notes-http', 'notes-stdio__*', '@mcp:broken', '@mcp:locked']\n"
            "allowedToolsRemove: [notes-http__add]\n"
        )
        await recipe_pb2_grpc.RecipeServiceStub(system.channel("recipe_service")).CreateRecipe(
            rpb.CreateRecipeRequest(
                tenant_id=TENANT, project_id=project, name="arthur", yaml=recipe
            )
        )
        servers = [
            {
                "name": "notes-stdio",
                "command": sys.executable,
                "args": [str(SERVER), "stdio", str(notes.stdio_pidfile)],
                "timeoutMs": 10_000,
            },
            {
                "name": "notes-http",
                "url": f"http://127.0.0.1:{notes.http_port}/mcp",
                "headers": {"Authorization": "Bearer ${secret:NOTES_TOKEN}"},
                "timeoutMs": 10_000,
            },
            {"name": "broken", "command": sys.executable, "args": ["-c", "raise SystemExit(3)"]},
            {
                "name": "locked",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"X-Key": "${secret:NOPE}"},
            },
        ]
        await patch_settings(system, project, {"tools.mcp.servers": json.dumps(servers)})
        yield notes, holder
    finally:
        await stop(holder["proc"])


async def patch_settings(system: System, project: str, values: dict[str, str]) -> httpx.Response:
    token = await system.login()
    async with httpx.AsyncClient() as http:
        return await http.patch(
            f"http://{system.gateway}/brain/{TENANT}/project/{project}/settings",
            json={"set": values},
            headers={"Authorization": f"Bearer {token}"},
        )


def tool_results(system: System, marker: str) -> dict[str, Any]:
    """The results the model got in the turn steered with `marker`, by tool call id."""
    out: dict[str, Any] = {}
    for body in system.model_requests(marker):
        for msg in body["messages"]:
            if msg.get("role") == "tool":
                out[msg["tool_call_id"]] = json.loads(msg["content"])
    return out


def offered(system: System, marker: str) -> dict[str, str]:
    return {
        t["function"]["name"]: t["function"]["description"]
        for body in system.model_requests(marker)
        for t in body.get("tools", [])
    }


async def turn(
    system: System, client: WsClient, calls: list[dict[str, Any]]
) -> tuple[list[Any], dict[str, str]]:
    """Arthur, steered, makes `calls` in one step and then answers: the results in call order
    and the tools it was offered."""
    m = uuid.uuid4().hex[:8]
    system.script(
        Rule(match_last=f"{m} go", tool_calls=calls),
        Rule(
            match=f"{m} go",
            match_last="tool_call_id",
            tool_calls=[call("respond", message=f"Done {m}.", awaiting_user_input=False)],
        ),
    )
    await client.ok("process-steer", {"content": f"{m} go"})
    await assistant_says(client, f"Done {m}.")
    results = tool_results(system, f"{m} go")
    return list(results.values()), offered(system, f"{m} go")


async def invoke(system: System, project: str, tool: str, **args: Any) -> tpb.InvokeToolResponse:
    stub = tool_pb2_grpc.ToolServiceStub(system.channel("tool_service"))
    resp: tpb.InvokeToolResponse = await stub.InvokeTool(
        tpb.InvokeToolRequest(
            tool_name=tool, arguments=dict_to_struct(args), tenant_id=TENANT, project_id=project
        )
    )
    return resp


async def servers_up(system: System, project: str) -> None:
    """Until tool_service offers the test servers' tools as available: a stdio server is a
    Python process that takes seconds to start on a busy machine, longer than a first pool
    waits for it (it would show as `notes-stdio__unavailable`, still connecting)."""
    stub = tool_pb2_grpc.ToolServiceStub(system.channel("tool_service"))
    request = tpb.ResolvePoolRequest(
        engine_tools=["notes-stdio__*", "@mcp:notes-http"],
        tenant_id=TENANT,
        project_id=project,
        profile="default",
    )

    async def up() -> bool:
        pool = await stub.ResolvePool(request)
        names = {t.name for t in pool.tools if not t.description.startswith("UNAVAILABLE")}
        return {"notes-stdio__shout", "notes-http__shout"} <= names

    await eventually(up, timeout=60, what="the MCP servers to be up")


async def session(system: System, project: str) -> WsClient:
    await servers_up(system, project)
    client = await system.connect()
    await client.ok("session-create", {"projectId": project})
    await assistant_says(client, "Hi, I'm Arthur")
    return client


async def test_arthur_calls_mcp_tools_over_stdio_and_http(system: System, tmp_path: Path) -> None:
    async with notes_project(system, tmp_path) as (notes, _):
        client = await session(system, notes.project)
        try:
            results, tools = await turn(
                system,
                client,
                [
                    call("notes-stdio__shout", text="quiet please"),
                    call("notes-http__shout", text="over http"),
                    call("notes-stdio__add", a=2, b=3),
                ],
            )
            stdio_pid = notes.stdio_pidfile.read_text()
            assert results == [
                f"QUIET PLEASE (pid {stdio_pid})",
                f"OVER HTTP (pid {notes.http_pidfile.read_text()})",
                5,
            ]
            # The recipe's selection and cut apply as to any tool: notes-http__add is cut.
            mcp = {n for n in tools if "__" in n}
            assert mcp == {
                "notes-stdio__shout",
                "notes-stdio__add",
                "notes-http__shout",
                "broken__unavailable",
                "locked__unavailable",
            }
            assert tools["notes-http__shout"].startswith("[MCP notes-http]")
            assert "secret 'NOPE' is not set" in tools["locked__unavailable"]

            # A server that is down fails no turn: its call answers why.
            results, _ = await turn(system, client, [call("locked__unavailable")])
            assert results == [
                {
                    "status": "ERROR",
                    "error": "UNAVAILABLE: MCP server 'locked' is down: "
                    "secret 'NOPE' is not set on tool_service",
                }
            ]
        finally:
            await client.close()

        bad = await patch_settings(system, notes.project, {"tools.mcp.servers": '[{"name": "x"}]'})
        assert bad.status_code == 400 and bad.json()["detail"]["reason"] == "invalid_setting"


async def test_a_killed_mcp_server_fails_clearly_and_works_after_it_restarts(
    system: System, tmp_path: Path
) -> None:
    async with notes_project(system, tmp_path) as (notes, holder):
        client = await session(system, notes.project)
        try:
            results, _ = await turn(system, client, [call("notes-stdio__shout", text="a")])
            first_stdio = notes.stdio_pidfile.read_text()
            assert results == [f"A (pid {first_stdio})"]

            await stop(holder["proc"])
            os.kill(int(first_stdio), signal.SIGKILL)  # the stdio server tool_service started
            results, _ = await turn(system, client, [call("notes-http__shout", text="b")])
            [failed] = results
            assert failed["status"] == "ERROR", failed
            assert failed["error"].startswith("UNAVAILABLE: MCP server 'notes-http'"), failed

            holder["proc"] = await http_server(notes.http_port, notes.http_pidfile)

            async def answers(tool: str) -> bool:
                resp = await invoke(system, notes.project, tool, text="c")
                return resp.status == pb.TOOL_CALL_STATUS_SUCCESS and "(pid" in str(
                    from_value(resp.result)
                )

            # tool_service reconnects on its own: the HTTP server it was cut from, and the stdio
            # server it starts again.
            await eventually(lambda: answers("notes-http__shout"), timeout=30, what="http back")
            await eventually(lambda: answers("notes-stdio__shout"), timeout=30, what="stdio back")
            results, _ = await turn(
                system,
                client,
                [call("notes-http__shout", text="d"), call("notes-stdio__shout", text="e")],
            )
            second_stdio = notes.stdio_pidfile.read_text()
            assert second_stdio != first_stdio
            assert results == [
                f"D (pid {notes.http_pidfile.read_text()})",
                f"E (pid {second_stdio})",
            ]
        finally:
            await client.close()
