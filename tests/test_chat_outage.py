"""A session's chat survives a model provider's outage: its turn fails through every retry,
the user is told why (the provider's words, masked) and the chat stays open; once the
provider is back, the next message is answered in the same chat, the earlier message kept
in it and read by the model. A turn that kills its worker every attempt ends after
`lanes.max_attempts` too, and is not taken again (docs/architecture.md "Lanes, leases and
exactly-once effects", docs/protocol.md "A turn that failed")."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from engine_worker import protocol as ew
from process_service.process_model import Process
from tests.harness import System, eventually
from tests.test_close_detail import LEAKY, SECRETS
from tests.test_dispatch_batch import StandIn, running_dispatch
from tests.test_runtime import marker, new_session
from vance.config import LanesConfig
from vance.domain import ProcessStatus, UserChatInput
from vance.testing.scripted_llm import Rule


def failed_turn_ends(pid: str) -> Callable[[dict[str, Any]], bool]:
    """The STATUS frame of a turn that failed for good: back to IDLE, with the detail."""

    def pred(f: dict[str, Any]) -> bool:
        d = f["data"]
        return bool(
            f["type"] == "process-progress"
            and d.get("processId") == pid
            and d.get("status") == "IDLE"
            and d.get("closeDetail")
        )

    return pred


def said(frames: list[dict[str, Any]], pid: str) -> list[tuple[str, str]]:
    """The chat as the socket showed it: (role, content) of each appended message."""
    return [
        (f["data"]["role"], f["data"]["content"])
        for f in frames
        if f["type"] == "chat-message-appended" and f["data"]["thinkProcessId"] == pid
    ]


async def test_the_chat_outlives_a_provider_outage(system: System) -> None:
    m = marker()
    down = Rule(match=m, fail_status=503, retry_after_s=0, fail_message=LEAKY, repeat=True)
    system.script(down)
    client, created = await new_session(system)
    pid = created["chatProcessId"]
    first = f"{m} what is the capital of France?"
    await client.ok("process-steer", {"processName": "chat", "content": first})

    frame = await client.wait_for(failed_turn_ends(pid), timeout=60, what="the failed turn")
    detail = frame["data"]["closeDetail"]
    assert frame["data"]["previousStatus"] == "RUNNING" and frame["data"]["closeReason"] is None
    assert detail.startswith("turn failed 3 times: ") and "model call failed (503)" in detail
    assert "overloaded, try later" in detail and "[redacted-key]" in detail, detail
    for secret in SECRETS:
        assert secret not in detail, (secret, detail)
    assert len(system.model_requests(m)) == 3 * 5  # every attempt tried as often as it retries
    # The user reads it in the chat, after their message; nothing closed.
    chat = said(client.frames, pid)
    assert chat[-2:] == [("user", first), ("system", chat[-1][1])], chat
    assert chat[-1][1].startswith(f"No answer came: {detail}"), chat[-1]
    (notice,) = [f for f in client.frames if f["type"] == "chat-message-appended"][-1:]
    assert notice["data"]["meta"] == {"error": "turn_failed", "detail": detail}
    assert not [
        f
        for f in client.frames
        if f["type"] == "process-progress" and f["data"].get("status") == "CLOSED"
    ]
    listed = await client.ok("process-list", {})
    assert [(p["status"], p["closeReason"]) for p in listed["processes"]] == [("IDLE", None)]

    # The provider is back: the next message is answered, with the first one in the model's
    # input (it was not lost), in the same chat.
    system.llm.script.remove(down)
    answer = f"{m} Paris, and yes, I am back."
    system.script(Rule(match_last=f"{m} are you back", text=answer))
    reply = await client.ok(
        "process-steer", {"processName": "chat", "content": f"{m} are you back?"}
    )
    assert reply["outcome"] in ("STARTED", "QUEUED"), reply
    await client.wait_for(
        lambda f: f["type"] == "chat-message-appended" and f["data"]["content"] == answer,
        what="the answer after the outage",
    )
    (request,) = system.model_requests(f"{m} are you back")
    sent = [json.dumps(x) for x in request["messages"]]
    at_first = next(i for i, x in enumerate(sent) if "capital of France" in x)
    at_notice = next(i for i, x in enumerate(sent) if "No answer came" in x)
    at_second = next(i for i, x in enumerate(sent) if "are you back" in x)
    assert at_first < at_notice < at_second, sent

    # What the chat holds, as a reload shows it: nothing lost, nothing twice.
    history = await client.ok("process-messages", {})
    shown = [(x["role"], x["content"]) for x in history["messages"]]
    assert shown.count(("user", first)) == 1, shown
    assert shown[-4:] == [
        ("user", first),
        ("system", chat[-1][1]),
        ("user", f"{m} are you back?"),
        ("assistant", answer),
    ], shown
    await client.close()


def _chat(name: str) -> Process:
    pid = f"proc_{name}"
    return Process(
        id=pid,
        session_id=f"sess_{pid}",
        name="chat",
        engine="arthur",
        status=ProcessStatus.IDLE,
        tenant_id="acme",
        started=True,
    )


async def _assignment(worker: StandIn) -> ew.Assignment:
    """The next turn handed to the worker (its first write is the welcome)."""
    while True:
        found = [a for a in await worker.write() if isinstance(a, ew.Assignment)]
        if found:
            (assignment,) = found
            return assignment


async def _ended(dispatch: Any, pid: str) -> Process | None:
    p = await dispatch.store.get(pid)
    return p if p is not None and p.status is ProcessStatus.IDLE and p.lane is None else None


async def test_a_turn_that_kills_its_worker_every_time_ends_and_is_not_taken_again(
    system: System,
) -> None:
    """A chat's message kills every worker that takes it: after max_attempts workers the turn
    ends (the chat IDLE, the message in the chat with a notice of why), and the next message
    starts a turn of its own, without the one that killed them."""
    m = marker()
    async with running_dispatch(system) as dispatch:
        chat = _chat(m)
        await dispatch.store.insert_process(chat)
        await dispatch.inbox.steer(chat.id, "", "", UserChatInput(content=f"{m} poison"))
        attempts = LanesConfig().max_attempts  # as running_dispatch configures its lanes
        turn_ids = set()
        for i in range(attempts):
            worker = StandIn(dispatch, f"w-{m}-{i}", 4)
            assigned = await _assignment(worker)
            assert [x.content for x in assigned.pending if isinstance(x, UserChatInput)] == [
                f"{m} poison"
            ]
            turn_ids.add(assigned.turn_id)
            dispatch.stand_ins.remove(worker)
            await worker.close()  # the worker died with the turn
        assert len(turn_ids) == 1  # one turn, redone

        ended = await eventually(lambda: _ended(dispatch, chat.id), what="the turn to end")
        assert not ended.wake and not ended.pending and not ended.owned
        chat_now = await dispatch.store.chat_range(chat.id, 1, ended.chat_count)
        assert [(r.role.value, r.content) for r in chat_now] == [
            ("USER", f"{m} poison"),
            ("SYSTEM", chat_now[-1].content),
        ]
        assert chat_now[-1].content.startswith(
            f"No answer came: turn failed {attempts} times: worker disconnected"
        ), chat_now[-1].content

        # A worker is there and nothing is handed to it: the turn is not redone.
        healthy = StandIn(dispatch, f"w-{m}-ok", 4)
        await dispatch.inbox.steer(chat.id, "", "", UserChatInput(content=f"{m} hello again"))
        nxt = await _assignment(healthy)
        assert nxt.turn_id not in turn_ids
        assert [x.content for x in nxt.pending if isinstance(x, UserChatInput)] == [
            f"{m} hello again"
        ]
        assert nxt.chat_count == ended.chat_count
