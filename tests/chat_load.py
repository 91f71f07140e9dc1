"""Chat load that survives crashes: users who reconnect and re-send with the same idempotency
key until they see their answer (tests/test_self_healing.py)."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
import websockets

from tests.harness import System, WsClient, eventually
from vance.testing.scripted_llm import Rule

# The model takes this long per answer: the users pace themselves on it (a load that leaves the
# restarting processes some CPU), and kills land while turns run.
MODEL_DELAY_MS = 200
# What one attempt may take before the user gives up on it and tries again (same key).
STEP_TIMEOUT_S = 5.0
ANSWER_TIMEOUT_S = 15.0
RETRY_PAUSE_S = 0.1
# Errors a user sees while a process restarts: a refused connection, a socket closed under
# them, a gateway error status (a login while session_service restarts: 503) or frame, a reply that does not come (AssertionError).
GONE = (
    OSError,
    httpx.HTTPError,
    websockets.WebSocketException,
    AssertionError,
    KeyError,
    TimeoutError,
)


def answers(client: WsClient, content: str) -> list[dict[str, Any]]:
    """The echo answers (vance/testing/scripted_llm.py: "You said: ...") to `content`."""
    return [
        f
        for f in client.frames
        if f["type"] == "chat-message-appended"
        and f["data"]["role"] == "assistant"
        and content in str(f["data"]["content"])
    ]


async def _answered(client: WsClient, content: str, timeout: float) -> bool:
    """True once an answer is there; False when the socket closed first (AssertionError on
    timeout)."""

    def seen() -> bool:
        return bool(answers(client, content)) or client.closed.is_set()

    await eventually(seen, timeout=timeout, what=f"the answer to {content}")
    return bool(answers(client, content))


async def _steer(client: WsClient, pid: str, content: str, key: str) -> dict[str, Any]:
    reply = await client.request(
        "process-steer",
        {"processId": pid, "content": content, "idempotencyKey": key},
        timeout=STEP_TIMEOUT_S,
    )
    if reply["type"] != "process-steer":
        raise AssertionError(f"steer refused: {reply}")
    return dict(reply["data"])


@dataclass
class ChatUser:
    """One user in one session, sending a message at a time. A socket is kept while it is
    open (a refused request is retried on it); a closed one is replaced and the session
    resumed on the new one."""

    system: System
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    session_id: str = ""
    process_id: str = ""
    acked: list[str] = field(default_factory=list)  # contents whose steer was acknowledged
    answered: list[str] = field(default_factory=list)
    sockets: int = 0
    current: str = ""  # the message under way
    _client: WsClient | None = None
    _bound: bool = False  # the session is created or resumed on the current socket

    async def _socket(self) -> WsClient:
        if self._client is not None and not self._client.closed.is_set():
            return self._client
        await self._drop()
        self._client = await asyncio.wait_for(self.system.connect(), STEP_TIMEOUT_S)
        self.sockets += 1
        self._bound = False
        return self._client

    async def _bind(self, client: WsClient) -> None:
        if self._bound:
            return
        if not self.session_id:
            reply = await client.request(
                "session-create", {"projectId": "demo"}, timeout=STEP_TIMEOUT_S
            )
            if reply["type"] != "session-create":
                raise AssertionError(f"create refused: {reply}")
            self.session_id = reply["data"]["sessionId"]
            self.process_id = reply["data"]["chatProcessId"]
        else:
            reply = await client.request(
                "session-resume",
                {"sessionId": self.session_id, "takeover": True, "sinceSeq": 0},
                timeout=STEP_TIMEOUT_S,
            )
            if reply["type"] != "session-resume":
                raise AssertionError(f"resume refused: {reply}")
        self._bound = True

    async def _drop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def say(self, content: str, *, deadline_s: float = 90.0) -> None:
        """Sends `content` until its answer is seen, re-sending with the same key after any
        failure (a duplicate is stored and handled once: docs/protocol.md, process-steer)."""
        key = f"key-{content}"
        self.current = content
        # The same echo the scripted model gives unscripted (a redone turn answers the same).
        self.system.script(
            Rule(text=f"You said: {content}", match_last=content, delay_ms=MODEL_DELAY_MS)
        )
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            try:
                client = await self._socket()
                await self._bind(client)
                await _steer(client, self.process_id, content, key)
                if content not in self.acked:
                    self.acked.append(content)
                if await _answered(client, content, ANSWER_TIMEOUT_S):
                    self.answered.append(content)
                    return
            except GONE:
                pass
            await asyncio.sleep(RETRY_PAUSE_S)  # the pace of retries, not a wait for a condition
        raise AssertionError(f"{content} was not answered within {deadline_s:.0f}s")

    async def chat(self, stop: asyncio.Event) -> None:
        """Messages one after another until `stop`; the one under way is finished first."""
        n = 0
        try:
            while not stop.is_set():
                n += 1
                await self.say(f"[{self.tag}-{n}]")
        finally:
            await self._drop()


async def probe(system: System, timeout_s: float) -> float:
    """Seconds until a new user gets an answer: a login, a new session, a message."""
    started = time.monotonic()
    user = ChatUser(system)
    content = f"[probe-{user.tag}]"
    try:
        await asyncio.wait_for(user.say(content, deadline_s=timeout_s), timeout_s)
    except TimeoutError:
        raise AssertionError(
            f"no answer within {timeout_s:.0f}s (load {os.getloadavg()[0]:.1f})"
        ) from None
    finally:
        await user._drop()
    return time.monotonic() - started
