"""Seed 000 §4 replayed over the WebSocket: Arthur delegates to a worker, relays its question,
forwards the answer, and reports the result. Statuses of both processes checked at every step."""

from __future__ import annotations

import uuid
from typing import Any

from tests.harness import System, WsClient, eventually
from vance.testing.scripted_llm import Rule


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


def respond(message: str, awaiting: bool = False) -> Rule:
    return Rule(tool_calls=[call("respond", message=message, awaiting_user_input=awaiting)])


def child_asks(
    m: str, say: str, goal: str, name: str, question: str, *, first: tuple[dict[str, Any], ...] = ()
) -> list[Rule]:
    """Arthur, steered with `say`, makes the calls in `first`, starts `name` (recipe analyze)
    on `goal` and says it started; the child asks `question`, awaiting the user, and Arthur
    relays that `name` asks."""
    return [
        Rule(
            match_last=say,
            tool_calls=[*first, call("process_create", recipe="analyze", goal=goal, name=name)],
        ),
        Rule(
            match=say,
            match_last="tool_call_id",
            tool_calls=[call("respond", message=f"Started {m}.", awaiting_user_input=False)],
        ),
        Rule(
            match_last=goal,
            tool_calls=[call("respond", message=question, awaiting_user_input=True)],
        ),
        Rule(
            match_last=question,
            tool_calls=[call("respond", message=f"{name} asks ({m})", awaiting_user_input=False)],
        ),
    ]


async def statuses(client: WsClient) -> dict[str, str]:
    listed = await client.ok("process-list", {"includeTerminated": True})
    return {p["processName"]: p["status"] for p in listed["processes"]}


async def wait_statuses(client: WsClient, expected: dict[str, str]) -> None:
    async def check() -> bool:
        return await statuses(client) == expected

    await eventually(check, timeout=30, what=f"statuses {expected}")


async def assistant_says(client: WsClient, text: str) -> dict[str, Any]:
    return await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["role"] == "assistant"
            and f["data"]["processName"] == "chat"
            and text in f["data"]["content"]
        ),
        timeout=30,
        what=f"Arthur saying {text!r}",
    )


async def test_the_literature_review_example(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    goal = f"Analyze 5 PDFs for contradictions {m}"
    question = f"May I assume the paper Vaswani2017 as baseline? ({m})"
    answer = f"Yes, use Vaswani2017 as baseline ({m})"
    system.script(
        # T+30s: Arthur delegates, then confirms.
        Rule(
            match_last=f"{m} Analyze the 5 PDFs",
            tool_calls=[call("process_create", recipe="analyze", goal=goal, name="paper-diff")],
        ),
        Rule(
            match=m,
            match_last="paper-diff",
            text="",
            tool_calls=[
                call(
                    "respond",
                    awaiting_user_input=False,
                    message="Starting the analysis of the 5 PDFs as paper-diff. I'll let you know.",
                )
            ],
        ),
        # T+3min: the worker asks; Arthur relays the question.
        Rule(
            match_last=goal,
            tool_calls=[call("respond", message=question, awaiting_user_input=True)],
        ),
        Rule(
            match_last="May I assume",
            tool_calls=[
                call("respond", message=f"paper-diff asks: {question}", awaiting_user_input=False)
            ],
        ),
        # T+4min: the user answers; Arthur forwards it.
        Rule(
            match_last=f"{m} Yes, do it.",
            tool_calls=[call("process_steer", name="paper-diff", content=answer)],
        ),
        Rule(
            match=f"{m} Yes, do it.",
            match_last="outcome",
            tool_calls=[call("respond", message="Forwarded.", awaiting_user_input=False)],
        ),
        # T+15min: the worker finishes; Arthur reports.
        Rule(
            match_last=answer,
            tool_calls=[
                call("respond", message=f"3 contradictions found ({m})", awaiting_user_input=False)
            ],
        ),
        Rule(
            match_last=f"3 contradictions found ({m})",
            tool_calls=[
                call(
                    "respond",
                    message="paper-diff is finished: three contradictions.",
                    awaiting_user_input=False,
                )
            ],
        ),
    )
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    await wait_statuses(client, {"chat": "IDLE"})

    # T+30s
    await client.ok(
        "process-steer",
        {"processName": "chat", "content": f"{m} Analyze the 5 PDFs in folder /papers/"},
    )
    await assistant_says(client, "Starting the analysis")
    listed = await client.ok("process-list", {"includeTerminated": True})
    worker = next(p for p in listed["processes"] if p["processName"] == "paper-diff")
    assert worker["engine"] == "ford" and worker["recipe"] == "analyze"
    assert worker["parentProcessId"] == created["chatProcessId"]
    assert worker["goal"] == goal

    # T+3min: the worker is BLOCKED on its question; Arthur relays it and waits for the user.
    await assistant_says(client, f"paper-diff asks: {question}")
    await wait_statuses(client, {"chat": "IDLE", "paper-diff": "BLOCKED"})

    # T+4min
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} Yes, do it."})
    await assistant_says(client, "Forwarded.")

    # T+15min
    await assistant_says(client, "paper-diff is finished")
    await wait_statuses(client, {"chat": "IDLE", "paper-diff": "CLOSED"})
    final = await client.ok("process-list", {"includeTerminated": True})
    done = next(p for p in final["processes"] if p["processName"] == "paper-diff")
    assert done["closeReason"] == "DONE"
    # The worker's whole life, as the client saw it.
    worker_statuses = [
        f["data"]["status"]
        for f in client.frames
        if f["type"] == "process-progress"
        and f["data"]["kind"] == "STATUS"
        and f["data"]["processName"] == "paper-diff"
    ]
    assert worker_statuses == ["INIT", "RUNNING", "BLOCKED", "RUNNING", "CLOSED"]
    # The worker's transcript holds the goal, its question, the answer and its result.
    transcript = await client.ok("process-messages", {"processName": "paper-diff"})
    assert [x["content"] for x in transcript["messages"]] == [
        goal,
        question,
        answer,
        f"3 contradictions found ({m})",
    ]
    # Arthur saw the worker only through tagged events, never as the user.
    requests = system.model_requests(m)
    tagged = [
        msg["content"]
        for r in requests
        for msg in r["messages"]
        if msg["role"] == "user" and msg["content"].startswith("<process-event")
    ]
    assert any('type="blocked"' in t and question in t for t in tagged)
    assert any('type="done"' in t and "3 contradictions" in t for t in tagged)
    await client.close()
