"""A steer to a process in INIT is queued, not refused (docs/protocol.md, process-steer): unlike
pause, resume and stop, a steer is a message, and the start turn drains it, so a message sent
right after a spawn (process_create's steerContent, a client racing a new session) is kept."""

from __future__ import annotations

import uuid

from tests.harness import System, eventually
from tests.test_arthur_flow import assistant_says
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb


async def test_a_steer_to_a_process_in_init_is_queued_for_its_start_turn(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    later = await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default",
            project_id="demo",
            session_id=created["sessionId"],
            name=f"later-{m}",
            engine="ford",
            goal=f"wait {m}",
            idempotency_key=f"later-{m}",
            start=False,
        )
    )
    assert later.status == pb.PROCESS_STATUS_INIT
    reply = await system.processes.Steer(
        ppb.SteerRequest(
            target=ppb.ProcessRef(process_id=later.id),
            message=pb.SteerMessage(
                idempotency_key=f"k-{m}",
                user_chat_input=pb.UserChatInput(from_user="dev", content=f"first {m}"),
            ),
        )
    )
    assert reply.outcome == pb.DELIVERY_OUTCOME_QUEUED

    # The start turn takes it: the message is in the process's chat.
    async def handled() -> bool:
        chat = await system.processes.ListChatMessages(
            ppb.ListChatMessagesRequest(process_id=later.id)
        )
        return any(msg.content == f"first {m}" for msg in chat.messages)

    await eventually(handled, what="the start turn handling the queued message")
    await client.close()
