"""Tools: pools pruned by profile, failures as results, the respond rules, stopping a child,
client commands without a model turn, structured options."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.harness import System, WsClient
from tests.test_arthur_flow import assistant_says, call, wait_statuses
from tool_service.pool import resolve_pool
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import tool_pb2_grpc
from vance.protoutil import dict_to_struct
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def chat_session(system: System, profile: str = "") -> tuple[WsClient, dict[str, Any]]:
    client = await system.connect()
    data = {"projectId": "demo", **({"profile": profile} if profile else {})}
    created = await client.ok("session-create", data)
    await wait_statuses(client, {"chat": "IDLE"})
    return client, created


def test_pool_selects_by_name_glob_and_label_then_prunes_by_profile() -> None:
    registry = [
        {"_id": "process_list", "labels": ["@read"]},
        {"_id": "process_stop", "labels": ["@write"]},
        {"_id": "shell_exec", "labels": ["@write"], "allowed_profiles": ["foot"]},
        {"_id": "web_fetch", "labels": ["@read"], "allowed_profiles": ["web", "foot"]},
    ]

    def names(pool: list[dict[str, Any]]) -> list[str]:
        return [str(s["_id"]) for s in pool]

    assert names(
        resolve_pool(registry, engine_tools=["process_*"], add=[], remove=[], profile="web")
    ) == ["process_list", "process_stop"]
    assert names(
        resolve_pool(
            registry,
            engine_tools=["process_*"],
            add=["@read"],
            remove=["process_stop"],
            profile="mobile",
        )
    ) == ["process_list"]
    assert names(
        resolve_pool(registry, engine_tools=["@write"], add=[], remove=[], profile="foot")
    ) == ["process_stop", "shell_exec"]
    assert names(
        resolve_pool(registry, engine_tools=["@write"], add=[], remove=[], profile="web")
    ) == ["process_stop"]


async def test_a_tool_the_profile_may_not_use_is_never_shown_to_the_model(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    tool = f"process_zz_preview_{m}"
    stub = tool_pb2_grpc.ToolServiceStub(system.channel("tool_service"))
    await stub.RegisterTools(
        tpb.RegisterToolsRequest(
            owner="test",
            address="127.0.0.1:9",
            tools=[
                tpb.ToolSpec(
                    name=tool,
                    description="web only",
                    allowed_profiles=["web"],
                    parameters=dict_to_struct({"type": "object", "properties": {}}),
                )
            ],
        )
    )
    seen: dict[str, list[str]] = {}
    for profile in ("web", "foot"):
        system.script(Rule(match_last=f"{m} {profile}", text="ok"))
        client, _ = await chat_session(system, profile)
        await client.ok("process-steer", {"processName": "chat", "content": f"{m} {profile}"})
        await assistant_says(client, "ok")
        request = system.model_requests(f"{m} {profile}")[-1]
        seen[profile] = [t["function"]["name"] for t in request["tools"]]
        await client.close()
    assert tool in seen["web"] and tool not in seen["foot"]
    assert "process_create" in seen["foot"] and "respond" in seen["foot"]


async def test_a_tool_registered_between_two_turns_is_in_the_next_turns_pool(
    system: System,
) -> None:
    """Workers keep resolved pools (engine_worker/tools.py) while they watch the registry; a
    registration drops them, so the very next turn offers the new tool."""
    m = uuid.uuid4().hex[:8]
    tool = f"process_zz_fresh_{m}"
    client, _ = await chat_session(system)
    for n in (1, 2):
        system.script(Rule(match_last=f"{m} turn {n}", text=f"ok {n}"))
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} turn 1"})
    await assistant_says(client, "ok 1")
    before = [t["function"]["name"] for t in system.model_requests(f"{m} turn 1")[-1]["tools"]]
    assert tool not in before and "process_create" in before
    await tool_pb2_grpc.ToolServiceStub(system.channel("tool_service")).RegisterTools(
        tpb.RegisterToolsRequest(
            owner="test",
            address="127.0.0.1:9",
            tools=[
                tpb.ToolSpec(
                    name=tool,
                    description="registered while the chat runs",
                    parameters=dict_to_struct({"type": "object", "properties": {}}),
                )
            ],
        )
    )
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} turn 2"})
    await assistant_says(client, "ok 2")
    after = [t["function"]["name"] for t in system.model_requests(f"{m} turn 2")[-1]["tools"]]
    assert tool in after
    await client.close()


async def test_tool_failures_come_back_as_results_and_the_turn_goes_on(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(
        Rule(
            match_last=f"{m} poke",
            tool_calls=[call("process_steer", name="nobody", content="hello")],
        ),
        Rule(
            match=f"{m} poke",
            match_last="nobody",
            tool_calls=[
                call("respond", message="There is no such worker.", awaiting_user_input=False)
            ],
        ),
    )
    client, _ = await chat_session(system)
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} poke"})
    await assistant_says(client, "There is no such worker.")
    second = system.model_requests(f"{m} poke")[-1]
    error = json.loads(tool_messages(second)[-1])
    assert error["status"] == "ERROR" and "no process named 'nobody'" in error["error"]
    await wait_statuses(client, {"chat": "IDLE"})
    # Routing failures are results too, never broken calls.
    stub = tool_pb2_grpc.ToolServiceStub(system.channel("tool_service"))
    unknown = await stub.InvokeTool(tpb.InvokeToolRequest(tool_name=f"missing_{m}"))
    assert unknown.status == pb.TOOL_CALL_STATUS_ERROR and "unknown tool" in unknown.error
    await stub.RegisterTools(
        tpb.RegisterToolsRequest(
            owner="gone", address="127.0.0.1:9", tools=[tpb.ToolSpec(name=f"gone_{m}")]
        )
    )
    gone = await stub.InvokeTool(tpb.InvokeToolRequest(tool_name=f"gone_{m}"))
    assert gone.status == pb.TOOL_CALL_STATUS_ERROR and f"gone_{m}" in gone.error
    await client.close()


async def test_respond_must_stand_alone(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(
        Rule(
            match_last=f"{m} status?",
            tool_calls=[call("process_list"), call("respond", message="too early")],
        ),
        Rule(
            match=f"{m} status?",
            match_last="stand alone",
            tool_calls=[call("respond", message=f"Nothing runs ({m}).", awaiting_user_input=False)],
        ),
    )
    client, _ = await chat_session(system)
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} status?"})
    await assistant_says(client, f"Nothing runs ({m}).")
    second = system.model_requests(f"{m} status?")[-1]
    results = tool_messages(second)
    assert '"processes"' in results[-2]  # process_list ran
    assert "respond must stand alone" in results[-1]
    history = await client.ok("process-messages", {"processName": "chat"})
    assert "too early" not in [x["content"] for x in history["messages"]]
    await client.close()


async def test_stopping_a_child_sends_no_event_back_and_self_stop_is_refused(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(
        Rule(
            match_last=f"{m} start",
            tool_calls=[
                call("process_create", name="slowpoke", goal=f"{m} slow goal", recipe="ford")
            ],
        ),
        Rule(
            match=f"{m} start",
            match_last="slowpoke",
            tool_calls=[call("respond", message="started", awaiting_user_input=False)],
        ),
        Rule(match_last=f"{m} slow goal", text="finally", delay_ms=4000),
        Rule(
            match_last=f"{m} stop it",
            tool_calls=[call("process_stop", name="slowpoke"), call("process_stop", name="chat")],
        ),
        Rule(
            match=f"{m} stop it",
            match_last="cannot stop itself",
            tool_calls=[call("respond", message="stopped", awaiting_user_input=False)],
        ),
        Rule(match_last=f"{m} anything new?", text="no news"),
    )
    client, _ = await chat_session(system)
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} start"})
    await assistant_says(client, "started")
    await wait_statuses(client, {"chat": "IDLE", "slowpoke": "RUNNING"})
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} stop it"})
    await assistant_says(client, "stopped")
    await wait_statuses(client, {"chat": "IDLE", "slowpoke": "CLOSED"})
    listed = await client.ok("process-list", {"includeTerminated": True})
    assert {p["processName"]: p["closeReason"] for p in listed["processes"]}["slowpoke"] == (
        "STOPPED"
    )
    results = tool_messages(system.model_requests(f"{m} stop it")[-1])
    assert '"closeReason": "STOPPED"' in results[-2]
    assert "cannot stop itself" in results[-1]
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} anything new?"})
    await assistant_says(client, "no news")
    last = system.model_requests(f"{m} anything new?")[-1]
    events = [
        x["content"]
        for x in last["messages"]
        if x["role"] == "user" and "<process-event" in str(x["content"])
    ]
    assert events == []
    await client.close()


async def test_a_client_command_reaches_its_target_without_a_model_turn(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(
        Rule(
            match_last=f"{m} go",
            tool_calls=[call("process_create", name="asker", goal=f"{m} ask first", recipe="ford")],
        ),
        Rule(
            match=f"{m} go",
            match_last="asker",
            tool_calls=[call("respond", message="on it", awaiting_user_input=False)],
        ),
        Rule(
            match_last=f"{m} ask first",
            tool_calls=[
                call(
                    "respond",
                    message="Approve the plan?",
                    awaiting_user_input=True,
                    options=[{"label": "Approve", "description": "go ahead"}, {"label": "Reject"}],
                )
            ],
        ),
        Rule(match_last="Approve the plan?", text="asker waits for your approval"),
        Rule(
            match_last=f"approved {m}",
            tool_calls=[call("respond", message="done after approval", awaiting_user_input=False)],
        ),
        Rule(match_last="done after approval", text="asker finished"),
    )
    client, _ = await chat_session(system)
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} go"})
    await assistant_says(client, "asker waits for your approval")
    await wait_statuses(client, {"chat": "IDLE", "asker": "BLOCKED"})
    question = await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["processName"] == "asker"
            and f["data"]["role"] == "assistant"
        )
    )
    assert "1. **Approve** — go ahead" in question["data"]["content"]
    assert question["data"]["meta"]["options"][1] == {"label": "Reject"}
    before = len(system.model_requests(f"{m} go"))
    await client.ok(
        "process-command",
        {
            "processName": "chat",
            "command": "approve",
            "params": {"target": "asker", "content": f"approved {m}"},
        },
    )
    await assistant_says(client, "asker finished")
    await wait_statuses(client, {"chat": "IDLE", "asker": "CLOSED"})
    # Arthur spent no model call on the command itself: only on the worker's DONE event.
    arthur_calls = [
        r
        for r in system.model_requests(f"{m} go")[before:]
        if r["messages"][0]["content"].startswith("You are Arthur")
    ]
    assert len(arthur_calls) == 1
    assert "<process-event" in arthur_calls[0]["messages"][-1]["content"]
    await client.close()


async def test_input_without_a_target_is_refused_in_a_session_without_chat(
    system: System,
) -> None:
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo", "autonomous": True})
    assert created["chatProcessId"] is None
    refused = await client.request("process-steer", {"content": "hello?"})
    assert refused["type"] == "error" and refused["data"]["reason"] == "target_required"
    await client.close()


def test_context_budget_drops_the_oldest_messages_with_a_note() -> None:
    from engine_worker.engines.context_budget import TRUNCATED_NOTE, fit_history

    system = {"role": "system", "content": "s" * 40}
    history = [{"role": "user", "content": f"{i}" * 400} for i in range(10)]
    turn = [{"role": "user", "content": "now"}]
    fitted = fit_history(system, history, turn, budget=400)
    assert fitted[0] == system and fitted[1]["content"] == TRUNCATED_NOTE
    assert fitted[-1] == turn[0]
    kept = fitted[2:-1]
    assert kept == history[-len(kept) :] and 0 < len(kept) < 10
    assert fit_history(system, history[:1], turn, budget=10_000) == [system, history[0], *turn]


async def test_manuals_and_recipes_through_arthurs_tools(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    system.script(
        Rule(
            match_last=f"{m} read up",
            tool_calls=[
                call("manual_list"),
                call("manual_read", name="process-spawning"),
                call("manual_read", name="not-mine"),
                call("recipe_list"),
                call("process_create", name="hub", goal="x", recipe="eddie"),
            ],
        ),
        Rule(
            match=f"{m} read up",
            match_last="no engine worker",
            tool_calls=[call("respond", message="read", awaiting_user_input=False)],
        ),
    )
    client, _ = await chat_session(system)
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} read up"})
    await assistant_says(client, "read")
    results = [json.loads(r) for r in tool_messages(system.model_requests(f"{m} read up")[-1])]
    listing, manual, refused, recipes, spawn = results[-5:]
    assert [x["name"] for x in listing["manuals"]] == ["process-spawning"]
    assert manual["name"] == "process-spawning" and len(manual["content"]) > 100
    assert refused["status"] == "ERROR" and "not one of your manuals" in refused["error"]
    names = {r["name"] for r in recipes["recipes"]}
    assert {"analyze", "ford", "quick-lookup", "web-research"} <= names
    assert "recipe-selector" not in names  # internal recipes are not offered
    assert spawn["status"] == "ERROR" and "no engine worker runs 'eddie'" in spawn["error"]
    await client.close()
