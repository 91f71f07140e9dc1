"""The provider's limits (vance/llm_limits.py) against the scripted server over real HTTP: a
refusal with Retry-After is waited out, a refusal that goes on fails saying why, and a burst
above a configured concurrency or tokens-per-minute limit waits instead of failing."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import pytest

from vance.config import LlmConfig, ModelLimits
from vance.llm import ModelCallError, ModelClient, make_model_client
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm


@pytest.fixture
def server() -> Iterator[ThreadedScriptedLlm]:
    """A scripted model of the test's own, so nothing else's calls count."""
    llm = ThreadedScriptedLlm().start()
    yield llm
    llm.stop()


def client(server: ThreadedScriptedLlm, **settings: object) -> ModelClient:
    config = LlmConfig.model_validate(
        {"model": "openai/scripted", "api_base": server.base_url, "api_key": "k", **settings}
    )
    return make_model_client(config)


async def ask(llm: ModelClient, m: str, padding: str = "") -> str:
    reply = await llm.complete(
        tier="default:chat", messages=[{"role": "user", "content": f"{m} {padding}"}]
    )
    return reply.text


def calls(server: ThreadedScriptedLlm, m: str) -> int:
    return sum(1 for r in list(server.script.requests) if m in str(r))


async def test_a_429_with_retry_after_is_waited_out_and_the_call_succeeds(
    server: ThreadedScriptedLlm,
) -> None:
    m = uuid.uuid4().hex[:8]
    server.script.add(
        Rule(match=m, fail_status=429, retry_after_s=0.3), Rule(match=m, text=f"fine {m}")
    )
    llm = client(server)
    started = time.monotonic()
    assert await ask(llm, m) == f"fine {m}"
    assert calls(server, m) == 2
    assert time.monotonic() - started >= 0.3  # the provider's Retry-After was honoured
    await llm.aclose()


async def test_a_provider_that_stays_overloaded_fails_the_call_saying_why(
    server: ThreadedScriptedLlm,
) -> None:
    m = uuid.uuid4().hex[:8]
    server.script.add(Rule(match=m, fail_status=503, retry_after_s=0, repeat=True))
    llm = client(server, retries=2)
    with pytest.raises(ModelCallError) as failed:
        await ask(llm, m)
    assert failed.value.status_code == 503
    assert "gave up after 3 tries" in str(failed.value)
    assert calls(server, m) == 3
    await llm.aclose()


async def test_a_bad_request_is_not_tried_again(server: ThreadedScriptedLlm) -> None:
    m = uuid.uuid4().hex[:8]
    server.script.add(Rule(match=m, fail_status=400, repeat=True))
    llm = client(server)
    with pytest.raises(ModelCallError):
        await ask(llm, m)
    assert calls(server, m) == 1
    await llm.aclose()


async def test_a_burst_above_the_concurrency_limit_waits_its_turn(
    server: ThreadedScriptedLlm,
) -> None:
    m = uuid.uuid4().hex[:8]
    server.script.add(Rule(match=m, text="ok", delay_ms=100, repeat=True))
    llm = client(server, limits={"openai/scripted": ModelLimits(concurrency=2).model_dump()})
    answers = await asyncio.gather(*(ask(llm, m) for _ in range(6)))
    assert answers == ["ok"] * 6
    assert server.script.max_in_flight == 2
    await llm.aclose()


async def test_a_burst_above_tokens_per_minute_waits_instead_of_failing(
    server: ThreadedScriptedLlm,
) -> None:
    m = uuid.uuid4().hex[:8]
    server.script.add(Rule(match=m, text="ok", repeat=True))
    # Each call is estimated at about 10,000 prompt tokens; 60,000 a minute lets the first
    # five through at once, and the sixth waits for the bucket to refill (about a second).
    llm = client(
        server, limits={"openai/scripted": ModelLimits(tokens_per_minute=60_000).model_dump()}
    )
    padding = "x" * 40_000
    started = time.monotonic()
    answers = await asyncio.gather(*(ask(llm, m, padding) for _ in range(6)))
    assert answers == ["ok"] * 6
    assert time.monotonic() - started >= 0.8
    await llm.aclose()


async def test_a_stream_that_is_not_json_is_a_clear_model_error() -> None:
    """A provider whose stream cannot be read fails the call as a ModelCallError naming why,
    never as a bare ValueError out of the client."""

    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
            b"data: {not json\n\n"
        )
        await writer.drain()
        writer.close()

    bad = await asyncio.start_server(garbage, "127.0.0.1", 0)
    port = bad.sockets[0].getsockname()[1]
    config = LlmConfig(model="openai/x", api_base=f"http://127.0.0.1:{port}/v1", retries=0)
    llm = make_model_client(config)
    with pytest.raises(ModelCallError) as failed:
        await ask(llm, "anything")
    assert "could not be read" in str(failed.value)
    await llm.aclose()
    bad.close()
    await bad.wait_closed()
