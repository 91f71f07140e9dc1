"""The scripted model's streaming machinery: SSE events encoded from pre-built parts, and one
loop timer for every stream due in the same millisecond.

The scripted model stands in for a hosted model; in the real-pace benchmark it answers hundreds
of streams at once on the machine under test, so what it spends per call is CPU the servers lack
(bench/realpace.py reports it). A stream used to be a coroutine sleeping once per chunk and
encoding each event's whole payload with json.dumps; here a stream's chunks are written by timer
callbacks (no task wake per chunk), chunks due at the same moment leave in one write, and an
event's bytes are its pre-encoded head, the clock's second and its pre-encoded choices: the same
bytes as `json.dumps` of the payload, at the same times."""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable
from typing import Any

import orjson


class Pacer:
    """Runs callbacks at loop times, with one loop timer per millisecond in which anything is
    due: the streams of a benchmark start at scattered times but share their steps' moments
    within a tick, and uvloop's timers (libuv's) have millisecond resolution anyway, so the
    grouping moves nothing later than the loop would."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._due: dict[int, list[Callable[[], None]]] = {}

    def at(self, when: float, fn: Callable[[], None]) -> None:
        """Calls fn at loop time `when` (rounded up to the millisecond)."""
        tick = math.ceil(when * 1000)
        due = self._due.get(tick)
        if due is None:
            self._due[tick] = [fn]
            self._loop.call_at(tick / 1000, self._fire, tick)
        else:
            due.append(fn)

    def _fire(self, tick: int) -> None:
        for fn in self._due.pop(tick, ()):
            fn()


def chunked(*parts: bytes) -> bytes:
    """Each part as one HTTP/1.1 chunk (an empty part is the last chunk), in one buffer."""
    return b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in parts)


class SseEvents:
    """The `chat.completion.chunk` events of one streamed completion, byte for byte what
    `json.dumps` of the payload gives (its default separators), built from parts encoded once
    per call; only `created` (the clock's second when the event is sent) is filled in late."""

    def __init__(self, cid: str, model: Any) -> None:
        self._head = (
            f'data: {{"id": {json.dumps(cid)}, "object": "chat.completion.chunk", "created": '
        ).encode()
        self._model = f', "model": {json.dumps(model)}, "choices": '.encode()

    def event(self, choices: bytes) -> bytes:
        """One `data:` event (without its HTTP chunk framing), stamped with the clock now."""
        return b"%b%d%b%b}\n\n" % (self._head, int(time.time()), self._model, choices)


class EncodedLength:
    """`len(json.dumps(messages))` (what the usage's prompt tokens are counted from), from each
    message's length remembered by its orjson encoding: a chat's history comes again with every
    call, and json.dumps of a 40-turn history took more than the rest of the call. A request
    parsed by orjson holds only values whose orjson encodings differ when their json.dumps
    encodings do (no NaN, no oversized int), so the key is sound."""

    _MAX = 50_000

    def __init__(self) -> None:
        self._lengths: dict[bytes, int] = {}

    def length(self, messages: Any) -> int:
        if not isinstance(messages, list):
            return len(json.dumps(messages))
        total = 2 + 2 * max(0, len(messages) - 1)  # the brackets, the ", " between items
        for message in messages:
            try:
                key = orjson.dumps(message)
            except TypeError:  # orjson.JSONEncodeError: nothing to remember it by
                total += len(json.dumps(message))
                continue
            n = self._lengths.get(key)
            if n is None:
                if len(self._lengths) >= self._MAX:
                    self._lengths.clear()
                n = self._lengths[key] = len(json.dumps(message))
            total += n
        return total


# json.dumps of a str: the C encoder's ASCII escaping, without json.dumps' dispatch per call.
_string: Callable[[str], str] = json.encoder.encode_basestring_ascii


def content_delta(text: str) -> str:
    """`json.dumps({"content": text})`."""
    return f'{{"content": {_string(text)}}}'


def _value(value: Any) -> str:
    return _string(value) if isinstance(value, str) else json.dumps(value)


def call_delta(index: int, call_id: Any, name: Any, arguments: str) -> str:
    """`json.dumps` of a delta opening tool call `index` with the first piece of its arguments."""
    return (
        f'{{"tool_calls": [{{"index": {index}, "id": {_value(call_id)}, "type": "function", '
        f'"function": {{"name": {_value(name)}, "arguments": {_string(arguments)}}}}}]}}'
    )


def arguments_delta(index: int, arguments: str) -> str:
    """`json.dumps` of a delta carrying the next piece of tool call `index`'s arguments."""
    return f'{{"tool_calls": [{{"index": {index}, "function": {{"arguments": {_string(arguments)}}}}}]}}'


def choice(delta: str, finish_reason: str | None = None) -> bytes:
    """The encoded `choices` of an event carrying delta (JSON)."""
    finish = "null" if finish_reason is None else _string(finish_reason)
    return b'[{"index": 0, "delta": %b, "finish_reason": %b}]' % (delta.encode(), finish.encode())


def usage_choices(usage: dict[str, int]) -> bytes:
    """The encoded rest of the last event when usage is asked for: no choices, the usage."""
    return b'[], "usage": %b' % json.dumps(usage).encode()
