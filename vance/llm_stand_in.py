"""A one-answer OpenAI-compatible server on loopback, for warming up the model clients.

`vance.llm.warm_up_call` sends one streamed tool call through a client before a user's turn
does, so litellm's first-use work (schemas, tokenizers, price tables) and the direct client's
imports and pool are paid at start. It needs something on loopback to answer: this answers every
request with the same streamed `warm_up` tool call. The scripted test model
(vance/testing/scripted_llm.py) is the tests' tool, kept out of production imports."""

from __future__ import annotations

import asyncio
import contextlib
import json

_CHUNKS: list[dict[str, object]] = [
    {"role": "assistant", "content": ""},
    {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_warm_up",
                "type": "function",
                "function": {"name": "warm_up", "arguments": '{"ok": true}'},
            }
        ]
    },
]


def _event(delta: dict[str, object], finish: str | None = None) -> bytes:
    payload = {
        "id": "chatcmpl-warm-up",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "warm-up",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(payload)}\n\n".encode()


_BODY = b"".join([*(_event(c) for c in _CHUNKS), _event({}, "tool_calls"), b"data: [DONE]\n\n"])
_RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Connection: close\r\nContent-Length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY
)


class WarmUpServer:
    """Answers each request on its connection with `_RESPONSE`, then closes it."""

    def __init__(self) -> None:
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    @staticmethod
    async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            await reader.readexactly(length)
            writer.write(_RESPONSE)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
