"""Long chats (seed 000 §3.8): the history is cut only by the `arthur.maxContextTokens`
budget, always with a note, and what is cut rolls into the process's `chatHistorySummary`,
which the note carries."""

from __future__ import annotations

import uuid

from tests.harness import System, eventually
from tests.test_arthur_flow import assistant_says
from vance.internal.v1 import session_internal_pb2 as sipb


async def test_a_long_chat_is_cut_by_the_budget_with_a_rolling_summary(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    scope = sipb.SettingScope(
        tenant_id="default",
        project_id="demo",
        session_id=created["sessionId"],
        process_id=created["chatProcessId"],
    )
    # A small budget; no project memory in the prompt, so other tests' records do not count.
    for key, value in (
        ("arthur.maxContextTokens", "1000"),
        ("arthur.includeProjectMemorySummary", "false"),
    ):
        await system.sessions_internal.SetEngineSetting(
            sipb.SetEngineSettingRequest(
                scope=scope, level=sipb.SETTING_LEVEL_SESSION, key=key, value=value
            )
        )
    # Each exchange costs ~250 tokens (the scripted model echoes the message).
    filler = "lorem ipsum " * 40
    texts = [f"{m} topic-{i} {filler}" for i in range(6)]
    for text in texts:
        await client.ok("process-steer", {"processName": "chat", "content": text})
        await assistant_says(client, f"{m} topic-{texts.index(text)} ")

    last = system.model_requests(texts[-1])[-1]["messages"]
    notes = [x for x in last if x["role"] == "system" and "truncated" in str(x["content"])]
    assert len(notes) == 1, [x["role"] for x in last]
    assert f"user: {m} topic-0" in notes[0]["content"]
    assert sum(len(str(x.get("content") or "")) for x in last) // 4 < 1000 + 200
    # The newest message before this turn is still there word for word.
    assert any(
        f"You said: {m} topic-4" in str(x.get("content")) and x["role"] == "assistant" for x in last
    )

    async def summary() -> str:
        chat = await system.process(created["chatProcessId"])
        return str(chat.chat_history_summary) if f"{m} topic-0" in chat.chat_history_summary else ""

    assert "user: " in await eventually(summary, what="the rolling summary on the process")
    await client.close()
