"""Answers given through `respond` (as real models answer) stream to the client while the model
writes them: chunk frames before the final message, which is unchanged."""

from __future__ import annotations

import uuid
from typing import Any

from tests.eddie_support import act, eddie_says, hub
from tests.harness import System, WsClient
from tests.sessions_support import new_user
from vance.testing.scripted_llm import Rule


def _chunks_and_answer(client: WsClient, pid: str, text: str) -> tuple[list[dict[str, Any]], int]:
    """The chunk frames of the chat process before its answer, and the answer's index."""
    answer = next(
        i
        for i, f in enumerate(client.frames)
        if f["type"] == "chat-message-appended"
        and f["data"]["role"] == "assistant"
        and f["data"]["content"] == text
    )
    chunks = [
        f
        for f in client.frames[:answer]
        if f["type"] == "chat-message-stream-chunk" and f["data"]["thinkProcessId"] == pid
    ]
    return chunks, answer


async def test_a_respond_answer_arrives_in_chunks_as_the_model_writes_it(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    message = f"Here is a longer answer {m}, written a few words at a time: " + " ".join(
        f"word{i}" for i in range(40)
    )
    system.script(
        Rule(
            match_last=f"ask {m}",
            tool_calls=[
                {"name": "respond", "arguments": {"message": message, "awaiting_user_input": False}}
            ],
            arg_chunks=10,
            stream_ms=900,  # about 100 ms between pieces: several coalescing windows
        )
    )
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    pid = created["chatProcessId"]
    mark = len(client.frames)
    await client.ok("process-steer", {"processName": "chat", "content": f"ask {m}"})
    await client.wait_for(
        lambda f: f["type"] == "chat-message-appended" and f["data"]["content"] == message,
        timeout=30,
        what="the final answer",
    )
    chunks, _ = _chunks_and_answer(client, pid, message)
    chunks = [f for f in chunks if client.frames.index(f) >= mark]
    # Streamed: more than one chunk frame, in order, adding up to exactly the message.
    assert len(chunks) >= 2, [f["data"]["chunk"] for f in chunks]
    assert "".join(f["data"]["chunk"] for f in chunks) == message
    seqs = [f["seq"] for f in chunks]
    assert seqs == sorted(seqs)
    # Only the message streams, never the tool call's JSON around it.
    assert not any("awaiting_user_input" in f["data"]["chunk"] for f in chunks)
    await client.close()


async def test_a_plain_text_answer_streams_too(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    pid = created["chatProcessId"]
    mark = len(client.frames)
    await client.ok("process-steer", {"processName": "chat", "content": f"quick {m}"})
    text = f"You said: quick {m}"
    await client.wait_for(
        lambda f: f["type"] == "chat-message-appended" and f["data"]["content"] == text,
        timeout=30,
        what="the echo",
    )
    chunks, _ = _chunks_and_answer(client, pid, text)
    assert "".join(f["data"]["chunk"] for f in chunks if client.frames.index(f) >= mark) == text
    await client.close()


async def test_eddies_spoken_answer_streams_but_not_its_info(system: System) -> None:
    """Eddie's `answer` streams its spoken `message`; the Markdown `info` beside it never does."""
    m = uuid.uuid4().hex[:8]
    spoken = f"The build for {m} is green and the release notes are ready for you to read"
    rule = act("answer", f"how is {m}", message=spoken, info=f"**notes** {m}-info")
    rule.arg_chunks, rule.stream_ms = 8, 700
    system.script(rule)
    _, token = await new_user(system)
    client, opened = await hub(system, token)
    mark = len(client.frames)
    await client.ok("process-steer", {"processName": "chat", "content": f"how is {m}"})
    said = await eddie_says(client, spoken)
    chunks, _ = _chunks_and_answer(client, opened["chatProcessId"], said["content"])
    streamed = "".join(f["data"]["chunk"] for f in chunks if client.frames.index(f) >= mark)
    assert streamed == spoken
    assert len([f for f in chunks if client.frames.index(f) >= mark]) >= 2
    await client.close()
