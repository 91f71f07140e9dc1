"""The Python SDK (clients/python, docs/clients.md) against the running system: every client
frame and every pushed frame type as its typed model, the REST routes, errors as VanceError,
and a reconnect after the gateway restarts that replays from the last seq without repeats."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from vance_client import (
    ChatMessageAppended,
    ChatMessageStreamChunk,
    ClientToolInvoke,
    InboxItemAdded,
    Link,
    PlanProposed,
    ProcessModeChanged,
    ProcessProgress,
    ProcessSpawned,
    SwitchTo,
    TodosUpdated,
    ToolCallCompleted,
    ToolCallStarted,
    UnknownFrame,
    VanceClient,
    VanceError,
    login,
    parse_frame,
)
from vance_client import requests as rq

from tests.client_support import sdk_client
from tests.eddie_support import act
from tests.harness import System, eventually
from tests.sessions_support import new_user
from tests.test_arthur_flow import call, child_asks
from vance.testing.scripted_llm import Rule


def _said(text: str, role: str = "assistant") -> Callable[[ChatMessageAppended], bool]:
    return lambda f: f.data.role == role and text in f.data.content


async def test_frames_of_a_turn_with_a_child_and_every_process_request(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    user, _ = await new_user(system)
    token = await login(f"http://{system.gateway}", "default", user, "pw")
    assert token.user_id == user and token.expires_at > 0
    system.script(*child_asks(m, f"{m} go", f"Count {m}", "counter", f"Which shelf? {m}"))
    async with sdk_client(system, token.token) as (c, seen):
        assert c.welcome is not None and c.welcome.data.user_id == user
        pong = await c.ping()
        assert pong.server_timestamp > 0
        with pytest.raises(VanceError) as refused:
            await c.steer("no session yet")
        assert (refused.value.code, refused.value.reason) == (409, "no_session")

        opened = await c.create_session("demo")
        assert opened.chat_engine == "arthur" and c.session_id == opened.session_id
        await seen.wait(ChatMessageAppended, _said("Arthur"))
        system.script(Rule(match_last=f"{m} hi", text=f"Plain answer {m}", chunks=3))
        await c.steer(f"{m} hi")
        await seen.wait(ChatMessageAppended, _said(f"Plain answer {m}"))
        steered = await c.steer(f"{m} go", idempotency_key=f"k-{m}")
        assert steered.outcome in ("STARTED", "QUEUED") and steered.message_id
        again = await c.steer(f"{m} go", idempotency_key=f"k-{m}")
        assert again.duplicate and again.message_id == steered.message_id

        await seen.wait(ChatMessageAppended, _said(f"{m} go", "user"))
        spawned = await seen.wait(ProcessSpawned, lambda f: f.data.child_process_name == "counter")
        assert spawned.data.engine and spawned.data.goal == f"Count {m}"
        started = await seen.wait(ToolCallStarted, lambda f: f.data.tool_name == "process_create")
        done = await seen.wait(
            ToolCallCompleted, lambda f: f.data.tool_call_id == started.data.tool_call_id
        )
        assert done.data.status == "SUCCESS" and done.data.result_size > 0
        await seen.wait(ChatMessageAppended, _said(f"counter asks ({m})"))
        chunks = seen.frames(ChatMessageStreamChunk)
        assert chunks and all(f.session_id == opened.session_id for f in chunks)
        running = seen.frames(ProcessProgress, lambda f: f.data.status == "RUNNING")
        assert running and running[0].data.session_id == opened.session_id
        # Every seq is delivered once, in order.
        seqs = [e.seq for e in seen.events if not isinstance(e, Link) and e.seq is not None]
        assert seqs == sorted(set(seqs))

        names = {p.process_name: p for p in await c.processes()}
        assert {"chat", "counter"} <= set(names)
        last = await c.messages(limit=1)
        assert len(last) == 1 and last[0].role == "assistant"
        # The counter asks again: a child that answered plainly would finish (DONE), and the
        # pause, resume and stop below would race its end.
        system.script(
            Rule(
                match_last=f"shelf 3 {m}",
                tool_calls=[call("respond", message=f"Which row? {m}", awaiting_user_input=True)],
            )
        )
        cmd = await c.command("steer", {"target": "counter", "content": f"shelf 3 {m}"})
        assert cmd.outcome in ("STARTED", "QUEUED") and cmd.message_id

        paused = await c.pause(process_name="counter")
        assert paused.process_name == "counter"
        await eventually(
            lambda: seen.frames(
                ProcessProgress,
                lambda f: f.data.process_name == "counter" and f.data.status == "PAUSED",
            ),
            timeout=45,
            what="counter paused",
        )
        resumed = await c.resume(process_name="counter")
        assert resumed.status != "PAUSED"
        stopped = await c.stop(process_name="counter")
        assert (stopped.status, stopped.close_reason) == ("CLOSED", "STOPPED")
        # ESC's session-wide pause acts only on what runs or waits to start: never on the
        # stopped counter (the chat may be finishing its turn for the steer command).
        acted = await c.pause_session()
        assert {p.process_name for p in acted} <= {"chat"}, acted
        with pytest.raises(VanceError) as unknown:
            await c.stop(process_name="nobody")
        assert unknown.value.reason == "process_not_found"

        # A second client follows the same session without the bind.
        async with sdk_client(system, token.token) as (watcher, watched):
            followed = await watcher.monitor_session(opened.session_id, since_seq=0)
            assert followed.monitor
            await watched.wait(ChatMessageAppended, _said(f"counter asks ({m})"))
            await watcher.unbind()
            assert watcher.session_id is None


async def test_rest_routes_and_errors(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    user, _ = await new_user(system)
    token = await login(f"http://{system.gateway}", "default", user, "pw")
    with pytest.raises(VanceError) as bad:
        await login(f"http://{system.gateway}", "default", user, "wrong")
    assert (bad.value.code, bad.value.reason) == (401, "bad_credentials")
    system.script(Rule(match_last=f"{m} hello", text=f"Hello back {m}"))
    async with sdk_client(system, token.token) as (c, seen):
        opened = await c.create_session("demo")
        await c.steer(f"{m} hello")
        await seen.wait(ChatMessageAppended, _said(f"Hello back {m}"))
        rest = c.rest
        assert (await rest.health()).status == "ok"
        got = await rest.session(opened.session_id)
        assert got.project_id == "demo" and got.owner_user_id == user
        titled = await rest.update_metadata(opened.session_id, title=f"Title {m}", tags=["sdk"])
        assert titled.metadata.title == f"Title {m}" and titled.metadata.tags == ["sdk"]
        listed = await rest.sessions(project_id="demo")
        assert opened.session_id in [s.session_id for s in listed]
        found = await eventually(lambda: _hits(rest, f"Title {m}"), what="the session in a search")
        assert found == [opened.session_id]
        with pytest.raises(VanceError) as not_suspended:
            await rest.extend(opened.session_id, extend_by_ms=60_000)
        assert (not_suspended.value.code, not_suspended.value.reason) == (
            409,
            "session_not_suspended",
        )
        assert any(p.project_id == "demo" for p in await rest.projects())
        assert (await rest.settings()).tenant_id == "default"
        assert await rest.inbox() == []
        await c.unbind()
        archived = await rest.archive(opened.session_id)
        assert archived.status == "ARCHIVED"
        fresh = await rest.refresh()
        assert fresh.token and fresh.user_id == user


async def _hits(rest: object, query: str) -> list[str]:
    from vance_client import Rest

    assert isinstance(rest, Rest)
    return [h.session.session_id for h in (await rest.search(query)).hits]


async def test_hub_switch_to_and_inbox_frames(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"sdk_{m}"
    _, token = await new_user(system)
    system.script(
        act(
            "relay_inbox",
            f"{m} plan",
            spoken="The plan is in your inbox.",
            inboxTitle=f"Plan {m}",
            body=f"# Plan {m}",
        ),
        act("project_create", f"{m} make project", name=project),
        act("answer", project, match=f"{m} make project", message=f"Made {m}."),
        act("mediate", f"{m} switch", target=project, reason="files", voiceAnnouncement="Over"),
    )
    async with sdk_client(system, token, profile="foot") as (c, seen):
        assert c.welcome is not None and c.welcome.data.profile == "foot"
        hub = await c.open_hub()
        assert hub.hub and hub.chat_engine == "eddie"
        await c.steer(f"{m} plan")
        added = await seen.wait(InboxItemAdded)
        assert added.data.title == f"Plan {m}" and added.data.body == f"# Plan {m}"
        items = await c.rest.inbox(unread_only=True)
        assert [i.id for i in items] == [added.data.id]
        assert (await c.rest.mark_inbox_item(added.data.id)).read
        await c.steer(f"{m} make project")
        await seen.wait(ChatMessageAppended, _said(f"Made {m}."))
        await c.steer(f"{m} switch")
        switch = await seen.wait(SwitchTo)
        assert switch.data.target_project_id == project and switch.session_id == hub.session_id
        worker = await c.resume_session(switch.data.target_session_id)
        assert worker.project_id == project and c.session_id == worker.session_id
        hub_seq = c.last_seq(hub.session_id)
        back = await c.resume_session(hub.session_id)  # from the last seq seen: no replay
        assert back.since_seq == hub_seq
        await c.steer(f"{m} after")  # the default rule echoes: "You said: ..."
        await seen.wait(ChatMessageAppended, _said(f"{m} after", "user"))
        assert len(seen.frames(SwitchTo)) == 1


def test_unknown_and_malformed_frames_are_kept_not_fatal() -> None:
    future = parse_frame({"type": "client-tool-invoke", "seq": 4, "data": {"callId": "x"}})
    assert isinstance(future, UnknownFrame) and future.data == {"callId": "x"}
    bad = parse_frame({"type": "switch-to", "data": {"no": "target"}})
    assert isinstance(bad, UnknownFrame) and bad.type == "switch-to"
    chunk = parse_frame(
        {"type": "chat-message-stream-chunk", "seq": 3, "data": {"chunk": "Hi", "extra": 1}}
    )
    assert isinstance(chunk, ChatMessageStreamChunk) and chunk.data.chunk == "Hi"
    # Frames the reference names but no engine sends yet still parse, their data kept whole.
    for cls in (PlanProposed, TodosUpdated, ProcessModeChanged):
        frame = parse_frame({"type": cls.TYPE, "seq": 9, "data": {"processId": "p", "x": [1]}})
        assert isinstance(frame, cls) and frame.data.process_id == "p"
        assert frame.data.model_dump(by_alias=True)["x"] == [1]
    forwarded = parse_frame(
        {
            "type": "process-progress",
            "seq": 5,
            "forwardedBy": {"engine": "eddie", "processId": "e", "viaSession": "s"},
            "data": {"processId": "w", "kind": "STATUS", "payload": {"phase": "DONE"}},
        }
    )
    assert isinstance(forwarded, ProcessProgress) and forwarded.forwarded_by is not None
    assert forwarded.forwarded_by.via_session == "s" and not forwarded.is_status_change
    # Client frames go out in the protocol's camelCase, unset fields left out.
    assert rq.SessionResume(session_id="s", since_seq=7).wire() == {
        "sessionId": "s",
        "sinceSeq": 7,
    }
    assert rq.ProcessSteer(content="x", process_name="chat").wire() == {
        "content": "x",
        "processName": "chat",
    }
    # The client-tool frames as the gateway reads them (gateway/client_tools.py).
    invoke = parse_frame(
        {
            "type": "client-tool-invoke",
            "data": {"callId": "c1", "name": "client_x", "params": {"a": 1}, "timeoutMs": 5000},
        }
    )
    assert isinstance(invoke, ClientToolInvoke) and invoke.data.timeout_ms == 5000
    assert invoke.data.params == {"a": 1} and invoke.seq is None
    assert rq.ClientToolResult(call_id="c1", status="SUCCESS", result=[1, "two"]).wire() == {
        "callId": "c1",
        "status": "SUCCESS",
        "result": [1, "two"],
    }
    assert rq.ClientToolResult(call_id="c1", status="ERROR", error="no").wire() == {
        "callId": "c1",
        "status": "ERROR",
        "error": "no",
    }
    assert rq.ClientToolRegister(tools=[]).wire() == {"tools": []}
    assert rq.ClientToolRegister(tools=[]).reply(
        {"registered": 0, "clientToolsEnabled": True}
    ) == rq.ClientToolsRegistered(registered=0, client_tools_enabled=True)


async def test_a_refused_token_fails_the_client_with_the_reason(system: System) -> None:
    with pytest.raises(VanceError) as refused:
        async with VanceClient(f"http://{system.gateway}", "default", "not-a-token"):
            pass
    assert (refused.value.code, refused.value.reason) == (4401, "bad_token")
    _, token = await new_user(system)
    async with sdk_client(system, token) as (c, seen):
        await c.logout()
        await eventually(
            lambda: [e for e in seen.events if isinstance(e, Link) and e.state == "closed"],
            what="the closed link",
        )
    with pytest.raises(VanceError) as revoked:
        async with VanceClient(f"http://{system.gateway}", "default", token):
            pass
    assert revoked.value.reason == "token_revoked"


async def test_the_readme_script_runs(system: System) -> None:
    readme = Path(__file__).resolve().parents[1] / "clients" / "python" / "README.md"
    script = readme.read_text().split("```python\n", 1)[1].split("```", 1)[0]
    script = script.replace("http://localhost:8080", f"http://{system.gateway}")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    lines = out.decode().splitlines()
    assert proc.returncode == 0, lines
    assert lines[-2:] == ["user: Hello, Arthur", "assistant: You said: Hello, Arthur"], lines
