"""A chat's history reaches the model whole and in order on every turn, however it got to the
worker: brought by the assignment, held by the worker from its earlier turns of the process
(engine_worker/chat_held.py), or read with ListChatMessages."""

from __future__ import annotations

import uuid

from tests.harness import System
from tests.test_arthur_flow import assistant_says
from tests.test_tools import chat_session
from vance.testing.scripted_llm import Rule


async def test_every_turn_sends_the_model_the_whole_chat_in_order(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    client, _ = await chat_session(system)
    said: list[tuple[str, str]] = []
    for n in range(1, 9):
        question, answer = f"{m} question {n}", f"{m} answer {n}"
        system.script(Rule(match_last=question, text=answer))
        await client.ok("process-steer", {"processName": "chat", "content": question})
        await assistant_says(client, answer)
        said += [("user", question), ("assistant", answer)]
        request = system.model_requests(question)[-1]
        seen = [
            (str(msg["role"]), str(msg["content"]))
            for msg in request["messages"]
            if msg["role"] in ("user", "assistant") and m in str(msg.get("content"))
        ]
        # Everything said before this turn, then this turn's question.
        assert seen == said[:-1], f"turn {n}"
    await client.close()
