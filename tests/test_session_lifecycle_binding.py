"""Seed 002 §8 and §13: one bound connection per session, the session-resume error table,
takeover (stale, or by the owner), heartbeat and lease reclaim, multi-client escalation,
monitor connections, and onDisconnect (also through logout)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from tests.harness import System, WsClient, eventually
from tests.lifecycle_support import (
    DAY,
    MIN,
    chat_once,
    create,
    engines,
    get,
    marker,
    name,
    now_ms,
    op,
    replica,
    status,
    store,
    sweep,
    user,
    wait_status,
)
from vance.clock import ManualClock
from vance.errors import reason_of
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb


def editor(client: WsClient) -> str:
    return str(client.of_type("welcome")[0]["data"]["editorId"])


def error(reply: dict[str, Any]) -> tuple[int, str]:
    assert reply["type"] == "error", reply
    return reply["data"]["errorCode"], reply["data"]["reason"]


async def bound_to(system: System, sid: str) -> str:
    return (await get(system, sid)).bound_connection_id


async def test_the_resume_error_table(system: System) -> None:
    m = marker()
    owner = await system.connect()
    sid = (await create(owner))["sessionId"]
    assert await bound_to(system, sid) == editor(owner)
    other = await system.connect()
    # 404: no such session
    assert error(await other.request("session-resume", {"sessionId": "sess_nope"})) == (
        404,
        "session_not_found",
    )
    # 409: bound to a live connection, no takeover
    assert error(await other.request("session-resume", {"sessionId": sid})) == (
        409,
        "session_bound_elsewhere",
    )
    # 403: another user's session, with or without takeover
    bob = await system.connect(await user(system, "default", f"bob{m}"))
    for takeover in (False, True):
        reply = await bob.request("session-resume", {"sessionId": sid, "takeover": takeover})
        assert error(reply) == (403, "session_foreign")
    # The owner takes over; the old connection learns it with its next frame and is closed.
    took = await other.ok("session-resume", {"sessionId": sid, "takeover": True, "sinceSeq": 0})
    assert took["tookOver"] and took["bound"] and took["sessionId"] == sid
    assert await bound_to(system, sid) == editor(other)
    assert error(await owner.request("process-list")) == (409, "session_bound_elsewhere")
    await eventually(owner.closed.is_set, what="the old connection closed")
    # A tenant admin who is not the owner may bind a free session, never take a fresh bind.
    bobs = (await create(bob))["sessionId"]
    assert error(await other.request("session-resume", {"sessionId": bobs, "takeover": True}))[
        1
    ] == ("session_bound_elsewhere")
    # 409: archived. The connection bound to it loses the bind with its next frame (§8.3).
    await system.sessions.ArchiveSession(op(sid))
    assert error(await other.request("process-list")) == (409, "session_archived")
    await eventually(other.closed.is_set)
    other = await system.connect()
    assert error(await other.request("session-resume", {"sessionId": sid})) == (
        409,
        "session_archived",
    )
    # 404: closed (a daemon-like session closes when its client leaves)
    daemon = await system.connect()
    closing = (await create(daemon, lifecycle={"onDisconnect": "CLOSE"}))["sessionId"]
    await daemon.close()
    await wait_status(system, closing, "CLOSED")
    assert error(await other.request("session-resume", {"sessionId": closing})) == (
        404,
        "session_closed",
    )
    for c in (other, bob):
        await c.close()


async def test_a_bind_lost_right_after_a_frame_refuses_the_next_frame(system: System) -> None:
    """The gateway trusts a bind for a lease after each heartbeat (gateway.bind_lease_ms, 30 s);
    a takeover or an archive answers once the gateway's bind round has dropped that trust, well
    before the lease ends, so a connection that has just sent a frame still has its very next
    frame refused."""
    owner = await system.connect()
    sid = (await create(owner))["sessionId"]
    await owner.ok("process-list")  # a heartbeat: the bind is now leased to this connection
    other = await system.connect()
    asked = now_ms()
    took = await other.ok("session-resume", {"sessionId": sid, "takeover": True})
    assert took["tookOver"]
    # Not the 30 s lease: a round or two (generous for a loaded machine).
    assert now_ms() - asked < 10_000
    assert error(await owner.request("process-list")) == (409, "session_bound_elsewhere")
    await eventually(owner.closed.is_set, what="the old connection closed")
    await other.ok("process-list")  # leased to the new holder now
    await system.sessions.ArchiveSession(op(sid))
    assert error(await other.request("process-list")) == (409, "session_archived")
    await eventually(other.closed.is_set, what="the archived session's connection closed")


async def test_batched_lease_renewal_grants_only_holders_and_a_takeover_outlasts_it(
    system: System,
) -> None:
    """RenewBindLeases (the gateway's one call per round for its busy sockets) renews the
    holder's lease and refuses a connection that does not hold the session. A takeover made
    right after answers once every gateway replica with a live bind round has applied the
    drop, or the renewed lease has run out: here a replica that never applies it (its round
    called by hand) makes the takeover wait out the lease, and its next round reads the drop."""
    owner = await system.connect()
    sid = (await create(owner))["sessionId"]
    holder = editor(owner)
    other_sid = (await create(await system.connect()))["sessionId"]
    taker = await system.connect()  # before the renewal: the takeover comes right after it
    beats = [
        spb.HeartbeatRequest(session_id=sid, connection_id=holder, lease_ms=3_000),
        spb.HeartbeatRequest(session_id=sid, connection_id="conn_not_bound", lease_ms=3_000),
        spb.HeartbeatRequest(session_id=other_sid, connection_id=holder, lease_ms=3_000),
        spb.HeartbeatRequest(session_id="sess_missing", connection_id=holder, lease_ms=3_000),
    ]
    reply = await system.sessions_internal.RenewBindLeases(sipb.RenewBindLeasesRequest(beats=beats))
    assert [(b.ok, b.lease_ms) for b in reply.beats] == [
        (True, 3_000),
        (False, 0),
        (False, 0),
        (False, 0),
    ]
    renewed_at = now_ms()
    quiet = sipb.BindRoundRequest(replica_id=f"gwb_quiet_{marker()}", lease_ms=5_000)
    first = await system.sessions_internal.BindRound(quiet)
    assert first.lease_ms == 5_000 and not first.drops  # a first round reads no drops
    try:
        took = await taker.ok("session-resume", {"sessionId": sid, "takeover": True})
        assert took["tookOver"]
        assert now_ms() >= renewed_at + 3_000 - 50  # it waited out the renewed lease
        assert error(await owner.request("process-list")) == (409, "session_bound_elsewhere")
        quiet.since_ms = first.read_at_ms
        later = await system.sessions_internal.BindRound(quiet)
        assert sid in {d.session_id for d in later.drops}
    finally:
        quiet.lease_ms = 0  # its round lease ends: no later revoke waits for it
        await system.sessions_internal.BindRound(quiet)
    # All held: one write and no read-back; the grant is capped as a Heartbeat's is.
    reply = await system.sessions_internal.RenewBindLeases(
        sipb.RenewBindLeasesRequest(
            beats=[
                spb.HeartbeatRequest(session_id=sid, connection_id=editor(taker), lease_ms=90_000)
            ]
        )
    )
    assert [(b.ok, b.lease_ms) for b in reply.beats] == [(True, 60_000)]


async def test_frames_under_a_bind_lease_write_no_session_document(system: System) -> None:
    """A busy socket's frames cost no session write: after the heartbeat that takes the lease,
    frames for longer than the former 1 s lease leave the session document as it was."""
    client = await system.connect()
    sid = (await create(client))["sessionId"]
    await client.ok("process-list")  # the heartbeat that takes the lease
    async with store(system) as db:
        before = (await db["sessions"].find_one({"_id": sid})) or {}
        assert before.get("bind_lease_until_ms", 0) > now_ms() + 20_000
        started, frames = now_ms(), 0
        while now_ms() - started < 1_500 or frames < 10:
            await client.ok("process-list")
            frames += 1
        after = (await db["sessions"].find_one({"_id": sid})) or {}
    assert after.get("last_activity_at_ms") == before.get("last_activity_at_ms")
    assert after.get("bind_lease_until_ms") == before.get("bind_lease_until_ms")


async def test_stale_takeover_and_its_refusal_while_fresh(system: System) -> None:
    """§8.1, with a second replica whose clock the test moves: a bind without frames for
    bind_stale_after_ms is taken over; a fresh one is not."""
    first = await system.connect()
    sid = (await create(first))["sessionId"]
    await first.ok("process-list")
    t0 = (await get(system, sid)).last_activity_at_ms
    clock = ManualClock(t0 + 30_000)
    request = spb.BindSessionRequest(
        tenant_id="default",
        session_id=sid,
        connection_id="conn_elsewhere",
        caller=spb.Caller(user_id="dev", roles=["admin"]),
    )
    async with replica(system, clock) as elsewhere:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await elsewhere.sessions.BindSession(request)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert reason_of(refused.value) == "session_bound_elsewhere"
        clock.advance(2 * MIN)
        taken = await elsewhere.sessions.BindSession(request)
        assert taken.bound and taken.previous_connection_id == editor(first)
    assert await bound_to(system, sid) == "conn_elsewhere"
    # The old connection's frame cannot reclaim a fresh foreign bind: it is closed.
    assert error(await first.request("process-list")) == (409, "session_bound_elsewhere")
    await eventually(first.closed.is_set, what="the stale connection closed")


async def test_heartbeat_keeps_the_bind_and_a_live_client_reclaims_a_swept_one(
    system: System,
) -> None:
    client = await system.connect()
    sid = (await create(client))["sessionId"]
    await client.ok("process-list")  # every frame is a heartbeat
    last = (await get(system, sid)).last_activity_at_ms
    fresh = await sweep(system, last + 2 * MIN - 1, sid)
    assert fresh.unbound == 0 and await bound_to(system, sid) == editor(client)
    stale = await sweep(system, last + 2 * MIN + 1, sid)
    assert stale.unbound == 1
    swept = await get(system, sid)
    assert swept.bound_connection_id == ""
    assert swept.last_activity_at_ms == last  # kept: it tells when the connection died
    # §8.3: the lease merely expired; the next frame proves the client alive and rebinds.
    await client.ok("process-list")
    assert await bound_to(system, sid) == editor(client)
    await client.close()


async def test_multi_client_sessions_escalate_the_bind_to_a_survivor(system: System) -> None:
    first = await system.connect()
    created = await create(first, allowMultipleClients=True, lifecycle={"onDisconnect": "SUSPEND"})
    sid, chat = created["sessionId"], created["chatProcessId"]
    second = await system.connect()
    joined = await second.ok("session-resume", {"sessionId": sid})
    assert joined["bound"] is False
    assert (await get(system, sid)).participant_count == 1
    await chat_once(system, second, chat, f"{marker()} from the second client")
    await first.close()

    async def escalated() -> bool:
        return await bound_to(system, sid) == editor(second)

    await eventually(escalated, what="the bind escalated to the survivor")
    assert await status(system, sid) == "IDLE"  # onDisconnect skipped: someone is still here
    await second.close()
    await wait_status(system, sid, "SUSPENDED")
    s = await get(system, sid)
    assert name(pb.SuspendCause, s.suspend_cause, "SUSPEND_CAUSE_") == "DISCONNECT"


async def test_monitor_connections_steer_but_never_hold_the_bind(system: System) -> None:
    m = marker()
    owner = await system.connect()
    created = await create(owner, lifecycle={"onDisconnect": "SUSPEND"})
    sid, chat = created["sessionId"], created["chatProcessId"]
    monitor = await system.connect()
    watched = await monitor.ok("session-monitor", {"sessionId": sid})
    assert watched["monitor"] is True
    await chat_once(system, monitor, chat, f"{m} steered by the monitor")
    await owner.wait_for(
        lambda f: f["type"] == "chat-message-appended" and f"{m} steered" in f["data"]["content"]
    )
    extra = await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default",
            project_id="demo",
            session_id=sid,
            name="extra",
            engine="arthur",
            start=True,
        )
    )
    await eventually(lambda: _is(system, extra.id, "IDLE"))
    assert (await monitor.ok("process-pause", {"processId": chat}))["status"] == "PAUSED"
    assert (await monitor.ok("process-resume", {"processId": chat}))["status"] == "IDLE"
    assert (await monitor.ok("process-stop", {"processName": "extra"}))["status"] == "CLOSED"
    activity = (await get(system, sid)).last_activity_at_ms
    assert await bound_to(system, sid) == editor(owner)
    await monitor.close()
    assert await status(system, sid) == "IDLE"  # a leaving monitor is no disconnect
    assert (await get(system, sid)).last_activity_at_ms == activity  # nor a heartbeat
    # A monitor needs the same rights as a resume.
    bob = await system.connect(await user(system, "default", f"bob{m}"))
    assert error(await bob.request("session-monitor", {"sessionId": sid})) == (
        403,
        "session_foreign",
    )
    await owner.close()
    await bob.close()


async def _is(system: System, pid: str, expected: str) -> bool:
    p = await system.process(pid)
    return name(pb.ProcessStatus, p.status, "PROCESS_STATUS_") == expected


async def test_on_disconnect_keep_open_suspend_close_and_logout(system: System) -> None:
    m = marker()
    # KEEP_OPEN: unbound, nothing else changes.
    keep = await system.connect()
    kept = (await create(keep))["sessionId"]
    await keep.close()

    async def unbound() -> bool:
        return await bound_to(system, kept) == ""

    await eventually(unbound)
    assert await status(system, kept) == "IDLE"
    # SUSPEND: the suspend cascade with cause DISCONNECT.
    susp = await system.connect()
    suspended = (await create(susp, lifecycle={"onDisconnect": "SUSPEND"}))["sessionId"]
    await susp.close()
    await wait_status(system, suspended, "SUSPENDED")
    s = await get(system, suspended)
    assert name(pb.SuspendCause, s.suspend_cause, "SUSPEND_CAUSE_") == "DISCONNECT"
    assert s.transition_at_ms == s.suspended_at_ms + DAY

    # The session is marked first, then its engines (session_service/lifecycle/transitions.py).
    async def engines_suspended() -> bool:
        return await engines(system, suspended) == {"chat": "SUSPENDED"}

    await eventually(engines_suspended, what="the chat suspended with its session")
    # Resuming it over the socket brings it back (§9: runtime fields cleared).
    back = await system.connect()
    resumed = await back.ok("session-resume", {"sessionId": suspended})
    assert resumed["resumed"] and resumed["status"] in ("IDLE", "RUNNING")
    s = await get(system, suspended)
    assert (s.suspended_at_ms, s.transition_at_ms, s.suspend_cause) == (0, 0, 0)
    assert await engines(system, suspended) == {"chat": "IDLE"}
    await back.ok("session-unbind")  # leaving without onDisconnect
    assert await status(system, suspended) == "IDLE" and await bound_to(system, suspended) == ""
    # CLOSE: engines stopped, session CLOSED; the abandoned evaluator has its say.
    for talk, reason in ((True, "STOPPED"), (False, "ABANDONED")):
        daemon = await system.connect()
        created = await create(daemon, lifecycle={"onDisconnect": "CLOSE"})
        if talk:
            await chat_once(system, daemon, created["chatProcessId"], f"{m} hello")
        await daemon.close()
        await wait_status(system, created["sessionId"], "CLOSED")
        closed = await get(system, created["sessionId"])
        assert name(pb.CloseReason, closed.close_reason, "CLOSE_REASON_") == reason
        assert closed.bound_connection_id == ""
        process = await system.process(created["chatProcessId"])
        assert name(pb.CloseReason, process.close_reason, "CLOSE_REASON_") == reason
    # Logout takes the disconnect path, then closes the socket.
    leaving = await system.connect()
    out = (await create(leaving, lifecycle={"onDisconnect": "SUSPEND"}))["sessionId"]
    await leaving.ok("logout")
    await eventually(leaving.closed.is_set, what="logout closing the socket")
    await wait_status(system, out, "SUSPENDED")
    await back.close()
