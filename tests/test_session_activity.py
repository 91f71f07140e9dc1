"""Session activity and the sweeps that read it: engine status changes and new pending messages
are session activity (`engine_activity_at_ms`; the idle sweep measures from the later of it
and the last client frame, the bind staleness from client frames alone), tool
calls with persistent effects keep a session out of abandoned detection, and the stale-bind
sweep waits for its initial delay. Time is moved by RunSweeps(now_ms) and a replica's clock."""

from __future__ import annotations

from tests.harness import System, eventually
from tests.lifecycle_support import (
    HOUR,
    MIN,
    get,
    marker,
    now_ms,
    replica,
    status,
    store,
    sweep,
    wait_status,
)
from tests.test_session_lifecycle_sweeps import _expire, new_session, qa, ref
from vance.clock import ManualClock
from vance.config import LifecycleConfig
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import tool_pb2_grpc
from vance.protoutil import dict_to_struct
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb

PREFILTER = 30_000  # LifecycleConfig.idle_prefilter_ms: the idle floor of idle_timeout_ms=0


async def activity_reaches(system: System, sid: str, at_least: int) -> int:
    async def check() -> int:
        seen = (await get(system, sid)).engine_activity_at_ms
        return seen if seen >= at_least else 0

    seen: int = await eventually(check, what=f"engine activity of {sid} >= {at_least}")
    return seen


async def rewind(system: System, sid: str, to: int) -> None:
    """Sets the session's activity back to `to`, as if nothing had happened since; again if a
    roll-up of what the test did before lands meanwhile."""

    async def rewound() -> bool:
        async with store(system) as db:
            await db["sessions"].update_one(
                {"_id": sid}, {"$set": {"engine_activity_at_ms": to, "last_activity_at_ms": to}}
            )
        return (await get(system, sid)).engine_activity_at_ms == to

    await eventually(rewound, what=f"the activity of {sid} set back")


async def test_engine_activity_is_session_activity_and_the_idle_sweep_measures_from_it(
    system: System,
) -> None:
    s = await new_session(system, idle_timeout_ms=0)  # idle after the 30 s pre-filter
    # Created an hour ago.
    await rewind(system, s.session_id, now_ms() - HOUR)
    asked = now_ms()
    await qa(system, s, f"{marker()} hello")
    # The turn's status changes reached the session without any client frame...
    active = await activity_reaches(system, s.session_id, asked)
    # ...and the idle sweep measures from them (`active` is at most the last of them).
    assert (await sweep(system, active + PREFILTER - 1, s.session_id)).idle_suspended == 0
    assert (await sweep(system, asked + HOUR, s.session_id)).idle_suspended == 1


async def test_a_new_pending_message_is_activity(system: System) -> None:
    s = await new_session(system, idle_timeout_ms=0)
    paused_at = now_ms()
    await system.processes.Pause(ref(s))
    await wait_status(system, s.session_id, "RUNNING")  # a PAUSED engine counts as busy
    # The pause was an hour ago: nothing has happened since.
    await rewind(system, s.session_id, paused_at - HOUR)
    sent = now_ms()
    steered = await system.processes.Steer(
        ppb.SteerRequest(
            target=ref(s),
            message=pb.SteerMessage(user_chat_input=pb.UserChatInput(content="later")),
        )
    )
    assert steered.outcome == pb.DELIVERY_OUTCOME_DEFERRED  # no status change: only a message
    await activity_reaches(system, s.session_id, sent)


async def test_engine_activity_does_not_keep_a_dead_connections_bind(system: System) -> None:
    s = await new_session(system)
    await rewind(system, s.session_id, now_ms() - HOUR)
    conn = f"conn_{marker()}"
    await system.sessions.BindSession(
        spb.BindSessionRequest(tenant_id="default", session_id=s.session_id, connection_id=conn)
    )
    framed = (await get(system, s.session_id)).last_activity_at_ms
    asked = now_ms()
    await qa(system, s, f"{marker()} after the last frame")
    worked = await activity_reaches(system, s.session_id, asked)
    assert worked > framed
    stale_at = framed + LifecycleConfig().bind_stale_after_ms + 1
    assert stale_at < worked + LifecycleConfig().bind_stale_after_ms  # engine work was later
    report = await sweep(system, stale_at, s.session_id)
    assert report.unbound == 1
    swept = await get(system, s.session_id)
    assert swept.bound_connection_id == "" and swept.last_activity_at_ms == framed


async def invoke(system: System, s: spb.Session, tool: str, **args: str) -> tpb.InvokeToolResponse:
    stub = tool_pb2_grpc.ToolServiceStub(system.channel("tool_service"))
    reply: tpb.InvokeToolResponse = await stub.InvokeTool(
        tpb.InvokeToolRequest(
            tool_name=tool,
            arguments=dict_to_struct(args),
            process_id=s.chat_process_id,
            session_id=s.session_id,
            tool_call_id=f"call_{marker()}",
        )
    )
    return reply


async def test_tool_calls_with_persistent_effects_are_not_abandoned(system: System) -> None:
    m = marker()
    forwarded = await new_session(system)  # put something into the user's inbox
    reply = await invoke(system, forwarded, "inbox_forward_to_user", title=m, body="keep this")
    assert reply.status == pb.TOOL_CALL_STATUS_SUCCESS, reply.error
    looked = await new_session(system)  # only read
    reply = await invoke(system, looked, "process_list")
    assert reply.status == pb.TOOL_CALL_STATUS_SUCCESS, reply.error
    assert (await system.process(forwarded.chat_process_id)).persistent_tool_calls == 1
    assert (await system.process(looked.chat_process_id)).persistent_tool_calls == 0
    outcome = await _expire(system, forwarded, looked)
    assert outcome == {
        forwarded.session_id: ("ARCHIVED", ""),
        looked.session_id: ("CLOSED", "ABANDONED"),
    }


async def test_the_stale_bind_sweep_waits_for_its_initial_delay(system: System) -> None:
    assert LifecycleConfig().stale_bind_initial_delay_ms == 2 * MIN
    s = await new_session(system)
    await system.sessions.BindSession(
        spb.BindSessionRequest(
            tenant_id="default", session_id=s.session_id, connection_id=f"conn_{marker()}"
        )
    )
    framed = (await get(system, s.session_id)).last_activity_at_ms
    stale_at = framed + LifecycleConfig().bind_stale_after_ms + 1
    # An hour ahead, so the lease the test system's own sweeps hold has expired for it.
    clock = ManualClock(now_ms() + HOUR)
    async with replica(system, clock, stale_bind_initial_delay_ms=10 * MIN) as other:
        early = await other.internal.RunSweeps(
            sipb.RunSweepsRequest(now_ms=stale_at, only_session_ids=[s.session_id])
        )
        assert list(early.skipped) == ["stale-bind"]  # the suspend and idle sweeps ran
        assert early.unbound == 0 and (await get(system, s.session_id)).bound_connection_id
        clock.advance(10 * MIN)
        later = await other.internal.RunSweeps(
            sipb.RunSweepsRequest(now_ms=stale_at, only_session_ids=[s.session_id])
        )
        assert not later.skipped and later.unbound == 1
    assert (await get(system, s.session_id)).bound_connection_id == ""
    assert await status(system, s.session_id) == "IDLE"
