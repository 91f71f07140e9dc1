"""Helpers for the hub tests: hub connections, Eddie's and workers' chat frames, REST calls."""

from __future__ import annotations

from typing import Any

import httpx

from gateway.frames import status_name
from tests.harness import System, WsClient, eventually
from vance.testing.scripted_llm import Rule


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


def act(tool: str, match_last: str, match: str = "", **arguments: Any) -> Rule:
    """A scripted model step that ends Eddie's (or Arthur's) turn with one action tool."""
    return Rule(match=match, match_last=match_last, tool_calls=[call(tool, **arguments)])


async def hub(system: System, token: str, profile: str = "") -> tuple[WsClient, dict[str, Any]]:
    client = await system.connect(token)
    data: dict[str, Any] = {"hub": True}
    if profile:
        data["profile"] = profile
    opened = await client.ok("session-create", data)
    return client, opened


async def eddie_says(client: WsClient, text: str, timeout: float = 45) -> dict[str, Any]:
    frame = await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["role"] == "assistant"
            and f["data"]["processName"] == "chat"  # Eddie, not a worker of the hub session
            and text in f["data"]["content"]
        ),
        timeout=timeout,
        what=f"Eddie saying {text!r}",
    )
    return dict(frame["data"])


async def rest(
    system: System, method: str, path: str, token: str, body: dict[str, Any] | None = None
) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.request(
            method,
            f"http://{system.gateway}/brain/default{path}",
            json=body,
            headers={"Authorization": f"Bearer {token}"},
        )


async def process_status(system: System, process_id: str, expected: str) -> None:
    async def check() -> bool:
        p = await system.process(process_id)
        return status_name(p.status) == expected

    await eventually(check, timeout=45, what=f"{process_id} {expected}")
