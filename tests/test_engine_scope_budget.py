"""The engine's scope and budgets (issue 27 item 3; seed 000 §2.2, §3.8): the project's group
in the scope and Arthur's `<session-context>`, `arthur.llmProvider` / `arthur.llmModel` as
settings choosing Arthur's model, and Ford's history cut by the token budget with the note
Arthur's gets."""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import pytest

from tests.eddie_support import call
from tests.harness import System, eventually
from tests.knowledge_support import block, new_project, set_project, system_prompts
from tests.test_arthur_flow import assistant_says
from vance.testing.scripted_llm import Rule


async def test_the_group_is_in_the_session_context_and_arthurs_model_is_a_setting(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    project = await new_project(system, group=f"Home{m}")
    await set_project(
        system, project, {"arthur.llmProvider": "openai", "arthur.llmModel": f"chat-{m}"}
    )
    with pytest.raises(grpc.aio.AioRpcError) as bad:
        await set_project(system, project, {"arthur.llmModel": "two words"})
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    client = await system.connect()
    await client.ok("session-create", {"projectId": project})
    await assistant_says(client, "Hi, I'm Arthur")
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} where am I"})
    await assistant_says(client, f"{m} where am I")
    prompt = (await eventually(lambda: system_prompts(system, f"{m} where am I")))[-1]
    context = block(prompt, "session-context")
    assert f"Group: Home{m}" in context and f"Project: {project}" in context, context
    (request,) = system.model_requests(f"{m} where am I")
    assert request["model"] == f"chat-{m}"
    await client.close()


async def test_fords_history_is_cut_by_the_token_budget_with_a_note(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    project = await new_project(system)
    await set_project(system, project, {"arthur.maxContextTokens": "1000"})
    client = await system.connect()
    await client.ok("session-create", {"projectId": project})
    await assistant_says(client, "Hi, I'm Arthur")
    goal = f"goal-{m} " + "lorem ipsum " * 200  # about 600 tokens
    answer = f"answer-{m} " + "dolor sit " * 240  # about 600 tokens
    system.script(
        Rule(
            match_last=f"spawn {m}",
            tool_calls=[call("process_create", name=f"f{m}", goal=goal, recipe="ford")],
        ),
        Rule(
            match_last=f"goal-{m}",
            tool_calls=[call("respond", message=f"which one, {m}?", awaiting_user_input=True)],
        ),
    )
    await client.ok("process-steer", {"processName": "chat", "content": f"spawn {m}"})
    await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["processName"] == f"f{m}"
            and f"which one, {m}?" in f["data"]["content"]
        ),
        timeout=30,
        what="Ford's question",
    )
    await client.ok("process-steer", {"processName": f"f{m}", "content": answer})

    def fords() -> list[dict[str, Any]]:
        return [
            r
            for r in system.model_requests(f"answer-{m}")
            if str(r["messages"][0].get("content", "")).startswith("You are Ford")
        ]

    messages = (await eventually(fords, timeout=30, what="Ford's turn"))[-1]["messages"]
    texts = [str(x.get("content") or "") for x in messages]
    assert any(t.startswith("Earlier conversation was truncated.") for t in texts), texts
    assert not any(f"goal-{m}" in t for t in texts)
    assert f"answer-{m}" in texts[-1]
    await client.close()
