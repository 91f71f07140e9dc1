"""Typed settings for engines (seed 000 §2.2): read through process -> session -> project ->
tenant, innermost first, and written at a chosen level; `session.defaultChatEngine` picks the
chat engine of new sessions, `chat.language` reaches Arthur's next turn."""

from __future__ import annotations

import uuid

import grpc
import pytest

from tests.harness import System, eventually
from tests.test_arthur_flow import assistant_says
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.v1 import session_pb2 as spb


def _scope(created: dict[str, str], project: str = "demo") -> sipb.SettingScope:
    return sipb.SettingScope(
        tenant_id="default",
        project_id=project,
        session_id=created["sessionId"],
        process_id=created["chatProcessId"],
    )


async def _set(system: System, scope: sipb.SettingScope, level: int, key: str, value: str) -> None:
    await system.sessions_internal.SetEngineSetting(
        sipb.SetEngineSettingRequest(scope=scope, level=level, key=key, value=value)  # type: ignore[arg-type]
    )


async def test_the_default_chat_engine_of_a_project_is_used(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"fordchat-{m}"
    await system.sessions.CreateProject(
        spb.CreateProjectRequest(tenant_id="default", project_id=project, title=project)
    )
    await _set(
        system,
        sipb.SettingScope(tenant_id="default", project_id=project),
        sipb.SETTING_LEVEL_PROJECT,
        "session.defaultChatEngine",
        "ford",
    )
    client = await system.connect()
    await client.ok("session-create", {"projectId": project})
    listed = await client.ok("process-list", {"includeTerminated": True})
    chat = next(p for p in listed["processes"] if p["processName"] == "chat")
    assert chat["engine"] == "ford"
    # Other projects keep Arthur.
    await client.ok("session-create", {"projectId": "demo"})
    listed = await client.ok("process-list", {"includeTerminated": True})
    chat = next(p for p in listed["processes"] if p["processName"] == "chat")
    assert chat["engine"] == "arthur"
    await client.close()


async def test_the_innermost_level_wins_and_arthur_sees_it_next_turn(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    scope = _scope(created)
    await _set(system, scope, sipb.SETTING_LEVEL_SESSION, "chat.language", "de")

    async def turn(text: str) -> str:
        await client.ok("process-steer", {"processName": "chat", "content": text})
        await assistant_says(client, text)
        found = await eventually(lambda: system.model_requests(text))
        return str(found[-1]["messages"][0]["content"])

    assert "answer in de" in await turn(f"{m} one")
    await _set(system, scope, sipb.SETTING_LEVEL_PROCESS, "chat.language", "fr")
    resolved = await system.sessions_internal.ResolveEngineSettings(
        sipb.ResolveEngineSettingsRequest(scope=scope, keys=["chat.language"])
    )
    assert [(v.value, v.level) for v in resolved.values] == [("fr", sipb.SETTING_LEVEL_PROCESS)]
    assert "answer in fr" in await turn(f"{m} two")
    # Removing the process value falls back to the session's.
    await _set(system, scope, sipb.SETTING_LEVEL_PROCESS, "chat.language", "")
    assert "answer in de" in await turn(f"{m} three")
    await client.close()


async def test_unknown_keys_and_bad_values_are_refused(system: System) -> None:
    scope = sipb.SettingScope(
        tenant_id="default", project_id="demo", session_id="s", process_id="p"
    )
    for key, value in (("no.such.key", "1"), ("arthur.maxContextTokens", "lots")):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await _set(system, scope, sipb.SETTING_LEVEL_PROCESS, key, value)
        assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
