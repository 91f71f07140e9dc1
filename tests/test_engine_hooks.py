"""The `suspend` and `stop` engine hooks (engine_worker/engine.py) and `default_settings`:
hooks run as short lane tasks after the transition, for engines that declare them (Ford does:
it keeps a note in its working memory); the status stays what the transition made it. Engine
defaults are the lowest level of the typed settings."""

from __future__ import annotations

import uuid

from engine_worker.engines.arthur import DEFAULT_MAX_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS, Arthur
from engine_worker.settings import ENGINE_DEFAULT, PROCESS, EngineSettingsApi
from tests.harness import System, eventually
from tests.lifecycle_support import wait_status
from tests.test_arthur_flow import assistant_says, child_asks, wait_statuses
from vance.domain import ThinkProcess
from vance.internal.v1 import worker_pb2 as wkpb
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb


async def _notes(system: System, pid: str) -> list[str]:
    listed = await system.worker_service.ListMemory(
        wkpb.ListMemoryRequest(process_id=pid, scope=wkpb.MEMORY_SCOPE_PROCESS)
    )
    return [r.content for r in listed.records]


async def test_suspend_and_stop_hooks_run_and_leave_the_status(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    goal = f"Catalogue the maps {m}"
    system.script(*child_asks(m, f"{m} start", goal, "maps", f"Which maps? {m}"))
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    sid = created["sessionId"]
    await assistant_says(client, "Hi, I'm Arthur")
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} start"})
    await assistant_says(client, f"maps asks ({m})")
    await wait_statuses(client, {"chat": "IDLE", "maps": "BLOCKED"})
    listed = await client.ok("process-list", {"includeTerminated": True})
    worker = next(p["thinkProcessId"] for p in listed["processes"] if p["processName"] == "maps")
    chat = created["chatProcessId"]
    assert await _notes(system, worker) == []

    # An idle (BLOCKED) worker is suspended with its session: no worker holds it, so the hook
    # runs as a lane task of its own, and the worker stays SUSPENDED.
    await system.sessions.SuspendSession(
        spb.SuspendSessionRequest(tenant_id="default", session_id=sid)
    )
    await wait_status(system, sid, "SUSPENDED")

    async def suspended_note() -> list[str]:
        return await _notes(system, worker)

    notes = await eventually(suspended_note, what="the suspend hook's note")
    assert notes == [f"Suspended (cause FORCED) while working on: {goal}"]
    assert (await system.process(worker)).status == pb.PROCESS_STATUS_SUSPENDED
    # Arthur declares no hooks: nothing ran for the chat.
    assert await _notes(system, chat) == []

    await system.sessions.ResumeSession(spb.SessionOpRequest(tenant_id="default", session_id=sid))
    # A resume leaves every started engine IDLE (process_service/lifecycle/processes.py).
    await wait_statuses(client, {"chat": "IDLE", "maps": "IDLE"})
    await client.ok("process-stop", {"processName": "maps"})

    async def stop_note() -> list[str] | None:
        notes = await _notes(system, worker)
        return notes if len(notes) == 2 else None

    notes = await eventually(stop_note, what="the stop hook's note")
    assert notes[0] == f"Closed (STOPPED) before finishing: {goal}"
    final = await client.ok("process-list", {"includeTerminated": True})
    maps = next(p for p in final["processes"] if p["processName"] == "maps")
    assert maps["status"] == "CLOSED" and maps["closeReason"] == "STOPPED"
    await client.close()


async def test_engine_defaults_are_the_lowest_settings_level(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    process = ThinkProcess(
        id=f"proc_{m}",
        tenant_id="default",
        project_id=f"defaults-{m}",
        session_id=f"sess_{m}",
        name="chat",
        engine="arthur",
    )
    defaults = Arthur().default_settings()

    def api() -> EngineSettingsApi:
        return EngineSettingsApi(process, system.sessions_internal, defaults)

    fresh = api()
    assert await fresh.get_int(MAX_CONTEXT_TOKENS, 0) == DEFAULT_MAX_CONTEXT_TOKENS
    assert await fresh.level(MAX_CONTEXT_TOKENS) == ENGINE_DEFAULT
    # Any stored level wins over the engine's default; removing it brings the default back.
    await fresh.set(MAX_CONTEXT_TOKENS, "5000", PROCESS)
    assert await fresh.get_int(MAX_CONTEXT_TOKENS, 0) == 5000
    assert await api().level(MAX_CONTEXT_TOKENS) == PROCESS
    await fresh.set(MAX_CONTEXT_TOKENS, "", PROCESS)
    assert await fresh.get_int(MAX_CONTEXT_TOKENS, 0) == DEFAULT_MAX_CONTEXT_TOKENS
    assert await api().level(MAX_CONTEXT_TOKENS) == ENGINE_DEFAULT
