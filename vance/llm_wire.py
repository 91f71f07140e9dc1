"""HTTP/1.1 for the model calls (vance/llm_http.py): keep-alive connections (pooled by
vance/llm_pool.py), each a small asyncio Protocol whose response is parsed by httptools (llhttp,
uvicorn's parser) and whose body goes to a reader synchronously, in data_received: a streamed answer's
pieces cost the calling coroutine no wake-up, and a call in flight holds a connection, a parser
and one future instead of aiohttp's response, stream reader, timers and reading task (why, in
figures: vance/llm_http.py's module doc)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Protocol, cast
from urllib.parse import urlsplit

import httptools

# An error answer's body is read up to this much (its message is a line or two).
MAX_ERROR_BODY = 64 * 1024


class BodyReader(Protocol):
    """Where a 2xx answer's body goes, piece by piece as the socket delivers it."""

    # What a piece gave an async sink, to be awaited (in order) before more is read.
    pending: list[Awaitable[None]]

    def feed(self, data: bytes) -> bool:
        """A piece of the body; True when the answer is complete (the rest is not read).
        Raises when the body cannot be read, which fails the call."""

    def end(self) -> None:
        """The body ended (the server's framing said so)."""


class Unreachable(Exception):
    """No connection, or it closed before any byte of the answer came."""


class StreamBroken(ValueError):
    """The answer began and could not be read to its end: a cut connection, bad HTTP."""


class ErrorAnswer(Exception):
    """The server answered with an error status; its headers and body as they came."""

    def __init__(self, status: int, reason: str, headers: dict[str, str], body: bytes) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body


class Stale(Unreachable):
    """A reused idle connection closed before the answer began: the server may have closed it
    while it was idle, so the request goes once more on a new connection."""


class Origin:
    """Scheme, host and port of a URL, and the request line and Host header for its path."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.tls else 80)
        host = f"[{self.host}]" if ":" in self.host else self.host
        if parts.port is not None and parts.port != (443 if self.tls else 80):
            host = f"{host}:{parts.port}"
        self.host_header = host
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def request_head(origin: Origin, headers: dict[str, str]) -> bytes:
    """A POST's head up to `Content-Length: ` (the length and the blank line are the call's)."""
    lines = [f"POST {origin.target} HTTP/1.1", f"Host: {origin.host_header}"]
    for name, value in headers.items():
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            raise ValueError(f"the {name} header holds a line break")
        lines.append(f"{name}: {value}")
    lines.append("Connection: keep-alive")
    lines.append("Content-Length: ")
    return "\r\n".join(lines).encode("latin-1")


class Connection(asyncio.Protocol):
    """One keep-alive connection and the exchange on it, if any. The parser's callbacks run
    inside data_received; the calling coroutine waits on one future, resolved when the answer
    ended or failed, or when an async sink's awaitables are due (reading is paused until they
    are awaited, so a slow sink holds the server back as a reading task did)."""

    __slots__ = (
        "_body",
        "_complete",
        "_failure",
        "_finished",
        "_framed",
        "_got",
        "_head_done",
        "_headers",
        "_keep",
        "_parser",
        "_reader",
        "_reason",
        "_request",
        "_waiter",
        "draining",
        "idle_since",
        "lost",
        "reused",
        "transport",
    )

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self.lost = False
        self.reused = False  # taken from the idle list (not just connected)
        self.draining = False  # its answer was whole before the server's framing ended
        self.idle_since = 0.0
        self._reset(None)

    def _reset(self, reader: BodyReader | None) -> None:
        self._reader = reader
        self._waiter: asyncio.Future[None] | None = None
        self._request: list[bytes] | None = None
        self._got = False  # a byte of the answer came
        self._framed = False  # Content-Length or chunked: the end is not the connection's
        self._head_done = False  # the answer's headers all came
        self._headers: list[tuple[bytes, bytes]] | None = None  # an error answer's only
        self._body: list[bytes] | None = None  # an error answer's body
        self._reason = b""
        self._complete = False  # the parser saw the message's end
        self._keep = False
        self._finished = False  # the exchange's outcome is known
        self._failure: BaseException | None = None

    async def exchange(self, request: list[bytes], reader: BodyReader) -> None:
        """Sends `request` and reads the answer into `reader`; raises ErrorAnswer,
        StreamBroken, Unreachable or what the reader raised. `request` is emptied once the
        answer begins, so nothing holds a sent body while the answer streams."""
        assert self.transport is not None
        self._reset(reader)
        self._request = request
        loop = asyncio.get_running_loop()
        self._waiter = waiter = loop.create_future()
        self.transport.writelines(request)
        while True:
            await waiter
            pending = reader.pending
            if pending:
                reader.pending = []
                for sent in pending:
                    await sent
            if self._failure is not None:
                raise self._failure
            if self._finished:
                return
            self._waiter = waiter = loop.create_future()
            self.transport.resume_reading()

    @property
    def reusable(self) -> bool:
        # An error answer read whole leaves the connection as usable as a good one.
        failure = self._failure
        return (
            not self.lost
            and self._finished
            and (failure is None or type(failure) is ErrorAnswer)
            and self._complete
            and self._keep
        )

    @property
    def whole_but_draining(self) -> bool:
        """The answer was read whole; the server's framing (a chunked stream's last chunk)
        has not come yet."""
        return not self.lost and self._finished and self._failure is None and not self._complete

    def release(self) -> None:
        """The exchange is over: what it held is let go."""
        self._reader = None
        self._waiter = None
        self._request = None
        self._headers = None
        self._body = None

    def close(self) -> None:
        self.lost = True
        if self.transport is not None:
            self.transport.abort()

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's TCP transport is not an asyncio.Transport subclass, though it is one.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._reader is None and not self.draining:
            self.close()  # bytes nobody asked for: the connection cannot be trusted
            return
        if not self._got:
            self._got = True
            if self._request is not None:
                self._request.clear()
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            if not self._finished:
                self._fail(StreamBroken(f"the answer is not valid HTTP: {exc}"))
            self._keep = False
            self.close()
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._finished:
            waiter.set_result(None)
        elif self._reader is not None and self._reader.pending:
            assert self.transport is not None
            self.transport.pause_reading()
            waiter.set_result(None)

    def eof_received(self) -> bool | None:
        return None  # the transport closes; connection_lost tells the exchange

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        waiter = self._waiter
        if waiter is None or self._finished:
            return
        if not self._got:
            self._fail((Stale if self.reused else Unreachable)("the connection closed"))
        elif self._body is not None:
            self._error()  # an error answer's body up to the close
        elif self._head_done and not self._framed and self._reader is not None:
            # No length and not chunked: the body ends with the connection.
            try:
                self._reader.end()
                self._finished = True
            except Exception as err:  # the exchange raises it
                self._fail(err)
        else:
            self._fail(StreamBroken("the connection closed before the answer ended"))
        if not waiter.done():
            waiter.set_result(None)

    # httptools callbacks

    def on_status(self, reason: bytes) -> None:
        # Not followed: a redirect (which a provider's API does not send) fails the call as an
        # error answer, where reading its body as events would give an empty reply.
        if self._parser.get_status_code() >= 300:
            self._reason = reason
            self._headers = []
            self._body = []

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._headers is not None:
            self._headers.append((name, value))
        if len(name) in (14, 17) and name.lower() in (b"content-length", b"transfer-encoding"):
            self._framed = True

    def on_headers_complete(self) -> None:
        self._head_done = True

    def on_body(self, body: bytes) -> None:
        if self._finished:
            return
        if self._body is not None:
            if sum(map(len, self._body)) < MAX_ERROR_BODY:
                self._body.append(body)
            return
        if self._parser.get_status_code() < 200:
            return
        assert self._reader is not None
        try:
            if self._reader.feed(body):
                self._finished = True
        except Exception as exc:  # the exchange raises it
            self._fail(exc)

    def on_message_complete(self) -> None:
        if self._parser.get_status_code() < 200:
            return  # an interim answer (100 Continue): the real one follows
        self._complete = True
        self._keep = self._parser.should_keep_alive()
        if self.draining:
            self.draining = False
            if not self._keep:
                self.close()
            return
        if self._finished:
            return
        if self._body is not None:
            self._error()
            return
        assert self._reader is not None
        try:
            self._reader.end()
            self._finished = True
        except Exception as exc:  # the exchange raises it
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        self._failure = exc
        self._finished = True

    def _error(self) -> None:
        headers = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in self._headers or ()
        }
        body = b"".join(self._body or ())
        status = self._parser.get_status_code()
        self._fail(ErrorAnswer(status, self._reason.decode("latin-1"), headers, body))
