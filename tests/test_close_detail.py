"""A turn that finally fails says why to the session's clients (issue 28): the provider answers
503 until the model client's retries and the lane's attempts run out, and the worker process
(one with a parent; a chat stays open instead, tests/test_chat_outage.py) closes STALE. The
WebSocket client gets the CLOSED status frame with the provider's error as `closeDetail`,
`process-list` and REST's session overview say the same, a resume from seq 0 replays it, and
what the provider's error quoted of a key or an internal address is masked (docs/protocol.md
"Close detail")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.harness import System
from tests.lifecycle_support import rest
from tests.test_runtime import marker, new_session, wait_status
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb

# What a provider's error body may quote: the caller's key and the address of a proxy.
LEAKY = (
    "overloaded, try later (key sk-proj-AbCdEf0123456789xyz, upstream 10.20.30.40:8443, "
    "via llm-proxy.internal:8000)"
)
SECRETS = ("sk-proj-AbCdEf0123456789xyz", "10.20.30.40", "8443", "llm-proxy.internal")


def closes(pid: str) -> Callable[[dict[str, Any]], bool]:
    def pred(f: dict[str, Any]) -> bool:
        d = f["data"]
        return bool(
            f["type"] == "process-progress"
            and d.get("processId") == pid
            and d.get("status") == "CLOSED"
        )

    return pred


def assert_says_why(detail: str | None) -> None:
    assert detail is not None
    assert detail.startswith("turn failed 3 times: "), detail
    assert "model call failed (503)" in detail, detail
    assert "gave up after 5 tries" in detail, detail
    assert "overloaded, try later" in detail, detail
    assert "[redacted-key]" in detail and "[address]" in detail, detail
    for secret in SECRETS:
        assert secret not in detail, (secret, detail)


async def test_a_turn_that_finally_fails_tells_the_client_why(system: System) -> None:
    m = marker()
    goal = f"{m} analyse this"
    system.script(
        Rule(match_last=goal, fail_status=503, retry_after_s=0, fail_message=LEAKY, repeat=True)
    )
    client, created = await new_session(system)
    worker = await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default",
            project_id="demo",
            session_id=created["sessionId"],
            name="analysis",
            engine="ford",
            goal=goal,
            parent_process_id=created["chatProcessId"],
            start=True,
        )
    )
    pid = worker.id

    frame = await client.wait_for(closes(pid), timeout=60, what="the CLOSED frame")
    data = frame["data"]
    assert (data["closeReason"], data["previousStatus"]) == ("STALE", "RUNNING")
    assert_says_why(data["closeDetail"])
    # Every attempt of the lane tried the model as often as its client retries.
    tried = [r for r in system.model_requests(goal) if goal in str(r["messages"][-1])]
    assert len(tried) == 3 * 5
    # gRPC callers read the same words.
    p = await wait_status(system, pid, "CLOSED")
    assert p.close_reason == pb.CLOSE_REASON_STALE
    assert p.close_detail == data["closeDetail"]

    listed = await client.ok("process-list", {"includeTerminated": True})
    (found,) = [x for x in listed["processes"] if x["thinkProcessId"] == pid]
    assert (found["status"], found["closeReason"]) == ("CLOSED", "STALE")
    assert found["closeDetail"] == data["closeDetail"]

    token = await system.login()
    overview = await rest(
        system, "GET", f"/brain/default/session/{created['sessionId']}/overview", token
    )
    assert overview.status_code == 200, overview.text
    (engine,) = [e for e in overview.json()["engines"] if e["processId"] == pid]
    assert (engine["closeReason"], engine["closeDetail"]) == ("STALE", data["closeDetail"])
    await client.close()

    # The status event is stored with its detail: a client that resumes from seq 0 reads it.
    later = await system.connect()
    await later.ok("session-resume", {"sessionId": created["sessionId"], "sinceSeq": 0})
    replayed = await later.wait_for(closes(pid), what="the replayed CLOSED frame")
    assert replayed["data"]["closeDetail"] == data["closeDetail"]
    await later.close()


async def test_a_status_change_that_is_not_a_close_carries_no_detail(system: System) -> None:
    m = marker()
    system.script(Rule(match=m, text=f"fine {m}"))
    client, created = await new_session(system)
    pid = created["chatProcessId"]
    await client.ok("process-steer", {"processName": "chat", "content": f"{m} hello"})
    await client.wait_for(
        lambda f: f["type"] == "chat-message-appended" and f"fine {m}" in f["data"]["content"],
        what="the answer",
    )
    statuses = [
        f["data"]
        for f in client.frames
        if f["type"] == "process-progress" and f["data"].get("processId") == pid
    ]
    assert statuses and all(s["closeDetail"] is None for s in statuses), statuses
    listed = await client.ok("process-list", {})
    assert [x["closeDetail"] for x in listed["processes"]] == [None]
    await client.close()
