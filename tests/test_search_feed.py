"""Search is fed from process_service's chat feed (process_service/events/chat_feed.py,
session_service/search/indexer.py): a message is findable about a second after it is stored
at most, and session_service, killed and started again, resumes the feed from the position it
stored and indexes what was written while it was down, losing nothing."""

from __future__ import annotations

import time

from tests.harness import System, eventually
from tests.sessions_support import TENANT, ask, caller, chat_session, found, new_user, search, word
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb

# The bound the feed is built for, from the moment the client sees the stored message.
FINDABLE_WITHIN_S = 1.0


async def test_a_stored_message_is_findable_within_a_second(system: System) -> None:
    owner, token = await new_user(system)
    client, sid = await chat_session(system, token)
    w = word()
    await ask(system, client, "What do the gauges say?", f"The {w} gauge reads nominal.")
    stored = time.monotonic()
    hit = await found(system, w, caller(owner), sid)
    elapsed = time.monotonic() - stored
    assert hit.conversation_match
    assert elapsed <= FINDABLE_WITHIN_S, f"found {elapsed:.2f}s after the answer was stored"
    await client.close()


async def test_after_a_session_service_restart_the_feed_resumes_without_loss(
    own_system: System,
) -> None:
    system = own_system
    owner, token = await new_user(system)
    client, sid = await chat_session(system, token)
    before = word()
    await ask(system, client, f"Note the {before} reading", f"Noted: {before}.")
    await found(system, before, caller(owner), sid)
    session = await system.sessions.GetSession(
        spb.GetSessionRequest(tenant_id=TENANT, session_id=sid)
    )

    # session_service dies; the conversation goes on through process_service meanwhile.
    system.supervisor.kill("session_service")
    during = [word() for _ in range(3)]
    for n, w in enumerate(during):
        system.script(Rule(match_last=f"while away {n}", text=f"Answer {n}: {w}."))
        await system.processes.Steer(
            ppb.SteerRequest(
                target=ppb.ProcessRef(process_id=session.chat_process_id),
                message=pb.SteerMessage(
                    idempotency_key=f"away-{sid}-{n}",
                    user_chat_input=pb.UserChatInput(from_user=owner, content=f"while away {n}"),
                ),
            )
        )

        async def answered(w: str = w) -> bool:
            listed = await system.processes.ListChatMessages(
                ppb.ListChatMessagesRequest(session_id=sid, process_id=session.chat_process_id)
            )
            return any(w in m.content for m in listed.messages)

        await eventually(answered, timeout=60, what=f"answer {n} stored")

    await system.supervisor.restart_service("session_service")
    for w in during:
        await found(system, w, caller(owner), sid)
    # What was indexed before the restart is still found, once.
    hits = (await search(system, before, caller(owner))).hits
    assert [h.session.session_id for h in hits] == [sid]
    await client.close()
