"""The foundation: login, the socket, health and reflection, and one chat turn end to end."""

from __future__ import annotations

import grpc
import httpx
import pytest
import websockets
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.harness import System, eventually
from vance.config import ConfigError, load_config
from vance.llm import LiteLLMClient, ModelNotConfiguredError, resolve_model
from vance.supervisor import GRPC_SERVICES
from vance.testing.scripted_llm import Rule
from vance.v1 import process_pb2 as ppb


async def test_login_issues_a_token_and_rejects_a_wrong_password(system: System) -> None:
    async with httpx.AsyncClient() as http:
        bad = await http.post(
            f"http://{system.gateway}/brain/default/access/dev", json={"password": "nope"}
        )
        good = await http.post(
            f"http://{system.gateway}/brain/default/access/dev", json={"password": "dev"}
        )
    assert bad.status_code == 401
    assert bad.json()["detail"]["reason"] == "bad_credentials"
    assert good.status_code == 200
    assert good.json()["token"].count(".") == 2


async def test_socket_without_a_valid_token_is_closed(system: System) -> None:
    ws = await websockets.connect(f"ws://{system.gateway}/brain/default/ws?token=forged")
    with pytest.raises(websockets.ConnectionClosed) as info:
        await ws.recv()
    assert info.value.rcvd is not None and info.value.rcvd.code == 4401


async def test_socket_takes_the_token_as_query_parameter(system: System) -> None:
    token = await system.login()
    async with websockets.connect(f"ws://{system.gateway}/brain/default/ws?token={token}") as ws:
        welcome = await ws.recv()
    assert '"type":"welcome"' in str(welcome)
    assert '"userId":"dev"' in str(welcome)


async def test_every_service_is_healthy_and_reflects_its_api(system: System) -> None:
    for service in GRPC_SERVICES:
        channel = system.channel(service)
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        responses = stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")])
        )
        names = [s.name async for r in responses for s in r.list_services_response.service]
        # tool_service serves only service-only APIs (vance.internal.v1, docs/protocol.md).
        assert any(n.startswith(("vance.v1.", "vance.internal.v1.")) for n in names), names
    async with httpx.AsyncClient() as http:
        r = await http.get(f"http://{system.gateway}/healthz")
    assert r.status_code == 200 and r.json()["status"] == "ok"


async def test_workers_are_visible_with_engines_and_free_slots(system: System) -> None:
    workers = await system.workers()
    assert len(workers) >= 2
    for w in workers:
        assert {"arthur", "ford"} <= set(w.engines)
        assert w.slots == 8 and 0 <= w.free_slots <= 8


async def test_one_chat_turn_end_to_end(system: System) -> None:
    system.script(
        Rule(match="tell me about lanes", text="Lanes keep one turn per process.", chunks=4)
    )
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    assert created["chatProcessName"] == "chat" and created["chatEngine"] == "arthur"
    assert created["sessionId"] and created["chatProcessId"]
    steer = await client.ok(
        "process-steer", {"processName": "chat", "content": "tell me about lanes"}
    )
    assert steer["outcome"] in ("STARTED", "QUEUED")
    answer = await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["role"] == "assistant"
            and "Lanes" in f["data"]["content"]
        ),
        what="assistant answer",
    )
    assert answer["data"]["content"] == "Lanes keep one turn per process."
    chunks = [
        f["data"]["chunk"]
        for f in client.of_type("chat-message-stream-chunk")
        if f["seq"] < answer["seq"]
    ]
    assert "".join(chunks).endswith("Lanes keep one turn per process.")
    # Every pushed frame carries its seq, strictly increasing.
    seqs = [f["seq"] for f in client.frames if "seq" in f]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # The conversation is persisted: welcome, the user's message, the answer.
    history = await client.ok("process-messages", {"processName": "chat"})
    assert [m["role"] for m in history["messages"]] == ["assistant", "user", "assistant"]
    assert history["messages"][1]["content"] == "tell me about lanes"
    await eventually(lambda: _status_is(system, created["chatProcessId"], "IDLE"))
    await client.close()


async def _status_is(system: System, pid: str, status: str) -> bool:
    p = await system.process(pid)
    from vance.v1 import common_pb2 as pb

    return bool(pb.ProcessStatus.Name(p.status) == f"PROCESS_STATUS_{status}")


async def test_bad_frames_get_error_frames_with_reasons(system: System) -> None:
    client = await system.connect()
    await client.ws.send("{not json")
    err = await client.wait_for(lambda f: f["type"] == "error" and f["replyTo"] is None)
    assert err["data"]["reason"] == "bad_frame" and err["data"]["errorCode"] == 400
    unknown = await client.request("no-such-frame", {})
    assert unknown["data"]["reason"] == "unknown_frame"
    missing = await client.request("session-create", {})
    assert missing["data"]["reason"] == "projectId_required"
    nope = await client.request("session-create", {"projectId": "no-such-project"})
    assert nope["data"]["errorCode"] == 404 and nope["data"]["reason"] == "project_not_found"
    unbound = await client.request("process-steer", {"content": "hi"})
    assert unbound["data"]["reason"] == "no_session"
    await client.close()


async def test_litellm_client_parses_streamed_tool_calls(system: System) -> None:
    system.script(
        Rule(
            match="use a tool",
            text="",
            tool_calls=[
                {"name": "process_create", "arguments": {"name": "paper-diff", "goal": "compare"}}
            ],
        )
    )
    client = LiteLLMClient(system.config.llm)
    reply = await client.complete(
        tier="default:fast", messages=[{"role": "user", "content": "use a tool"}]
    )
    assert [c.name for c in reply.tool_calls] == ["process_create"]
    assert reply.tool_calls[0].arguments == {"name": "paper-diff", "goal": "compare"}


def test_unconfigured_model_names_the_settings_to_set() -> None:
    config = load_config(env={})
    with pytest.raises(ModelNotConfiguredError) as info:
        resolve_model(config.llm, "default:fast")
    assert "VANCE_LLM_MODEL" in info.value.message


def test_one_model_setting_points_every_tier_at_it() -> None:
    config = load_config(env={"VANCE_LLM_MODEL": "openai/gpt-4o-mini"})
    assert resolve_model(config.llm, "default:analyze") == "openai/gpt-4o-mini"
    assert resolve_model(config.llm, "default:fast,default:chat") == "openai/gpt-4o-mini"


def test_a_bad_configuration_value_names_its_key() -> None:
    with pytest.raises(ConfigError, match=r"worker\.count"):
        load_config(env={"VANCE_ENGINE_WORKERS": "many"})


async def test_grpc_errors_carry_status_and_reason(system: System) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await system.processes.GetProcess(ppb.GetProcessRequest(process_id="proc_missing"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    assert ("vance-reason", "process_not_found") in tuple(info.value.trailing_metadata() or ())


async def test_an_unknown_chat_engine_is_refused_and_leaves_no_session(system: System) -> None:
    from vance.v1 import session_pb2 as spb

    before = await system.sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id="default", project_id="demo")
    )
    client = await system.connect()
    refused = await client.request("session-create", {"projectId": "demo", "chatEngine": "nope"})
    assert refused["type"] == "error" and refused["data"]["errorCode"] == 404
    after = await system.sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id="default", project_id="demo")
    )
    assert len(after.sessions) == len(before.sessions)
    bad_profile = await client.request("session-create", {"projectId": "demo", "profile": "No!"})
    assert bad_profile["data"]["reason"] == "bad_profile"
    await client.close()


async def test_a_client_cannot_reach_processes_of_another_session(system: System) -> None:
    owner = await system.connect()
    theirs = await owner.ok("session-create", {"projectId": "demo"})
    other = await system.connect()
    await other.ok("session-create", {"projectId": "demo"})
    steer = await other.ok(
        "process-steer", {"processId": theirs["chatProcessId"], "content": "not yours"}
    )
    assert steer["outcome"] == "REJECTED"
    read = await other.request("process-messages", {"processId": theirs["chatProcessId"]})
    assert read["type"] == "error" and read["data"]["errorCode"] == 404
    stop = await other.request("process-pause", {"processId": theirs["chatProcessId"]})
    assert stop["type"] == "error" and stop["data"]["errorCode"] == 404
    await owner.close()
    await other.close()
