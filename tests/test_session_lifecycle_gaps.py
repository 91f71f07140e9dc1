"""Seed 002's remaining lifecycle gaps (issue 27 items 6-8): a hard delete takes the session's
memory with it, resuming an engine of a SUSPENDED session resumes the session, project-level
abandoned-detection settings count, and a session whose chat cannot be created is closed."""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import pytest

from tests.harness import System
from tests.lifecycle_support import (
    create,
    engines,
    get,
    marker,
    name,
    now_ms,
    put_settings,
    replica,
    rest,
    store,
    sweep,
    wait_engine,
    wait_status,
)
from vance.clock import ManualClock
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import worker_pb2 as wkpb
from vance.testing.ports import free_port_block
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb


async def _memory_ids(system: System, prefix: str) -> list[str]:
    async with store(system) as db:
        docs = await db["memory_records"].find({"_id": {"$regex": f"^{prefix}"}}).to_list(None)
    return [str(d["_id"]) for d in docs]


async def test_a_hard_delete_removes_the_sessions_memory(system: System) -> None:
    m = marker()
    token = await system.login()
    client = await system.connect(token)
    created = await create(client)
    sid, chat = created["sessionId"], created["chatProcessId"]
    worker = await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default", project_id="demo", session_id=sid, name="w", engine="ford"
        )
    )
    for pid, scope, text in (
        (worker.id, wkpb.MEMORY_SCOPE_PROCESS, f"{m} the user's task: plan the wedding"),
        (chat, wkpb.MEMORY_SCOPE_PROCESS, f"{m} chat notes"),
        (worker.id, wkpb.MEMORY_SCOPE_PROJECT, f"{m} a project fact"),
    ):
        await system.worker_service.RecordMemory(
            wkpb.RecordMemoryRequest(
                process_id=pid, scope=scope, kind="note", content=text, idempotency_key=m
            )
        )
    assert await _memory_ids(system, f"p:{worker.id}:") and await _memory_ids(system, f"p:{chat}:")
    deleted = await rest(system, "DELETE", f"/brain/default/session/{sid}", token)
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True
    assert await _memory_ids(system, f"p:{worker.id}:") == []
    assert await _memory_ids(system, f"p:{chat}:") == []
    async with store(system) as db:
        for collection in ("memory_heads", "memory_keys"):
            left = db[collection].find({"_id": {"$regex": f"^p:({worker.id}|{chat})"}})
            assert await left.to_list(None) == [], collection
        # The project's facts outlive the session that found them.
        facts = await db["memory_records"].find({"content": f"{m} a project fact"}).to_list(None)
        assert len(facts) == 1
    await client.close()


async def test_resuming_an_engine_of_a_suspended_session_resumes_the_session(
    system: System,
) -> None:
    client = await system.connect()
    created = await create(client)
    sid, chat = created["sessionId"], created["chatProcessId"]
    await wait_engine(system, chat, "IDLE")
    await system.sessions.SuspendSession(
        spb.SuspendSessionRequest(tenant_id="default", session_id=sid)
    )
    await wait_status(system, sid, "SUSPENDED")
    assert await engines(system, sid) == {"chat": "SUSPENDED"}
    reply = await client.request("process-resume", {"processName": "chat"})
    assert reply["type"] == "process-resume", reply
    # The session is open again (nothing left for the suspend sweep to archive at the old
    # transitionAt), and so is its engine.
    session = await get(system, sid)
    assert name(pb.SessionStatus, session.status, "SESSION_STATUS_") in ("IDLE", "RUNNING")
    assert not session.suspended_at_ms and not session.transition_at_ms
    await wait_engine(system, chat, "IDLE")
    await client.close()


async def test_project_abandoned_detection_settings_are_read(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    quiet, strict = f"quiet-{m}", f"strict-{m}"
    for project in (quiet, strict):
        await system.sessions.CreateProject(
            spb.CreateProjectRequest(tenant_id="default", project_id=project, title=project)
        )
    # The tenant detects abandoned sessions (the default); one project switches it off.
    await put_settings(
        system, f"default:{quiet}", {"vance.session.abandoned-detection.enabled": "false"}
    )
    outcome: dict[str, Any] = {}
    for project in (quiet, strict):
        s = await system.sessions.CreateSession(
            spb.CreateSessionRequest(tenant_id="default", project_id=project, owner_user_id="dev")
        )
        suspended = await system.sessions.SuspendSession(
            spb.SuspendSessionRequest(tenant_id="default", session_id=s.session_id)
        )
        await sweep(system, suspended.transition_at_ms, s.session_id)
        done = await get(system, s.session_id)
        outcome[project] = (
            name(pb.SessionStatus, done.status, "SESSION_STATUS_"),
            name(pb.CloseReason, done.close_reason, "CLOSE_REASON_") if done.close_reason else "",
        )
    assert outcome == {quiet: ("ARCHIVED", ""), strict: ("CLOSED", "ABANDONED")}


async def test_a_session_whose_chat_cannot_be_created_does_not_stay_init(system: System) -> None:
    # A session_service replica whose process_service is not there: creating the chat fails.
    owner = f"u{uuid.uuid4().hex[:8]}"
    nobody = f"127.0.0.1:{free_port_block(1)}"
    addresses = system.config.addresses.model_copy(update={"process_service": nobody})
    broken = system.config.model_copy(update={"addresses": addresses})
    async with replica(System(broken, system.supervisor, system.llm), ManualClock(now_ms())) as rep:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await rep.sessions.CreateSession(
                spb.CreateSessionRequest(
                    tenant_id="default", project_id="demo", owner_user_id=owner
                )
            )
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    async with store(system) as db:
        made = await db["sessions"].find({"owner_user_id": owner}).to_list(None)
    assert [(d["status"], d.get("close_reason")) for d in made] == [("CLOSED", "INCOMPLETE")]


async def test_esc_tells_every_client_which_engine_will_pause_before_it_does(
    system: System,
) -> None:
    m = marker()
    hold = f"halt-{m}"
    system.script(Rule(match_last=f"{m} long answer", text=f"a long answer {m}", hold=hold))
    token = await system.login()
    client = await system.connect(token)
    created = await create(client)
    sid, chat = created["sessionId"], created["chatProcessId"]
    await wait_engine(system, chat, "IDLE")
    watcher = await system.connect(token)
    await watcher.ok("session-monitor", {"sessionId": sid})
    await client.ok("process-steer", {"content": f"{m} long answer"})
    await wait_engine(system, chat, "RUNNING")
    try:
        paused = await client.ok("process-pause", {})
        assert [p["processName"] for p in paused["processes"]] == ["chat"]
        for c in (client, watcher):
            halt = await c.wait_for(lambda f: f["type"] == "engine-halt-requested")
            assert halt["data"] == {"processId": chat, "processName": "chat", "engine": "arthur"}
            assert "seq" in halt
        # Before the engine is PAUSED: its turn is still held.
        assert not [
            f
            for f in watcher.of_type("process-progress")
            if f["data"].get("status") == "PAUSED" and f["data"]["processId"] == chat
        ]
    finally:
        system.llm.release(hold)
    await wait_engine(system, chat, "PAUSED")
    # An Esc on a resting session stays silent.
    before = len(watcher.of_type("engine-halt-requested"))
    assert (await client.ok("process-pause", {}))["processes"] == []
    await client.request("ping", {})
    assert len(watcher.of_type("engine-halt-requested")) == before
    await watcher.close()
    await client.close()
