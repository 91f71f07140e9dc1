"""Replica loss is a FORCED suspend (seed 002 §9, §10.1, §13), once the reconnect grace has
passed with no client back: a gateway replica that stops leaves the sessions its sockets held
running, and only those no client has bound again within `lifecycle.reconnect_grace_ms` are
suspended FORCED (not their onDisconnect: a daemon session is kept, not closed); the sessions
of a replica whose lease ran out are taken over the same way and, when auto-restart is on,
resumed."""

from __future__ import annotations

import json
import uuid

import websockets

from tests.harness import System, WsClient, eventually
from tests.lifecycle_support import get, now_ms, replica, store, wait_engine
from tests.test_arthur_flow import assistant_says
from vance.clock import ManualClock
from vance.config import AutoRestartConfig
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb


async def _idle_unbound_session(system: System) -> tuple[str, str]:
    client = await system.connect()
    created = await client.ok("session-create", {"projectId": "demo"})
    await assistant_says(client, "Hi, I'm Arthur")
    await client.close()  # the default profile keeps the session open on a disconnect
    sid = str(created["sessionId"])
    await eventually(lambda: _unbound(system, sid), what="the bind released")
    return sid, str(created["chatProcessId"])


async def _unbound(system: System, sid: str) -> bool:
    return not (await get(system, sid)).bound_connection_id


async def _dead_replica(system: System, sid: str) -> str:
    """A replica that bound `sid` and then died: its lease ran out a second ago."""
    m = uuid.uuid4().hex[:8]
    conn, replica_id = f"conn_{m}", f"gw_dead_{m}"
    await system.sessions.BindSession(
        spb.BindSessionRequest(tenant_id="default", session_id=sid, connection_id=conn)
    )
    async with store(system) as db:
        await db["replica_leases"].insert_one(
            {
                "_id": replica_id,
                # Ended longer than the reconnect grace ago.
                "lease_until_ms": now_ms() - 1_000 - system.config.lifecycle.reconnect_grace_ms,
                "sessions": [{"s": sid, "c": conn}],
            }
        )
    return replica_id


async def test_an_expired_replica_lease_is_taken_over_as_a_forced_suspend(system: System) -> None:
    sid, pid = await _idle_unbound_session(system)
    await _dead_replica(system, sid)
    # (The periodic sweep may take it over first: the outcome is the same.)
    await system.sessions_internal.TakeOverReplicas(sipb.TakeOverReplicasRequest())
    session = await get(system, sid)
    assert session.status == pb.SESSION_STATUS_SUSPENDED
    assert session.suspend_cause == pb.SUSPEND_CAUSE_FORCED
    assert not session.bound_connection_id  # the dead replica's bind is gone
    assert session.transition_at_ms - session.suspended_at_ms == 7 * 24 * 3600 * 1000
    await wait_engine(system, pid, "SUSPENDED")
    # Taken over once: a second pass finds nothing.
    again = await system.sessions_internal.TakeOverReplicas(sipb.TakeOverReplicasRequest())
    assert again.suspended == 0


async def test_the_replica_taking_over_runs_the_auto_restart_pass(system: System) -> None:
    sid, pid = await _idle_unbound_session(system)
    await _dead_replica(system, sid)
    restart = AutoRestartConfig(enabled=True, max_concurrent=3, delay_between_ms=0)
    async with replica(system, ManualClock(now_ms()), auto_restart_forced=restart) as other:
        report = await other.internal.TakeOverReplicas(
            sipb.TakeOverReplicasRequest(now_ms=now_ms())
        )
    assert report.suspended >= 1 and report.resumed >= 1
    session = await get(system, sid)
    assert session.status in (pb.SESSION_STATUS_IDLE, pb.SESSION_STATUS_RUNNING)
    await wait_engine(system, pid, "IDLE")
    chat = await system.process(pid)
    assert chat.last_suspend_cause == "FORCED"


async def _connect(system: System, profile: str) -> WsClient:
    ws = await websockets.connect(
        f"ws://{system.gateway}/brain/default/ws?profile={profile}",
        additional_headers={"Authorization": f"Bearer {await system.login()}"},
    )
    return await WsClient(ws).start()


async def test_a_stopped_gateways_sessions_are_suspended_forced_after_the_grace(
    own_system: System,
) -> None:
    system = own_system
    daemon = await _connect(system, "daemon")
    web = await _connect(system, "web")
    made = {}
    for label, client in (("daemon", daemon), ("web", web)):
        created = await client.ok("session-create", {"projectId": "demo"})
        await assistant_says(client, "Hi, I'm Arthur")
        made[label] = str(created["sessionId"])
    await system.supervisor.stop_child("gateway")
    # Nothing is cut off while the clients may come back through another replica.
    for label, sid in made.items():
        session = await get(system, sid)
        assert session.status != pb.SESSION_STATUS_SUSPENDED, label
        assert session.bound_connection_id, label
    grace = system.config.lifecycle.reconnect_grace_ms
    early = await system.sessions_internal.TakeOverReplicas(
        sipb.TakeOverReplicasRequest(now_ms=now_ms() + grace // 2)
    )
    assert early.suspended == 0
    # No client came back within the grace: suspended FORCED.
    report = await system.sessions_internal.TakeOverReplicas(
        sipb.TakeOverReplicasRequest(now_ms=now_ms() + grace + 1_000)
    )
    assert report.suspended == 2
    for label, sid in made.items():
        session = await get(system, sid)
        assert session.status == pb.SESSION_STATUS_SUSPENDED, (label, json.dumps(str(session)))
        assert session.suspend_cause == pb.SUSPEND_CAUSE_FORCED, label
        assert not session.bound_connection_id, label
