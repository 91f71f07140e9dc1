"""Every way a worker process closes reaches its parent (seed 000 §3.5): a turn that fails its
last attempt closes the child STALE and the parent's model gets a FAILED process event; a worker
whose model tier is not configured closes at once with a summary that says so."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from tests.harness import System, WsClient, eventually, running_system
from tests.test_arthur_flow import assistant_says, call
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm


async def _child(client: WsClient, name: str) -> dict[str, str]:
    async def closed() -> dict[str, str] | None:
        listed = await client.ok("process-list", {"includeTerminated": True})
        found = next((p for p in listed["processes"] if p["processName"] == name), None)
        return found if found is not None and found["status"] == "CLOSED" else None

    found: dict[str, str] = await eventually(closed, timeout=90, what=f"{name} to close")
    return found


def _delegation(m: str, goal: str, name: str) -> list[Rule]:
    """Arthur starts `name` on `goal` and, when its process event arrives, reports it."""
    return [
        Rule(
            match_last=f"{m} start the task",
            tool_calls=[call("process_create", recipe="analyze", goal=goal, name=name)],
        ),
        Rule(
            match=f"{m} start the task",
            match_last="tool_call_id",
            tool_calls=[call("respond", message=f"Started {name}.", awaiting_user_input=False)],
        ),
        Rule(
            match=m,
            match_last="<process-event",
            tool_calls=[call("respond", message=f"{name} failed ({m})", awaiting_user_input=False)],
        ),
    ]


def _event_requests(system: System, m: str) -> list[str]:
    out = []
    for body in system.model_requests(m):
        last = (body.get("messages") or [{}])[-1]
        if "<process-event" in str(last.get("content")):
            out.append(str(last["content"]))
    return out


async def test_a_child_whose_turns_keep_failing_reports_failed_to_its_parent(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    goal = f"Doomed analysis {m}"
    system.script(
        *_delegation(m, goal, "doomed"),
        # Every attempt of the child's turn meets a broken model.
        Rule(match_last=goal, fail_status=500, repeat=True),
    )
    client = await system.connect()
    await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} start the task"})
    child = await _child(client, "doomed")
    assert child["closeReason"] == "STALE"
    await assistant_says(client, f"doomed failed ({m})")
    events = _event_requests(system, m)
    assert len(events) == 1, events
    assert 'type="failed"' in events[0] and "doomed" in events[0]
    await client.close()


@pytest.fixture(scope="module")
async def analyze_unconfigured(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[System]:
    """A system whose chat tier is configured and whose analysis tier is not."""
    tmp = tmp_path_factory.mktemp("tiers")
    config = Path(tmp / "vance.yaml")
    config.write_text(
        yaml.safe_dump(
            {
                "llm": {
                    "tiers": {
                        "default:chat": "openai/scripted",
                        "default:fast": "openai/scripted",
                        "default:analyze": "",
                    }
                }
            }
        )
    )
    env = {"VANCE_CONFIG": str(config), "VANCE_LLM_MODEL": ""}
    async with running_system(tmp, llm, extra_env=env) as own:
        yield own


async def test_a_worker_without_a_model_tier_fails_at_once_with_a_clear_summary(
    analyze_unconfigured: System,
) -> None:
    system = analyze_unconfigured
    m = uuid.uuid4().hex[:8]
    system.script(*_delegation(m, f"Unrunnable analysis {m}", "unrunnable"))
    client = await system.connect()
    await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} start the task"})
    child = await _child(client, "unrunnable")
    assert child["closeReason"] == "INCOMPLETE"
    await assistant_says(client, f"unrunnable failed ({m})")
    events = _event_requests(system, m)
    assert len(events) == 1, events
    assert 'type="failed"' in events[0]
    assert "no model provider is configured" in events[0], events[0]
    await client.close()
