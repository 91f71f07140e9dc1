"""The three model clients (vance/llm.py, vance/llm_http.py) against the scripted
OpenAI-compatible server: litellm, the direct aiohttp path and the openai SDK give the same
replies, tool calls, usage and errors, and `llm.client` decides which one a model goes through.
The system's engine turns run through the direct aiohttp path (the tests' model is
`openai/scripted`); session_service's suggestions through litellm."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from vance.config import LlmConfig, load_config
from vance.llm import (
    LiteLLMClient,
    ModelCallError,
    ModelClient,
    ModelReply,
    OpenAIClient,
    OpenAISdkClient,
    RoutingClient,
    make_model_client,
    uses_litellm,
    uses_openai_sdk,
)
from vance.llm_limits import LimitedClient
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm

TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "process_create",
        "description": "spawn a worker",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}


def _config(llm: ThreadedScriptedLlm) -> LlmConfig:
    return LlmConfig(model="openai/scripted", api_base=llm.base_url, api_key="k", timeout_s=30)


def _clients(config: LlmConfig) -> list[ModelClient]:
    return [LiteLLMClient(config), OpenAIClient(config), OpenAISdkClient(config)]


async def _call(client: ModelClient, content: str) -> tuple[ModelReply, list[str]]:
    chunks: list[str] = []

    async def sink(text: str) -> None:
        chunks.append(text)

    reply = await client.complete(
        tier="default:chat",
        messages=[{"role": "user", "content": content}],
        tools=[TOOL],
        on_chunk=sink,
    )
    return reply, chunks


async def test_both_clients_give_the_same_reply_tool_calls_and_usage(
    llm: ThreadedScriptedLlm,
) -> None:
    m = f"m-{uuid.uuid4().hex[:10]}"
    llm.script.add(
        Rule(
            match=m,
            text="two tools and a few words",
            tool_calls=[
                {"name": "process_create", "arguments": {"name": "a"}},
                {"name": "process_create", "arguments": {"name": "b"}},
            ],
            repeat=True,
        )
    )
    config = _config(llm)
    via_litellm = await _call(LiteLLMClient(config), m)
    http = OpenAIClient(config)
    direct = await _call(http, m)
    await http.aclose()
    sdk = OpenAISdkClient(config)
    via_sdk = await _call(sdk, m)
    await sdk.aclose()
    assert direct == via_litellm == via_sdk
    # The same request reached the server: model, messages, tools, streaming with usage.
    sent = [r for r in llm.script.requests if m in str(r.get("messages"))][-3:]
    fields = ("model", "messages", "tools", "stream", "stream_options")
    assert [{k: r.get(k) for k in fields} for r in sent] == [
        {k: sent[0].get(k) for k in fields}
    ] * 3
    assert sent[0]["model"] == "scripted" and sent[0]["tools"] == [TOOL]
    reply, chunks = direct
    assert reply.text == "two tools and a few words" == "".join(chunks)
    assert len(chunks) == 3  # streamed as the server sent it
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("process_create", {"name": "a"}),
        ("process_create", {"name": "b"}),
    ]
    assert reply.finish_reason == "tool_calls"
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    assert reply.usage.completion_tokens > 0


async def test_both_clients_raise_the_same_error_for_a_failed_call(
    llm: ThreadedScriptedLlm,
) -> None:
    m = f"m-{uuid.uuid4().hex[:10]}"
    llm.script.add(Rule(match=m, fail_status=400, repeat=True))
    config = _config(llm)
    errors = []
    for client in _clients(config):
        with pytest.raises(ModelCallError) as info:
            await _call(client, m)
        await client.aclose()
        errors.append((info.value.status_code, info.value.detail))
    assert [status for status, _ in errors] == [400, 400, 400]
    assert all("scripted failure" in detail for _, detail in errors)


async def test_an_unreachable_endpoint_is_the_same_error_from_both() -> None:
    config = LlmConfig(
        model="openai/scripted", api_base="http://127.0.0.1:9/v1", api_key="k", timeout_s=5
    )
    for client in _clients(config):
        with pytest.raises(ModelCallError) as info:
            await _call(client, "hello")
        await client.aclose()
        assert info.value.status_code == 0


def test_the_client_setting_picks_the_path_per_model() -> None:
    auto = load_config(env={"VANCE_LLM_MODEL": "openai/gpt-4o-mini"}).llm
    limited = make_model_client(auto)
    assert isinstance(limited, LimitedClient)  # the provider's limits in front of every path
    routed = limited.inner
    assert isinstance(routed, RoutingClient)
    assert isinstance(routed.client_for("default:chat"), OpenAIClient)
    assert uses_openai_sdk(auto) and not uses_litellm(auto)
    other = load_config(env={"VANCE_LLM_MODEL": "anthropic/claude-3-5-haiku"}).llm
    assert isinstance(RoutingClient(other).client_for("default:chat"), LiteLLMClient)
    assert uses_litellm(other) and not uses_openai_sdk(other)
    sdk = load_config(
        env={"VANCE_LLM_MODEL": "openai/gpt-4o-mini", "VANCE_LLM_CLIENT": "openai-sdk"}
    ).llm
    assert isinstance(RoutingClient(sdk).client_for("default:chat"), OpenAISdkClient)
    forced = load_config(
        env={"VANCE_LLM_MODEL": "openai/gpt-4o-mini", "VANCE_LLM_CLIENT": "litellm"}
    ).llm
    forced_client = make_model_client(forced)
    assert isinstance(forced_client, LimitedClient)
    assert isinstance(forced_client.inner, LiteLLMClient)
    assert uses_litellm(forced) and not uses_openai_sdk(forced)
