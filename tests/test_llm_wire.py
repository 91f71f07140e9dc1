"""The model calls' connections (vance/llm_wire.py, vance/llm_pool.py) as a provider sees
them, under uvloop (the services' loop) and asyncio's own: kept alive and reused, never beyond
`max_connections` at once, not reused when the server closes or asks to close, a request on an
idle connection the server closed meanwhile sent again on a new one, a cancelled call's
connection closed, an error answer's Retry-After read, and https through a real TLS
handshake."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
import uvloop

from tests.harness import eventually
from vance.config import LlmConfig
from vance.llm import ModelCallError, OpenAIClient
from vance.llm_http import UNREACHABLE
from vance.llm_wire import Origin

RUNNERS: dict[str, Callable[[Coroutine[Any, Any, None]], None]] = {
    "uvloop": uvloop.run,
    "asyncio": asyncio.run,
}


def _answer(text: str) -> bytes:
    """A streamed answer, chunked as providers send it."""
    events = [
        json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]}),
        json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        "[DONE]",
    ]
    out = b""
    for event in events:
        data = f"data: {event}\n\n".encode()
        out += b"%x\r\n%s\r\n" % (len(data), data)
    return out + b"0\r\n\r\n"


class Provider:
    """A keep-alive OpenAI-compatible endpoint on loopback that counts connections and what
    is open at once. `close_after` closes a connection after its first answer without saying
    so (as a provider's idle timeout does); `drop_second` reads a connection's second request
    and closes it unanswered (as a server does that closed it while the request was on its way),
    `drop_all` every request; `hold` keeps answers back until it is set."""

    def __init__(
        self, *, close_header: bool = False, close_after: bool = False, drop_second: bool = False
    ) -> None:
        self.close_header = close_header
        self.close_after = close_after
        self.drop_second = drop_second
        self.drop_all = False
        self.hold: asyncio.Event | None = None
        self.connections = 0
        self.open = 0
        self.most_open = 0
        self.closed_by_client = 0
        self.first_headers: dict[str, str] = {}
        self._server: asyncio.Server | None = None
        self.error: tuple[int, dict[str, str], bytes] | None = None
        self.raw: bytes | None = None  # sent as the whole answer, then the connection closed

    async def start(self, tls: ssl.SSLContext | None = None) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=tls)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            for answered in range(1_000_000):
                line = await reader.readline()
                if not line:
                    self.closed_by_client += 1
                    return
                headers: dict[str, str] = {}
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                self.first_headers = self.first_headers or headers
                await reader.readexactly(int(headers["content-length"]))
                if self.drop_all or (self.drop_second and answered == 1):
                    return
                if self.hold is not None:
                    await self.hold.wait()
                if self.raw is not None:
                    writer.write(self.raw)
                    await writer.drain()
                    return
                if self.error is not None:
                    status, extra, body = self.error
                    head = f"HTTP/1.1 {status} Oops\r\nContent-Length: {len(body)}\r\n"
                    head += "".join(f"{k}: {v}\r\n" for k, v in extra.items())
                    writer.write(head.encode() + b"\r\n" + body)
                else:
                    head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                    if self.close_header:
                        head += "Connection: close\r\n"
                    head += "Transfer-Encoding: chunked\r\n\r\n"
                    writer.write(head.encode() + _answer(f"answer {self.connections}"))
                await writer.drain()
                if self.close_header or self.close_after:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            self.closed_by_client += 1
        finally:
            self.open -= 1
            writer.close()


def _client(port: int, *, scheme: str = "http", limit: int = 1024) -> OpenAIClient:
    config = LlmConfig(
        model="openai/x",
        api_base=f"{scheme}://127.0.0.1:{port}/v1",
        api_key="k",
        timeout_s=10,
        max_connections=limit,
    )
    return OpenAIClient(config, purpose="test")


@contextlib.asynccontextmanager
async def _serving(provider: Provider, *, limit: int = 1024) -> AsyncIterator[OpenAIClient]:
    """The provider started and a client of it; both closed at the end, whatever happened."""
    client = _client(await provider.start(), limit=limit)
    try:
        yield client
    finally:
        await client.aclose()
        await provider.stop()


async def _ask(client: OpenAIClient) -> str:
    reply = await client.complete(tier="default", messages=[{"role": "user", "content": "hi"}])
    return reply.text


def _run(runner: str, scenario: Callable[[], Awaitable[None]]) -> None:
    async def main() -> None:
        await scenario()

    RUNNERS[runner](main())


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_calls_one_after_another_share_one_connection(runner: str) -> None:
    async def scenario() -> None:
        provider = Provider()
        async with _serving(provider) as client:
            assert [await _ask(client) for _ in range(4)] == ["answer 1"] * 4
            assert provider.connections == 1
            # What the provider was sent: no compression asked for (a decompression per read).
            assert provider.first_headers["authorization"] == "Bearer k"
            assert provider.first_headers["x-vance-purpose"] == "test"
            assert provider.first_headers["connection"] == "keep-alive"
            assert provider.first_headers["host"] == f"127.0.0.1:{client._origin.port}"
            assert "accept-encoding" not in provider.first_headers
            await client.aclose()
            await eventually(lambda: provider.open == 0)  # aclose closed the idle connection

    _run(runner, scenario)


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_a_connection_the_server_closes_or_asks_to_close_is_not_reused(runner: str) -> None:
    async def scenario() -> None:
        for provider in (Provider(close_header=True), Provider(close_after=True)):
            async with _serving(provider) as client:
                texts = []
                for n in range(1, 4):
                    texts.append(await _ask(client))
                    if provider.close_after:
                        # Closed without a word: the next call finds it closed, or sends on
                        # it before the close arrives and is sent again on a new one.
                        def closed(p: Provider = provider, n: int = n) -> bool:
                            return p.open == 0 and p.connections == n

                        await eventually(closed)
                assert texts == ["answer 1", "answer 2", "answer 3"]
                assert provider.connections == 3

    _run(runner, scenario)


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_a_request_on_an_idle_connection_closed_meanwhile_goes_again_on_a_new_one(
    runner: str,
) -> None:
    async def scenario() -> None:
        provider = Provider(drop_second=True)
        async with _serving(provider) as client:
            assert await _ask(client) == "answer 1"
            # Its request on the idle connection meets the close, no byte of an answer came:
            # sent again, once, on a new connection.
            assert await _ask(client) == "answer 2"
            assert provider.connections == 2
            # A new connection that closes so is not tried again: the call fails as unreachable.
            provider.drop_all = True
            with pytest.raises(ModelCallError) as info:
                await _ask(client)
            assert (info.value.status_code, info.value.detail) == (0, UNREACHABLE)
            assert provider.connections == 3

    _run(runner, scenario)


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_calls_beyond_max_connections_wait_for_a_free_one(runner: str) -> None:
    async def scenario() -> None:
        provider = Provider()
        provider.hold = asyncio.Event()
        async with _serving(provider, limit=2) as client:
            calls = [asyncio.create_task(_ask(client)) for _ in range(5)]
            await eventually(lambda: provider.open == 2)
            provider.hold.set()
            texts = await asyncio.gather(*calls)
            assert texts == ["answer 2"] * 5
            assert (provider.most_open, provider.connections) == (2, 2)

    _run(runner, scenario)


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_a_cancelled_call_closes_its_connection(runner: str) -> None:
    async def scenario() -> None:
        provider = Provider()
        provider.hold = asyncio.Event()
        async with _serving(provider) as client:
            call = asyncio.create_task(_ask(client))
            await eventually(lambda: provider.open == 1)
            call.cancel()
            provider.hold.set()  # its answer meets a closed connection
            await eventually(lambda: provider.closed_by_client == 1)
            assert await _ask(client) == "answer 2"  # on a new connection

    _run(runner, scenario)


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_an_error_answer_gives_its_status_message_and_retry_after(runner: str) -> None:
    async def scenario() -> None:
        provider = Provider()
        body = json.dumps({"error": {"message": "slow down"}}).encode()
        provider.error = (429, {"Retry-After": "3"}, body)
        async with _serving(provider) as client:
            with pytest.raises(ModelCallError) as info:
                await _ask(client)
            assert (info.value.status_code, info.value.detail) == (429, "slow down")
            assert info.value.retry_after_s == 3
            provider.error = (503, {}, b"")
            with pytest.raises(ModelCallError) as info:
                await _ask(client)
            assert (info.value.status_code, info.value.detail) == (503, "Oops")
            # A redirect is not followed (its body read as events would be an empty reply).
            provider.error = (307, {"Location": "https://elsewhere/v1/chat/completions"}, b"")
            with pytest.raises(ModelCallError) as info:
                await _ask(client)
            assert (info.value.status_code, info.value.detail) == (307, "Oops")
            assert provider.connections == 1  # an error answer leaves the connection usable

    _run(runner, scenario)


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_https_verifies_the_server_against_the_systems_trust(
    runner: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server whose certificate the system trusts (SSL_CERT_FILE, which
    ssl.create_default_context reads) answers over TLS; one it does not trust is unreachable."""
    cert, key = _self_signed(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    origin = Origin("https://api.example.com/v1/chat/completions")
    assert (origin.tls, origin.port, origin.host_header) == (True, 443, "api.example.com")

    async def scenario() -> None:
        provider = Provider()
        port = await provider.start(tls)
        try:
            untrusted = _client(port, scheme="https")
            with pytest.raises(ModelCallError) as info:
                await _ask(untrusted)
            await untrusted.aclose()
            assert (info.value.status_code, info.value.detail) == (0, UNREACHABLE)
            monkeypatch.setenv("SSL_CERT_FILE", str(cert))
            trusted = _client(port, scheme="https")
            try:
                first, second = await _ask(trusted), await _ask(trusted)
                assert first == second and first.startswith("answer ")  # one connection
            finally:
                await trusted.aclose()
        finally:
            await provider.stop()

    _run(runner, scenario)


async def test_an_api_base_that_is_no_http_url_fails_each_call_as_unreachable() -> None:
    client = OpenAIClient(LlmConfig(model="openai/x", api_base="localhost:8000/v1"))
    for _ in range(2):
        with pytest.raises(ModelCallError) as info:
            await _ask(client)
        assert (info.value.status_code, info.value.detail) == (0, UNREACHABLE)
    await client.aclose()


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_an_answer_without_length_ends_with_the_connection_and_a_cut_head_fails(
    runner: str,
) -> None:
    async def scenario() -> None:
        provider = Provider()
        events = _answer("whole").split(b"\r\n")[1::2]  # the chunks' data, unframed
        async with _serving(provider) as client:
            provider.raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
            provider.raw += b"".join(events)
            assert await _ask(client) == "whole"
            provider.raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-str"
            with pytest.raises(ModelCallError) as info:
                await _ask(client)
            assert info.value.status_code == 0
            assert info.value.detail.startswith("the model's stream could not be read")

    _run(runner, scenario)


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_an_async_sink_gets_every_piece_in_order_while_reading_waits_for_it(runner: str) -> None:
    """What an async sink returns is awaited before the connection reads on (reading paused),
    so its pieces arrive in order however the socket splits the stream."""

    async def scenario() -> None:
        provider = Provider()
        words = [f"w{i} " for i in range(40)]
        events = b"".join(
            b"data: %s\n\n"
            % json.dumps({"choices": [{"index": 0, "delta": {"content": w}}]}).encode()
            for w in words
        )
        provider.raw = (
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (len(events) + 14)
            + events
            + b"data: [DONE]\n\n"
        )
        seen: list[str] = []

        async def sink(text: str) -> None:
            for _ in range(3):
                await asyncio.sleep(0)
            seen.append(text)

        async with _serving(provider) as client:
            reply = await client.complete(
                tier="default", messages=[{"role": "user", "content": "hi"}], on_chunk=sink
            )
            assert seen == words and reply.text == "".join(words)

    _run(runner, scenario)
