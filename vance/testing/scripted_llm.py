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
import gc
import json
import math
import os
import re
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson
import uvloop

from vance.testing.paced import (
    EncodedLength,
    Pacer,
    SseEvents,
    arguments_delta,
    call_delta,
    choice,
    chunked,
    content_delta,
    usage_choices,
)


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
    fail_message: str = "scripted failure"  # with fail_status: the error body's message
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
        self.calls = 0  # completions asked for since the start (a reset keeps it)

    def add(self, *rules: Rule) -> None:
        with self._lock:
            self._rules.extend(rules)

    def remove(self, *rules: Rule) -> None:
        """Takes these rules out (a provider that was down answers again)."""
        with self._lock:
            self._rules = [r for r in self._rules if all(r is not x for x in rules)]

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
        with self._lock:
            self.calls += 1
            seen = self.side_requests.setdefault(purpose, []) if purpose else self.requests
            seen.append(body)
            if len(seen) > 1000:
                del seen[:500]
            # The messages are encoded for matching only when a rule asks (the benchmark's
            # echo calls have none, and their histories grow with every turn).
            text = last = ""
            for i, rule in enumerate(self._rules):
                if rule.purpose != purpose:
                    continue
                if rule.match and not text:
                    text = json.dumps(body.get("messages", []))
                if rule.match_last and not last:
                    last = json.dumps((body.get("messages") or [{}])[-1])
                if (not rule.match or rule.match in text) and (
                    not rule.match_last or rule.match_last in last
                ):
                    if not rule.repeat:
                        del self._rules[i]
                    return rule
        return _echo(_last_user(body))


# The cyclic collector's thresholds in the model's own process (see main()).
GC_THRESHOLDS = (50_000, 50, 50)

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
        self._pacer: Pacer | None = None
        self._encoded = EncodedLength()

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
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError as exc:
                    if exc.partial.strip():
                        raise
                    return
                lines = head.decode().split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers: dict[str, str] = {}
                for h in lines[1:]:
                    if h:
                        k, _, v = h.partition(":")
                        headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                await self._route(method, path, body, writer, headers.get("x-vance-purpose", ""))
        except (
            ConnectionError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
            asyncio.CancelledError,
        ):
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
                # orjson: the request (its history grows with every turn) parsed at several
                # times json's speed, into the same dicts.
                await self._complete(orjson.loads(body), writer, purpose)
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
                {
                    "count": len(self.script.requests),
                    "max_in_flight": self.script.max_in_flight,
                    "calls": self.script.calls,
                },
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
            _json(writer, rule.fail_status, {"error": {"message": rule.fail_message}}, headers)
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
        events = SseEvents(cid, model)
        # Each piece's delta as JSON, and whether it is text.
        pieces = [(content_delta(p), True) for p in _split(rule.text, rule.chunks)]
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
            pieces.append((call_delta(i, call["id"], fn["name"], args[0]), False))
            pieces += [(arguments_delta(i, a), False) for a in args[1:]]
        # What goes out when: the head and the role at once, the first piece after the time to
        # the first token, the others `gap_s` apart, the end with the last piece; things due at
        # the same moment leave in one write.
        moments = [_Moment(0.0, head=_SSE_HEAD, choices=[_ROLE])]
        gap_s = rule.stream_ms / 1000 / max(1, len(pieces) - 1)
        for i, (delta, text) in enumerate(pieces):
            _moment(moments, gap_s if i else rule.ttft_ms / 1000).choices.append(choice(delta))
            if i == max(0, first_read) and (rule.ttft_ms or rule.stream_ms):
                moments[-1].stamp = True
            if rule.hold and text and i + 1 == rule.hold_after:
                moments[-1].hold = rule.hold
        end = _moment(moments, 0.0 if pieces else rule.ttft_ms / 1000)
        end.choices.append(choice("{}", finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            # As OpenAI does when asked: a last chunk without choices, carrying the usage.
            prompt = self._encoded.length(body.get("messages", [])) // 4
            completion = max(1, len(rule.text) // 4) + 8 * len(calls)
            end.choices.append(
                usage_choices(
                    {
                        "prompt_tokens": prompt,
                        "completion_tokens": completion,
                        "total_tokens": prompt + completion,
                    }
                )
            )
        end.tail = _SSE_END
        await self._deliver(writer, events, moments, _last_user(body))

    async def _deliver(
        self,
        writer: asyncio.StreamWriter,
        events: SseEvents,
        moments: list[_Moment],
        said: str,
    ) -> None:
        """Writes the moments at their times from timer callbacks (no task wake per chunk);
        waits only for the end of the stream and, at a held moment, for its gate."""
        loop = asyncio.get_running_loop()
        self._pacer = self._pacer or Pacer(loop)
        at = 0
        while at < len(moments):
            done = loop.create_future()
            group: list[_Moment] = []
            while at < len(moments):
                group.append(moments[at])
                at += 1
                if group[-1].hold:
                    break
            self._chain(writer, events, group, 0, loop.time(), said, done)
            await done
            if group[-1].hold:
                await self.gate(group[-1].hold).wait()

    def _chain(
        self,
        writer: asyncio.StreamWriter,
        events: SseEvents,
        group: list[_Moment],
        i: int,
        when: float,
        said: str,
        done: asyncio.Future[None],
    ) -> None:
        """Writes moment i of the group at `when` plus its delay, and only then schedules the
        next: timers of different milliseconds can fire out of order on a loop that runs late
        (the loop clock a timer is stamped from may lag the one its due time was computed
        from), and a stream's pieces must leave in order (a piece of a tool call's arguments
        after the next one is no longer JSON, seen at 800 clients)."""
        assert self._pacer is not None
        moment = group[i]
        last = i + 1 == len(group)
        when += moment.delay_s

        def send() -> None:
            self._send(writer, events, moment, said, done if last else None)
            if not last:
                self._chain(writer, events, group, i + 1, when, said, done)

        if moment.delay_s:
            self._pacer.at(when, send)
        else:
            send()

    def _send(
        self,
        writer: asyncio.StreamWriter,
        events: SseEvents,
        moment: _Moment,
        said: str,
        done: asyncio.Future[None] | None,
    ) -> None:
        if not writer.transport.is_closing():
            writer.write(
                moment.head + chunked(*(events.event(c) for c in moment.choices)) + moment.tail
            )
        if moment.stamp:
            self.stamps[said] = time.monotonic()
        if done is not None and not done.done():
            done.set_result(None)


_SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
)
_SSE_END = chunked(b"data: [DONE]\n\n", b"")
_ROLE = choice('{"role": "assistant", "content": ""}')


@dataclass
class _Moment:
    """What a stream writes at one moment, `delay_s` after its previous moment."""

    delay_s: float
    head: bytes = b""  # the HTTP response head, before the events
    choices: list[bytes] = field(default_factory=list)  # each an event's encoded choices
    tail: bytes = b""  # [DONE] and the last chunk, after them
    stamp: bool = False  # the first chunk a user reads goes out now (`/_stamps`)
    hold: str = ""  # the stream waits for this gate after the moment


def _moment(moments: list[_Moment], delay_s: float) -> _Moment:
    """The moment `delay_s` after the last one: the last itself when nothing is between."""
    if delay_s or moments[-1].hold:
        moments.append(_Moment(delay_s))
    return moments[-1]


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

    # Its own process in the benchmark, where its CPU is taken from the servers under test:
    # uvloop, as the servers run (vance/server.py), for the cheaper loop and socket writes.
    # Each call leaves a parsed request (a JSON tree: no cycles, freed by reference counting)
    # among the last 1000 kept for tests; with the default thresholds the cyclic collector
    # walked those every few calls and took a fifth of the process's CPU at 200 streams.
    gc.set_threshold(*GC_THRESHOLDS)
    uvloop.run(run())


if __name__ == "__main__":
    main()
