"""Helpers for the tests of a user's hubs that know what each other did (test_eddie_peers.py)."""

from __future__ import annotations

import json
from typing import Any

from tests.eddie_support import hub, process_status
from tests.harness import System, WsClient
from vance.protoutil import struct_to_dict
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb


async def two_hubs(
    system: System, token: str
) -> tuple[WsClient, dict[str, Any], WsClient, dict[str, Any]]:
    """Hub A and hub B of one user: two sockets, two hub sessions (the second socket finds
    the first session bound and gets a session of its own)."""
    a, opened_a = await hub(system, token)
    b, opened_b = await hub(system, token)
    assert opened_a["sessionId"] != opened_b["sessionId"]
    # Each hub's start turn has registered it as one of the user's hubs (hub_context).
    await process_status(system, opened_a["chatProcessId"], "IDLE")
    await process_status(system, opened_b["chatProcessId"], "IDLE")
    return a, opened_a, b, opened_b


async def suspend(system: System, client: WsClient, opened: dict[str, Any]) -> None:
    """The user leaves that device: the socket closes and the session is suspended."""
    await client.close()
    await system.sessions.SuspendSession(
        spb.SuspendSessionRequest(
            tenant_id="default", session_id=opened["sessionId"], cause=pb.SUSPEND_CAUSE_IDLE
        )
    )
    await process_status(system, opened["chatProcessId"], "SUSPENDED")


async def chat(system: System, process_id: str) -> list[dict[str, Any]]:
    listed = await system.processes.ListChatMessages(
        ppb.ListChatMessagesRequest(process_id=process_id)
    )
    return [
        {
            "role": pb.ChatRole.Name(m.role).removeprefix("CHAT_ROLE_"),
            "content": m.content,
            "meta": struct_to_dict(m.meta),
        }
        for m in listed.messages
    ]


async def peer_lines(system: System, process_id: str) -> list[dict[str, Any]]:
    """The system lines a hub wrote for the peer events it took in."""
    return [m for m in await chat(system, process_id) if m["meta"].get("peerEvent")]


def tool_result(request: dict[str, Any]) -> dict[str, Any]:
    """The last message of a model request: a tool result as the loop sends it."""
    return dict(json.loads(request["messages"][-1]["content"]))
