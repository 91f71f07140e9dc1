"""Arthur knows where and when it is (seed 000 §3.8): every turn's system prompt carries the
tenant, project, user and date, and a bounded summary of the project's memory, which engines
keep through `ctx.memory()` (process_service's RecordMemory / ListMemory)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from tests.harness import System, eventually
from tests.test_arthur_flow import assistant_says
from vance.internal.v1 import worker_pb2 as wkpb


def _system_prompts(system: System, marker: str) -> list[str]:
    return [
        str(b["messages"][0]["content"])
        for b in system.model_requests(marker)
        if b["messages"][0].get("role") == "system"
    ]


async def _record(system: System, pid: str, scope: Any, content: str, key: str = "") -> Any:
    return await system.worker_service.RecordMemory(
        wkpb.RecordMemoryRequest(
            process_id=pid, scope=scope, kind="fact", content=content, idempotency_key=key
        )
    )


async def test_arthurs_prompt_carries_the_session_context_and_project_memory(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    client = await system.connect()
    first = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    # Another session of the project learned something; its private notes stay its own.
    await _record(
        system, first["chatProcessId"], wkpb.MEMORY_SCOPE_PROJECT, f"build server zeta-{m}"
    )
    await _record(system, first["chatProcessId"], wkpb.MEMORY_SCOPE_PROCESS, f"private-{m}")
    await client.close()

    client = await system.connect()
    second = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} where am I?"})
    await assistant_says(client, f"{m} where am I?")
    prompts = await eventually(lambda: _system_prompts(system, f"{m} where am I?"))
    prompt = prompts[-1]
    chat = await system.process(second["chatProcessId"])
    assert "Tenant: default" in prompt
    assert "Project: demo" in prompt
    assert f"User: {chat.owner_user_id}" in prompt and chat.owner_user_id
    assert datetime.now(UTC).strftime("%Y-%m-%d") in prompt
    assert f"zeta-{m}" in prompt
    assert f"private-{m}" not in prompt
    await client.close()


async def test_memory_records_are_newest_first_scoped_and_recorded_once(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    pid = created["chatProcessId"]
    a = await _record(system, pid, wkpb.MEMORY_SCOPE_PROCESS, f"first {m}", key="k1")
    again = await _record(system, pid, wkpb.MEMORY_SCOPE_PROCESS, f"first (redo) {m}", key="k1")
    assert again.id == a.id and again.content == f"first {m}"
    await _record(system, pid, wkpb.MEMORY_SCOPE_PROCESS, f"second {m}", key="k2")
    listed = await system.worker_service.ListMemory(
        wkpb.ListMemoryRequest(process_id=pid, scope=wkpb.MEMORY_SCOPE_PROCESS)
    )
    assert [r.content for r in listed.records] == [f"second {m}", f"first {m}"]
    project = await system.worker_service.ListMemory(
        wkpb.ListMemoryRequest(process_id=pid, scope=wkpb.MEMORY_SCOPE_PROJECT)
    )
    assert not [r for r in project.records if m in r.content]
    await client.close()
