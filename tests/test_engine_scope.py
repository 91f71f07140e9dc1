"""The engine context's reach (engine_worker/siblings.py, settings.py): an engine reads and
steers the other processes of its session, and the settings chain includes the project's group
(process -> session -> project -> group -> tenant)."""

from __future__ import annotations

import uuid

import grpc
import pytest

from engine_worker.settings import GROUP, PROJECT, EngineSettingsApi
from engine_worker.siblings import ProcessOrchestrator, SiblingError
from tests.harness import System
from tests.test_arthur_flow import assistant_says, call, child_asks, wait_statuses
from vance import convert as c
from vance.domain import DeliveryOutcome, ProcessStatus, ThinkProcess
from vance.testing.scripted_llm import Rule
from vance.v1 import session_pb2 as spb

KEY = "chat.language"


async def test_an_engine_reads_and_steers_its_siblings(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    goal = f"Sort the letters {m}"
    question = f"By date or by sender? {m}"
    system.script(
        *child_asks(m, f"{m} start", goal, "sorter", question),
        Rule(
            match_last=f"By sender {m}",
            tool_calls=[
                call("respond", message=f"Sorted by sender {m}", awaiting_user_input=False)
            ],
        ),
        Rule(
            match_last=f"Sorted by sender {m}",
            tool_calls=[call("respond", message=f"sorter done ({m})", awaiting_user_input=False)],
        ),
    )
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} start"})
    await assistant_says(client, f"sorter asks ({m})")
    await wait_statuses(client, {"chat": "IDLE", "sorter": "BLOCKED"})

    chat = c.process_from_proto(await system.process(created["chatProcessId"]))
    siblings = ProcessOrchestrator(chat, system.processes, f"turn_{m}")
    sorter = await siblings.get("sorter")
    assert sorter.status is ProcessStatus.BLOCKED and sorter.goal == goal
    assert sorter.last_reply == question
    assert [x.content for x in sorter.recent_chat] == [goal, question]

    steered = await siblings.steer("sorter", f"By sender {m}")
    assert steered.outcome in (DeliveryOutcome.STARTED, DeliveryOutcome.QUEUED)
    await assistant_says(client, f"sorter done ({m})")
    done = await siblings.get("sorter")
    assert done.status is ProcessStatus.CLOSED and done.last_reply == f"Sorted by sender {m}"
    # A closed sibling takes no message; nor does an engine steer itself.
    refused = await siblings.steer("sorter", "one more thing")
    assert refused.outcome is DeliveryOutcome.REJECTED and refused.reason
    with pytest.raises(SiblingError, match="cannot steer itself"):
        await siblings.steer("chat", "hello me")
    with pytest.raises(SiblingError, match="no process named 'nobody'"):
        await siblings.get("nobody")
    await client.close()


async def test_settings_resolve_through_the_project_group(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    group = f"team-{m}"
    for project in (f"a-{m}", f"b-{m}"):
        made = await system.sessions.CreateProject(
            spb.CreateProjectRequest(tenant_id="default", project_id=project, group=group)
        )
        assert made.group == group
    await system.sessions.CreateProject(
        spb.CreateProjectRequest(tenant_id="default", project_id=f"solo-{m}")
    )

    def api(project: str) -> EngineSettingsApi:
        process = ThinkProcess(
            id=f"proc_{project}",
            tenant_id="default",
            project_id=project,
            session_id=f"sess_{project}",
            name="chat",
            engine="arthur",
        )
        return EngineSettingsApi(process, system.sessions_internal)

    await api(f"a-{m}").set(KEY, "de", GROUP)
    # Every project of the group sees it, at the group level; a project may override it.
    for project in (f"a-{m}", f"b-{m}"):
        assert await api(project).get(KEY) == "de"
        assert await api(project).level(KEY) == GROUP
    await api(f"b-{m}").set(KEY, "fr", PROJECT)
    assert await api(f"b-{m}").get(KEY) == "fr" and await api(f"a-{m}").get(KEY) == "de"
    # A project without a group has no group level to write.
    assert await api(f"solo-{m}").level(KEY) != GROUP
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await api(f"solo-{m}").set(KEY, "de", GROUP)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "group" in str(refused.value.details())
