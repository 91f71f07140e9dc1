"""Plan mode over the WebSocket (process_service/lifecycle/plans.py, engines/plan_mode.py): Arthur
proposes a plan and waits; approved, it runs as a todo list whose changes arrive as
`todos-updated`, and a reconnecting client replays them; a rejected plan is not executed; a
worker's plan reaches the hub with `forwardedBy` and is approved from there; Eddie plans too,
with a step delegated to a project."""

from __future__ import annotations

import uuid
from typing import Any

from tests.eddie_support import act, call, eddie_says, hub, process_status
from tests.harness import System, WsClient
from tests.sessions_support import new_user
from vance.testing.scripted_llm import Rule
from vance.v1 import session_pb2 as spb


def _frames(client: WsClient, type_: str, plan_id: str) -> list[dict[str, Any]]:
    return [f for f in client.of_type(type_) if f["data"].get("planId") == plan_id]


def _statuses(frame: dict[str, Any]) -> list[str]:
    return [t["status"] for t in frame["data"]["todos"]]


async def _proposed(client: WsClient, title: str) -> dict[str, Any]:
    frame = await client.wait_for(
        lambda f: f["type"] == "plan-proposed" and f["data"]["title"] == title,
        timeout=45,
        what=f"plan-proposed {title}",
    )
    return dict(frame)


async def test_a_plan_proposed_approved_executed_and_replayed(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    _, token = await new_user(system)
    client = await system.connect(token)
    created = await client.ok("session-create", {"projectId": "demo"})
    chat = created["chatProcessId"]
    title = f"Refactor {m}"
    steps = ["Read the code", {"text": "Change the code"}, "Run the tests"]
    system.script(
        Rule(
            match_last=f"{m} refactor", tool_calls=[call("plan_propose", title=title, steps=steps)]
        ),
    )
    await client.ok("process-steer", {"content": f"{m} refactor"})
    proposed = await _proposed(client, title)
    plan_id = proposed["data"]["planId"]
    assert [s["text"] for s in proposed["data"]["steps"]] == [
        "Read the code",
        "Change the code",
        "Run the tests",
    ]
    assert [s["id"] for s in proposed["data"]["steps"]] == ["t1", "t2", "t3"]
    assert proposed["data"]["processId"] == chat and "forwardedBy" not in proposed
    await client.wait_for(
        lambda f: f["type"] == "process-mode-changed" and f["data"]["mode"] == "plan",
        what="plan mode",
    )
    shown = await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["meta"].get("action") == "plan_propose"
        ),
        what="the plan in the chat",
    )
    assert (
        shown["data"]["meta"]["planId"] == plan_id
        and "1. Read the code" in shown["data"]["content"]
    )
    await process_status(system, chat, "BLOCKED")

    # Approved: the engine executes it, todo by todo.
    done = f"Refactored {m}"
    system.script(
        Rule(
            match_last="plan-approved",
            match=title,
            tool_calls=[
                call("todo_update", id="t1", status="in_progress"),
                call("todo_update", id="t1", status="done"),
                call("todo_update", todos=[{"id": "t2", "status": "done"}]),
                call("todo_update", id="t3", status="skipped"),
            ],
        ),
        act("respond", "skipped", match=title, message=done, awaiting_user_input=False),
    )
    decided = await client.ok("plan-decision", {"planId": plan_id, "decision": "approve"})
    assert decided["mode"] == "execution" and decided["status"] == "approved"
    assert [t["status"] for t in decided["todos"]] == ["pending"] * 3
    await client.wait_for(
        lambda f: f["type"] == "chat-message-appended" and f["data"]["content"] == done,
        timeout=45,
        what="the executed plan's answer",
    )
    await client.wait_for(
        lambda f: f["type"] == "process-mode-changed" and f["data"]["mode"] == "normal",
        what="back to normal",
    )
    updates = [_statuses(f) for f in _frames(client, "todos-updated", plan_id)]
    assert updates == [
        ["pending", "pending", "pending"],
        ["in_progress", "pending", "pending"],
        ["done", "pending", "pending"],
        ["done", "done", "pending"],
        ["done", "done", "skipped"],
    ]
    modes = [f["data"]["mode"] for f in _frames(client, "process-mode-changed", plan_id)]
    assert modes == ["plan", "execution", "normal"]
    user_said = [
        f["data"]["content"]
        for f in client.of_type("chat-message-appended")
        if f["data"]["role"] == "user"
    ]
    assert "Approved the plan." in user_said
    # A second decision on the same plan is refused; so is an unknown plan.
    again = await client.request("plan-decision", {"planId": plan_id, "decision": "reject"})
    assert again["type"] == "error" and again["data"]["reason"] == "plan_not_pending"
    unknown = await client.request("plan-decision", {"planId": "plan_nope", "decision": "approve"})
    assert unknown["type"] == "error" and unknown["data"]["reason"] == "plan_not_found"
    await client.close()

    # A reconnecting client replays the plan, its todo list and its modes; plan-get reads it.
    again_client = await system.connect(token)
    await again_client.ok("session-resume", {"sessionId": created["sessionId"], "sinceSeq": 0})
    await again_client.wait_for(
        lambda f: (
            f["type"] == "process-mode-changed"
            and f["data"]["mode"] == "normal"
            and f["data"]["planId"] == plan_id
        ),
        what="the replayed mode change",
    )
    assert [_statuses(f) for f in _frames(again_client, "todos-updated", plan_id)] == updates
    assert _frames(again_client, "plan-proposed", plan_id)
    state = await again_client.ok("plan-get", {})
    assert state["planId"] == plan_id and state["status"] == "done" and state["mode"] == "normal"
    assert [t["status"] for t in state["todos"]] == ["done", "done", "skipped"]
    await again_client.close()


async def test_a_rejected_plan_is_not_executed(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    _, token = await new_user(system)
    client = await system.connect(token)
    created = await client.ok("session-create", {"projectId": "demo"})
    title = f"Migrate {m}"
    system.script(
        Rule(
            match_last=f"{m} migrate",
            tool_calls=[call("plan_propose", title=title, steps=["A", "B"])],
        ),
        act(
            "respond",
            "plan-rejected",
            match=title,
            message=f"Dropped {m}.",
            awaiting_user_input=False,
        ),
    )
    await client.ok("process-steer", {"content": f"{m} migrate"})
    plan_id = (await _proposed(client, title))["data"]["planId"]
    await process_status(system, created["chatProcessId"], "BLOCKED")
    bad = await client.request("plan-decision", {"planId": plan_id, "decision": "maybe"})
    assert bad["type"] == "error" and bad["data"]["reason"] == "bad_decision"
    decided = await client.ok(
        "plan-decision", {"planId": plan_id, "decision": "reject", "comment": "Not now"}
    )
    assert decided["status"] == "rejected" and decided["mode"] == "normal"
    await client.wait_for(
        lambda f: f["type"] == "chat-message-appended" and f["data"]["content"] == f"Dropped {m}.",
        timeout=45,
        what="the answer to the rejection",
    )
    read = system.model_requests("plan-rejected")[-1]["messages"][-1]["content"]
    assert "Not now" in read and title in read
    assert not _frames(client, "todos-updated", plan_id)  # never executed
    modes = [f["data"]["mode"] for f in _frames(client, "process-mode-changed", plan_id)]
    assert modes == ["plan", "normal"]
    await client.close()


async def test_a_worker_plan_reaches_the_hub_and_eddie_plans_with_a_delegation(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"pl_{m}"
    _, token = await new_user(system)
    client, opened = await hub(system, token, "web")
    title = f"Audit {m}"
    task = f"Audit task {m}"
    system.script(
        act("project_create", f"{m} audit", name=project, steerContent=task),
        act("answer", project, match=f"{m} audit", message=f"Auditing {m}."),
        Rule(
            match_last=task,
            tool_calls=[call("plan_propose", title=title, steps=["Scan", "Report"])],
        ),
        act("relay", "Plan proposed", match=title, source=project),
    )
    await client.ok("process-steer", {"content": f"{m} audit"})
    forwarded = await _proposed(client, title)
    worker = forwarded["data"]["processId"]
    assert forwarded["forwardedBy"] == {
        "engine": "eddie",
        "processId": opened["chatProcessId"],
        "viaSession": opened["sessionId"],
    }
    assert worker != opened["chatProcessId"]
    await process_status(system, worker, "BLOCKED")

    # The hub user approves the worker's plan (its process id from the frame); the worker's
    # todo changes arrive in the hub, forwarded too.
    system.script(
        Rule(
            match_last="plan-approved",
            match=title,
            tool_calls=[
                call(
                    "todo_update",
                    todos=[{"id": "t1", "status": "done"}, {"id": "t2", "status": "done"}],
                )
            ],
        ),
        act("respond", "t2", match=title, message=f"Audit {m} done", awaiting_user_input=False),
        Rule(match_last=f"Audit {m} done", match='type=\\"', text=f"Noted {m}.", repeat=False),
    )
    await client.ok(
        "plan-decision",
        {"processId": worker, "planId": forwarded["data"]["planId"], "decision": "approve"},
    )
    finished = await client.wait_for(
        lambda f: (
            f["type"] == "todos-updated"
            and f["data"]["processId"] == worker
            and _statuses(f) == ["done", "done"]
        ),
        timeout=45,
        what="the worker's todos in the hub",
    )
    assert finished["forwardedBy"]["processId"] == opened["chatProcessId"]
    # The worker's close reaches Eddie (through the worker's outbox, after its commit); Eddie
    # takes note before the user's next message, so that message is the last of its next turn.
    await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["role"] == "assistant"
            and f["data"]["content"] == f"Noted {m}."
        ),
        timeout=45,
        what="Eddie noting the finished worker",
    )

    # Eddie's own plan, one step delegated to the project; approved, Eddie steers the project.
    eddie_title = f"Follow up {m}"
    system.script(
        Rule(
            match_last=f"{m} follow up",
            tool_calls=[
                call(
                    "plan_propose",
                    title=eddie_title,
                    steps=[{"text": "Ask for a summary", "project": project}],
                )
            ],
        ),
    )
    await client.ok("process-steer", {"content": f"{m} follow up"})
    mine = await _proposed(client, eddie_title)
    assert "forwardedBy" not in mine and mine["data"]["steps"][0]["project"] == project
    spoken = await eddie_says(client, "I have a plan with 1 step")
    assert (
        spoken["meta"]["action"] == "plan_propose" and "Ask for a summary" in spoken["meta"]["info"]
    )
    system.script(
        Rule(
            match_last="plan-approved",
            match=eddie_title,
            tool_calls=[
                call("todo_update", id="t1", status="in_progress"),
                call("project_steer", project=project, message=f"Summarise {m}"),
                call("todo_update", id="t1", status="done"),
            ],
        ),
        act("answer", "done", match=eddie_title, message=f"Asked {m}."),
    )
    await client.ok("plan-decision", {"planId": mine["data"]["planId"], "decision": "approve"})
    await eddie_says(client, f"Asked {m}.", timeout=45)
    sessions = await system.sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id="default", project_id=project)
    )
    assert sessions.sessions[0].chat_process_id == worker
    await client.close()
