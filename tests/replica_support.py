"""Users of a replicated system (tests/test_replicas.py): each keeps every frame with a seq
that reached it over all its sockets, reconnects through the next gateway replica when its
socket goes (as a load balancer would send it), resumes from the last seq it saw and re-sends
with the same idempotency key. So what a user saw can be compared with the stored stream."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
import websockets

from tests.chat_load import GONE, MODEL_DELAY_MS, RETRY_PAUSE_S
from tests.harness import System, WsClient, eventually
from tests.lifecycle_support import store
from vance.testing.scripted_llm import Rule

CONNECT_S = 15.0  # a socket's connect and welcome on a loaded machine
# A request's reply (20 sessions created at once on 2 cores shared with other systems took
# more than 5 s).
STEP_TIMEOUT_S = 30.0


def gateways(system: System) -> list[str]:
    gw = system.config.gateway
    return [f"{gw.host}:{gw.port + i}" for i in range(system.config.replica_count("gateway"))]


async def _login(address: str) -> str:
    async with httpx.AsyncClient() as http:
        r = await http.post(
            f"http://{address}/brain/default/access/dev", json={"password": "dev"}, timeout=15
        )
        r.raise_for_status()
        return str(r.json()["token"])


async def _connect(address: str, token: str) -> WsClient:
    ws = await websockets.connect(
        f"ws://{address}/brain/default/ws",
        additional_headers={"Authorization": f"Bearer {token}"},
        max_size=None,
    )
    return await WsClient(ws).start()


@dataclass
class StreamUser:
    system: System
    home: int  # the gateway replica tried first
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    session_id: str = ""
    process_id: str = ""
    seen: dict[int, dict[str, Any]] = field(default_factory=dict)  # seq -> frame
    doubles: list[int] = field(default_factory=list)  # seqs that reached this user twice
    sockets: int = 0
    sent: int = 0
    answered: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # what made an attempt fail
    answered_at: list[float] = field(default_factory=list)  # monotonic, as `answered`
    token: str = ""
    _client: WsClient | None = None
    _read: int = 0  # frames of the current socket taken into `seen`
    _bound: bool = False

    @property
    def last_seq(self) -> int:
        return max(self.seen, default=0)

    def take(self) -> None:
        """Takes the current socket's new frames into `seen`."""
        client = self._client
        if client is None:
            return
        frames = client.frames[self._read :]
        self._read += len(frames)
        for f in frames:
            seq = f.get("seq")
            if seq is None:
                continue
            if seq in self.seen:
                self.doubles.append(int(seq))
            self.seen[int(seq)] = f

    async def _socket(self) -> WsClient:
        if self._client is not None and not self._client.closed.is_set():
            return self._client
        await self.drop()
        addresses = gateways(self.system)
        for i in range(len(addresses)):
            address = addresses[(self.home + self.sockets + i) % len(addresses)]
            try:
                # One login per user (a password check costs CPU; every gateway replica takes
                # the token), then sockets with it.
                self.token = self.token or await _login(address)
                self._client = await asyncio.wait_for(_connect(address, self.token), CONNECT_S)
            except GONE as exc:
                self.errors.append(f"{address}: {type(exc).__name__}: {exc}")
                continue
            self.sockets += 1
            self._bound = False
            self._read = 0
            return self._client
        raise OSError("no gateway replica answers")

    async def _bind(self, client: WsClient) -> None:
        if self._bound:
            return
        if not self.session_id:
            try:
                reply = await client.request(
                    "session-create", {"projectId": "demo"}, timeout=STEP_TIMEOUT_S
                )
                if reply["type"] != "session-create":
                    raise AssertionError(f"create refused: {reply}")
            except GONE:
                # A create whose reply did not come may still have made a session, whose
                # events this socket saw: start over on a new socket, forgetting them.
                self._client = None
                await client.close()
                self.seen.clear()
                self.doubles.clear()
                raise
            self.session_id = reply["data"]["sessionId"]
            self.process_id = reply["data"]["chatProcessId"]
        else:
            reply = await client.request(
                "session-resume",
                {"sessionId": self.session_id, "takeover": True, "sinceSeq": self.last_seq},
                timeout=STEP_TIMEOUT_S,
            )
            if reply["type"] != "session-resume":
                raise AssertionError(f"resume refused: {reply}")
        self._bound = True

    async def drop(self) -> None:
        client = self._client
        if client is not None:
            await client.close()
            self.take()  # what reached the socket before it closed
        self._client = None

    def answer_of(self, content: str) -> bool:
        self.take()
        return any(
            f["type"] == "chat-message-appended"
            and f["data"]["role"] == "assistant"
            and content in str(f["data"]["content"])
            for f in self.seen.values()
        )

    async def say(self, content: str, *, deadline_s: float = 90.0) -> None:
        key = f"key-{content}"
        self.system.script(
            Rule(
                text=f"You said: {content} and more words",
                match_last=content,
                delay_ms=MODEL_DELAY_MS,
                chunks=4,
                stream_ms=80,
            )
        )
        deadline = time.monotonic() + deadline_s
        self.sent += 1
        while time.monotonic() < deadline:
            try:
                client = await self._socket()
                await self._bind(client)
                reply = await client.request(
                    "process-steer",
                    {"processId": self.process_id, "content": content, "idempotencyKey": key},
                    timeout=STEP_TIMEOUT_S,
                )
                if reply["type"] != "process-steer":
                    raise AssertionError(f"steer refused: {reply}")

                def done(c: WsClient = client) -> bool:
                    return self.answer_of(content) or c.closed.is_set()

                await eventually(done, timeout=30, what=f"the answer to {content}")
                if self.answer_of(content):
                    self.answered.append(content)
                    self.answered_at.append(time.monotonic())
                    return
            except GONE as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(RETRY_PAUSE_S)  # the pace of retries, not a wait for a condition
        raise AssertionError(
            f"{content} was not answered within {deadline_s:.0f}s; last errors: {self.errors[-3:]}"
        )

    async def chat(self, messages: int) -> None:
        for n in range(messages):
            await self.say(f"[{self.tag}-{n + 1}]")


async def stored_stream(system: System, session_id: str) -> dict[int, dict[str, Any]]:
    async with store(system) as db:
        docs = await db["session_events"].find({"session_id": session_id}).to_list(None)
    return {int(d["seq"]): d for d in docs}


def _frame_matches(doc: dict[str, Any], f: dict[str, Any]) -> bool:
    data = doc.get("data") or {}
    if doc["kind"] == "stream_chunk":
        return bool(
            f["type"] == "chat-message-stream-chunk" and f["data"]["chunk"] == data["chunk"]
        )
    if doc["kind"] == "chat_message_appended":
        return bool(
            f["type"] == "chat-message-appended" and f["data"]["content"] == data["content"]
        )
    return True


async def stream_differences(system: System, user: StreamUser) -> list[str]:
    """What the stored stream has that the user did not see (or saw otherwise), and what the
    user saw twice. Empty: every event and chunk reached the user exactly once."""
    user.take()
    stored = await stored_stream(system, user.session_id)
    out = [f"seq {s} reached the user twice" for s in user.doubles]
    for seq, doc in sorted(stored.items()):
        if doc.get("ephemeral") and not doc.get("data"):
            out.append(f"seq {seq}: a chunk stored without its text")
        elif seq not in user.seen:
            out.append(f"seq {seq} ({doc['kind']}) never reached the user")
        elif not _frame_matches(doc, user.seen[seq]):
            out.append(f"seq {seq}: the user saw {user.seen[seq]}, the store has {doc}")
    out += [f"seq {s}: seen but not stored" for s in sorted(set(user.seen) - set(stored))]
    return out
