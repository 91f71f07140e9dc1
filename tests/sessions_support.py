"""Helpers for the metadata, search and REST tests: users, sessions with a conversation, and the
SessionService calls a client's REST request ends in."""

from __future__ import annotations

import uuid
from typing import Any

from tests.harness import System, WsClient, eventually
from vance.testing.scripted_llm import Rule
from vance.v1 import session_pb2 as spb

TENANT = "default"
SUGGEST = "session-metadata"  # the purpose the metadata suggestion is sent with


def word() -> str:
    """A made-up word no other test uses (tokens are lowercase word characters)."""
    return f"zq{uuid.uuid4().hex[:10]}"


def caller(user: str, *, admin: bool = False) -> spb.Caller:
    return spb.Caller(user_id=user, roles=["admin"] if admin else [])


async def new_user(system: System, *, admin: bool = False) -> tuple[str, str]:
    """A fresh user of the default tenant and a login token."""
    name = f"u{uuid.uuid4().hex[:10]}"
    await system.sessions.CreateUser(
        spb.CreateUserRequest(
            tenant_id=TENANT, username=name, password="pw", roles=["admin"] if admin else []
        )
    )
    return name, await system.login(name, "pw")


async def chat_session(system: System, token: str, project: str = "demo") -> tuple[WsClient, str]:
    client = await system.connect(token)
    created = await client.ok("session-create", {"projectId": project})
    return client, str(created["sessionId"])


async def ask(system: System, client: WsClient, question: str, answer: str) -> None:
    """One question and the assistant's answer, over the socket as a user asks."""
    system.script(Rule(match_last=question, text=answer))
    await client.ok("process-steer", {"content": question})
    await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["role"] == "assistant"
            and answer in f["data"]["content"]
        ),
        timeout=60,
        what=f"the answer {answer!r}",
    )


async def get(system: System, session_id: str) -> spb.Session:
    s: spb.Session = await system.sessions.GetSession(
        spb.GetSessionRequest(tenant_id=TENANT, session_id=session_id)
    )
    return s


async def patch(system: System, session_id: str, who: spb.Caller, **fields: Any) -> spb.Session:
    req = spb.UpdateMetadataRequest(tenant_id=TENANT, session_id=session_id, caller=who)
    for name, value in fields.items():
        if name == "tags":
            req.tags.CopyFrom(spb.TagList(tags=value))
        else:
            setattr(req, name, value)
    s: spb.Session = await system.sessions.UpdateMetadata(req)
    return s


async def search(
    system: System, query: str, who: spb.Caller, **filters: Any
) -> spb.SearchSessionsResponse:
    resp: spb.SearchSessionsResponse = await system.sessions.SearchSessions(
        spb.SearchSessionsRequest(tenant_id=TENANT, caller=who, query=query, **filters)
    )
    return resp


async def found(
    system: System, query: str, who: spb.Caller, session_id: str, **filters: Any
) -> spb.SessionHit:
    """Waits until the session is among the hits (the feed indexes in the background; a
    conversation hit gets its snippets once the pass that found the word has finished)."""

    async def hit() -> spb.SessionHit | None:
        resp = await search(system, query, who, **filters)
        h = next((h for h in resp.hits if h.session.session_id == session_id), None)
        return h if h is not None and (h.snippets or not h.conversation_match) else None

    result: spb.SessionHit = await eventually(hit, timeout=30, what=f"{query!r} finding it")
    return result
