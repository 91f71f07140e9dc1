"""A scripted OpenAI-compatible chat-completions server on loopback.

Tests and benchmarks point litellm at it (VANCE_LLM_API_BASE), so the real HTTP, streaming and
tool-call parsing paths run. Replies come from rules, matched in order against the request's
messages; unmatched requests get an echo of the last user message. Rules can be added from
another process over HTTP (POST /_script), so workers in other processes see the same script.

Pace: `MODEL_TTFT_MS` (time to the first chunk) and `MODEL_STREAM_MS` (spread over the other
chunks) make the echo answer at a hosted model's pace, as the LangGraph peer's model reads them
(../shared/peers/langgraph/model.py); `MODEL_ANSWER_TOOL=respond` makes the echo answer through
that tool, its `message` argument streamed in `MODEL_CHUNKS` pieces, as real models answer our
engines. GET /_stamps returns (and forgets) when each streamed answer's first readable chunk went out
(the first text, or the first piece of a tool call's `message` value; time.monotonic(), the
clock time.perf_counter() reads in another process on this machine), keyed by the echoed user
message.

`POST /embeddings` answers OpenAI-compatible embeddings: a hashed bag of the input's words
(EMBEDDING_DIM numbers, unit length), so texts sharing words are similar. A rule of purpose
"embeddings" whose `match` is in an input embeds that input as its `text` instead (a test
makes "feline" mean "cat"); the requests are kept as side requests of that purpose.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Rule:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    match: str = ""  # substring of the request's messages (JSON); empty matches anything
    match_last: str = ""  # substring of the last message only (JSON)
    delay_ms: int = 0
    chunks: int = 3
    repeat: bool = False
    fail_status: int = 0  # answer with this HTTP status instead
    retry_after_s: float = -1.0  # with fail_status: send this Retry-After (seconds); <0: none
    # Requests sent with an X-Vance-Purpose header (side calls such as the session-metadata
    # suggestion) only match rules of that purpose, and engine turns never match these rules.
    purpose: str = ""
    # Streaming only: after `hold_after` text chunks the stream stops until the test calls
    # release(hold), so a test can act while a turn is visibly mid-stream.
    hold: str = ""
    hold_after: int = 1
    # Pace: the wait before the first chunk, and the time spread over the chunks after it.
    ttft_ms: int = 0
    stream_ms: int = 0
    # Tool-call arguments in this many pieces (1: whole in one chunk, as most tests want).
    arg_chunks: int = 1

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Rule:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


class Script:
    def __init__(self) -> None:
        self._rules: list[Rule] = []
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.side_requests: dict[str, list[dict[str, Any]]] = {}  # by purpose
        self.in_flight = 0  # completions being answered now
        self.max_in_flight = 0  # the most at once since the last reset

    def add(self, *rules: Rule) -> None:
        with self._lock:
            self._rules.extend(rules)

    def reset(self) -> None:
        with self._lock:
            self._rules.clear()
            self.requests.clear()
            self.side_requests.clear()
            self.max_in_flight = self.in_flight

    def rules(self, purpose: str) -> list[Rule]:
        with self._lock:
            return [r for r in self._rules if r.purpose == purpose]

    def note(self, purpose: str, body: dict[str, Any]) -> None:
        with self._lock:
            seen = self.side_requests.setdefault(purpose, [])
            seen.append(body)
            if len(seen) > 1000:
                del seen[:500]

    def pick(self, body: dict[str, Any], purpose: str = "") -> Rule:
        text = json.dumps(body.get("messages", []))
        with self._lock:
            seen = self.side_requests.setdefault(purpose, []) if purpose else self.requests
            seen.append(body)
            if len(seen) > 1000:
                del seen[:500]
            last = json.dumps((body.get("messages") or [{}])[-1])
            for i, rule in enumerate(self._rules):
                if rule.purpose != purpose:
                    continue
                if (not rule.match or rule.match in text) and (
                    not rule.match_last or rule.match_last in last
                ):
                    if not rule.repeat:
                        del self._rules[i]
                    return rule
        return _echo(_last_user(body))


EMBEDDINGS = "embeddings"
EMBEDDING_DIM = 64
_WORDS = re.compile(r"\w+")


def embedding(text: str) -> list[float]:
    vector = [0.0] * EMBEDDING_DIM
    for word in _WORDS.findall(text.lower()):
        vector[zlib.crc32(word.encode()) % EMBEDDING_DIM] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def _embedding_text(script: Script, text: str) -> str:
    """The text an input is embedded as: its own, or a matching embeddings rule's."""
    for rule in script.rules(EMBEDDINGS):
        if rule.match and rule.match in text:
            return rule.text
    return text


@dataclass(frozen=True)
class Pace:
    """The echo answer's pace and form, from the environment (see the module's doc)."""

    ttft_ms: int = 0
    stream_ms: int = 0
    answer_tool: str = ""
    chunks: int = 3

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Pace:
        e = os.environ if env is None else env
        return cls(
            int(e.get("MODEL_TTFT_MS") or 0),
            int(e.get("MODEL_STREAM_MS") or 0),
            e.get("MODEL_ANSWER_TOOL", ""),
            int(e.get("MODEL_CHUNKS") or 3),
        )


PACE = Pace.from_env()


def _echo(said: str) -> Rule:
    text = f"You said: {said}"
    if not PACE.answer_tool:
        return Rule(text=text, ttft_ms=PACE.ttft_ms, stream_ms=PACE.stream_ms, chunks=PACE.chunks)
    return Rule(
        tool_calls=[
            {
                "name": PACE.answer_tool,
                "arguments": {"message": text, "awaiting_user_input": False},
            }
        ],
        ttft_ms=PACE.ttft_ms,
        stream_ms=PACE.stream_ms,
        arg_chunks=PACE.chunks,
    )


def _last_user(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages", [])):
        if m.get("role") == "user":
            content = m.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def _split(text: str, n: int) -> list[str]:
    if not text:
        return []
    n = max(1, min(n, len(text)))
    size = -(-len(text) // n)
    return [text[i : i + size] for i in range(0, len(text), size)]


class ScriptedLlmServer:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self.script = Script()
        self._server: asyncio.AbstractServer | None = None
        self._conns: set[asyncio.Task[None]] = set()
        self._gates: dict[str, asyncio.Event] = {}
        self.stamps: dict[str, float] = {}  # echoed user message -> first chunk sent

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._conn, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._conns):
                task.cancel()
            await asyncio.gather(*self._conns, return_exceptions=True)
            await self._server.wait_closed()

    def gate(self, name: str) -> asyncio.Event:
        return self._gates.setdefault(name, asyncio.Event())

    async def _conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._conns.add(task)
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                method, path, _ = line.decode().split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode().partition(":")
                    headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                await self._route(method, path, body, writer, headers.get("x-vance-purpose", ""))
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            if task is not None:
                self._conns.discard(task)

    async def _route(
        self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter, purpose: str
    ) -> None:
        if path.endswith("/chat/completions") and method == "POST":
            script = self.script
            script.in_flight += 1
            script.max_in_flight = max(script.max_in_flight, script.in_flight)
            try:
                await self._complete(json.loads(body), writer, purpose)
            finally:
                script.in_flight -= 1
        elif path.endswith("/embeddings") and method == "POST":
            request = json.loads(body)
            self.script.note(EMBEDDINGS, request)
            inputs = request.get("input")
            texts = [inputs] if isinstance(inputs, str) else [str(x) for x in inputs or []]
            data = [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": embedding(_embedding_text(self.script, t)),
                }
                for i, t in enumerate(texts)
            ]
            _json(
                writer,
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": request.get("model", ""),
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                },
            )
        elif path == "/_script" and method == "POST":
            self.script.add(*[Rule.from_dict(r) for r in json.loads(body)["rules"]])
            _json(writer, 200, {"ok": True})
        elif path == "/_reset" and method == "POST":
            self.script.reset()
            _json(writer, 200, {"ok": True})
        elif path == "/_requests":
            _json(
                writer,
                200,
                {"count": len(self.script.requests), "max_in_flight": self.script.max_in_flight},
            )
        elif path == "/_stamps":
            stamps, self.stamps = self.stamps, {}
            _json(writer, 200, {"stamps": stamps})
        else:
            _json(writer, 404, {"error": {"message": f"no route {method} {path}"}})
        await writer.drain()

    async def _complete(
        self, body: dict[str, Any], writer: asyncio.StreamWriter, purpose: str = ""
    ) -> None:
        rule = self.script.pick(body, purpose)
        if rule.delay_ms:
            await asyncio.sleep(rule.delay_ms / 1000)
        if rule.fail_status:
            headers = {"Retry-After": f"{rule.retry_after_s:g}"} if rule.retry_after_s >= 0 else {}
            _json(writer, rule.fail_status, {"error": {"message": "scripted failure"}}, headers)
            return
        model = body.get("model", "scripted")
        cid = f"chatcmpl-{time.monotonic_ns()}"
        calls: list[dict[str, Any]] = [
            {
                "id": c.get("id") or f"call_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))},
            }
            for i, c in enumerate(rule.tool_calls)
        ]
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": rule.text or None}
            if calls:
                message["tool_calls"] = calls
            _json(
                writer,
                200,
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                },
            )
            return
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
        )

        def event(delta: dict[str, Any], finish_reason: str | None = None) -> None:
            payload = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }
            _chunk(writer, f"data: {json.dumps(payload)}\n\n".encode())

        event({"role": "assistant", "content": ""})
        pieces: list[dict[str, Any]] = [{"content": p} for p in _split(rule.text, rule.chunks)]
        # The piece that carries the first character a user reads (`/_stamps`): the first text
        # piece, else the first one that reaches into a tool call's `message` value.
        first_read = 0 if pieces else -1
        for i, call in enumerate(calls):
            fn: dict[str, str] = call["function"]
            args = _split(fn["arguments"], rule.arg_chunks) or [""]
            at = fn["arguments"].find('"message": "')
            if first_read < 0 and at >= 0:
                reach, value = 0, at + len('"message": "')
                for k, a in enumerate(args):
                    reach += len(a)
                    if reach > value:
                        first_read = len(pieces) + k
                        break
            head = {**call, "function": {**fn, "arguments": args[0]}}
            pieces.append({"tool_calls": [{"index": i, **head}]})
            pieces += [
                {"tool_calls": [{"index": i, "function": {"arguments": a}}]} for a in args[1:]
            ]
        await writer.drain()
        if rule.ttft_ms:
            await asyncio.sleep(rule.ttft_ms / 1000)
        gap_s = rule.stream_ms / 1000 / max(1, len(pieces) - 1)
        for i, piece in enumerate(pieces):
            if i and gap_s:
                await writer.drain()
                await asyncio.sleep(gap_s)
            event(piece)
            if i == max(0, first_read) and (rule.ttft_ms or rule.stream_ms):
                self.stamps[_last_user(body)] = time.monotonic()
            if rule.hold and "content" in piece and i + 1 == rule.hold_after:
                await writer.drain()
                await self.gate(rule.hold).wait()
        event({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            # As OpenAI does when asked: a last chunk without choices, carrying the usage.
            prompt = len(json.dumps(body.get("messages", []))) // 4
            completion = max(1, len(rule.text) // 4) + 8 * len(calls)
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
            payload = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [],
                "usage": usage,
            }
            _chunk(writer, f"data: {json.dumps(payload)}\n\n".encode())
        _chunk(writer, b"data: [DONE]\n\n")
        _chunk(writer, b"")


def _chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


def _json(
    writer: asyncio.StreamWriter,
    status: int,
    payload: dict[str, Any],
    headers: dict[str, str] | None = None,
) -> None:
    data = json.dumps(payload).encode()
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    writer.write(
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(data)}\r\n\r\n".encode()
        + data
    )


class ThreadedScriptedLlm:
    """The server on its own loop in a thread, for a test process whose loop is busy."""

    def __init__(self) -> None:
        self.server = ScriptedLlmServer()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self) -> ThreadedScriptedLlm:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self._loop).result(10)
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def release(self, hold: str) -> None:
        """Lets streams held by rules with this `hold` name go on."""
        self._loop.call_soon_threadsafe(lambda: self.server.gate(hold).set())

    @property
    def script(self) -> Script:
        return self.server.script


def main() -> None:
    parser = argparse.ArgumentParser(description="scripted OpenAI-compatible server")
    parser.add_argument("--port", type=int, default=0)
    ns = parser.parse_args()

    async def run() -> None:
        server = ScriptedLlmServer(port=ns.port)
        await server.start()
        print(f"listening {server.port}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(run())


if __name__ == "__main__":
    main()
