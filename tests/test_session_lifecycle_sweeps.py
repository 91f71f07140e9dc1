"""Seed 002 §7, §9, §9.1, §10: the idle sweep and what prevents it, each suspend cause with each
onSuspend outcome (transitionAt and the FORCED floor), abandoned versus kept, one sweeping
replica at a time, forced suspend with manual resume, extend and auto-restart. Time is moved
by RunSweeps(now_ms), never waited for."""

from __future__ import annotations

import asyncio
from typing import Any

from session_service.domain.models import Session
from session_service.lifecycle.sweepers import resume_paced
from tests.harness import System, eventually
from tests.lifecycle_support import (
    DAY,
    HOUR,
    MIN,
    cut_off,
    engines,
    get,
    marker,
    name,
    now_ms,
    put_settings,
    replica,
    rest,
    status,
    sweep,
    wait_engine,
)
from vance.clock import ManualClock
from vance.config import AutoRestartConfig, LifecycleConfig
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import session_pb2 as spb


async def new_session(
    system: System,
    *,
    tenant: str = "default",
    project: str = "demo",
    autonomous: bool = False,
    **lifecycle: Any,
) -> spb.Session:
    """A session over gRPC (no connection bound), with caller lifecycle values."""
    caller = rpb.LifecycleProperties()
    for key, value in lifecycle.items():
        if key in ("idle_timeout_ms", "suspend_keep_duration_ms"):
            setattr(caller, key, value)
        else:
            prefix = {"on_disconnect": "ON_DISCONNECT_", "on_idle": "ON_IDLE_"}.get(
                key, "ON_SUSPEND_"
            )
            setattr(caller, key, f"{prefix}{value}")
    s: spb.Session = await system.sessions.CreateSession(
        spb.CreateSessionRequest(
            tenant_id=tenant,
            project_id=project,
            owner_user_id="dev",
            autonomous=autonomous,
            lifecycle=caller,
        )
    )
    if s.chat_process_id:
        await wait_engine(system, s.chat_process_id, "IDLE")
    return s


async def qa(system: System, s: spb.Session, text: str) -> None:
    """One completed question-and-answer pair in the session's chat."""
    await system.processes.Steer(
        ppb.SteerRequest(
            target=ppb.ProcessRef(process_id=s.chat_process_id, session_id=s.session_id),
            message=pb.SteerMessage(user_chat_input=pb.UserChatInput(content=text)),
        )
    )

    async def answered() -> bool:
        msgs = await system.processes.ListChatMessages(
            ppb.ListChatMessagesRequest(process_id=s.chat_process_id, session_id=s.session_id)
        )
        return any(m.role == pb.CHAT_ROLE_ASSISTANT and text in m.content for m in msgs.messages)

    await eventually(answered, what=f"the answer to {text!r}")
    await wait_engine(system, s.chat_process_id, "IDLE")


def cause(s: spb.Session) -> str:
    return name(pb.SuspendCause, s.suspend_cause, "SUSPEND_CAUSE_") if s.suspend_cause else ""


def reason(s: spb.Session) -> str:
    return name(pb.CloseReason, s.close_reason, "CLOSE_REASON_") if s.close_reason else ""


def ref(s: spb.Session) -> ppb.ProcessRef:
    return ppb.ProcessRef(process_id=s.chat_process_id, session_id=s.session_id)


async def test_idle_sweep_per_engine_status_and_what_prevents_it(system: System) -> None:
    """§7: the session is idle when no non-CLOSED engine is RUNNING, BLOCKED or PAUSED."""
    m = marker()
    cases: dict[str, spb.Session] = {}
    cases["no engines"] = await new_session(system, autonomous=True)
    init = await new_session(system, autonomous=True)
    await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default",
            project_id="demo",
            session_id=init.session_id,
            name="later",
            engine="arthur",
            start=False,
        )
    )
    cases["INIT"] = init
    cases["IDLE"] = await new_session(system)
    suspended = cases["SUSPENDED"] = await new_session(system)
    await system.processes_internal.SuspendProcesses(
        pipb.SessionCascadeRequest(
            session_id=suspended.session_id,
            suspend_cause=pb.SUSPEND_CAUSE_FORCED,
            process_ids=[suspended.chat_process_id],
        )
    )
    closed = cases["CLOSED"] = await new_session(system)
    await system.processes.Stop(ref(closed))
    paused = cases["PAUSED"] = await new_session(system)
    await system.processes.Pause(ref(paused))
    blocked = cases["BLOCKED"] = await new_session(system)
    system.script(
        Rule(
            match_last=f"{m} ask",
            tool_calls=[
                {"name": "respond", "arguments": {"message": "Which?", "awaiting_user_input": True}}
            ],
        ),
        Rule(match_last=f"{m} slow", text="slowly", delay_ms=3000),
    )
    await system.processes.Steer(
        ppb.SteerRequest(
            target=ref(blocked),
            message=pb.SteerMessage(user_chat_input=pb.UserChatInput(content=f"{m} ask")),
        )
    )
    await wait_engine(system, blocked.chat_process_id, "BLOCKED")
    no_idle = cases["onIdle NONE"] = await new_session(system, on_idle="NONE")
    running = cases["RUNNING"] = await new_session(system)
    await system.processes.Steer(
        ppb.SteerRequest(
            target=ref(running),
            message=pb.SteerMessage(user_chat_input=pb.UserChatInput(content=f"{m} slow")),
        )
    )
    await wait_engine(system, running.chat_process_id, "RUNNING")
    ids = [s.session_id for s in cases.values()]
    latest = max([(await get(system, sid)).last_activity_at_ms for sid in ids])
    # Not yet: every session was active within its idle timeout (30 min).
    early = await sweep(system, latest + 29 * MIN, *ids)
    assert early.idle_suspended == 0
    at = latest + 2 * HOUR
    report = await sweep(system, at, *ids)
    expected = {
        "no engines": "SUSPENDED",
        "INIT": "SUSPENDED",
        "IDLE": "SUSPENDED",
        "SUSPENDED": "SUSPENDED",
        "CLOSED": "SUSPENDED",
        "PAUSED": "RUNNING",
        "BLOCKED": "RUNNING",
        "RUNNING": "RUNNING",
        "onIdle NONE": "IDLE",
    }
    got = {case: await status(system, s.session_id) for case, s in cases.items()}
    assert got == expected
    assert report.idle_suspended == 5
    for case in ("IDLE", "INIT"):
        s = await get(system, cases[case].session_id)
        assert cause(s) == "IDLE" and s.suspended_at_ms == at
        assert s.transition_at_ms == at + DAY  # IDLE x KEEP
        assert set((await engines(system, s.session_id)).values()) == {"SUSPENDED"}
    assert (await engines(system, closed.session_id)) == {"chat": "CLOSED"}
    assert no_idle.lifecycle.on_idle == rpb.ON_IDLE_NONE
    await wait_engine(system, running.chat_process_id, "IDLE")


async def test_the_prefilter_and_a_pinging_client_keep_a_session_open(system: System) -> None:
    s = await new_session(system, idle_timeout_ms=0)  # "close as soon as nothing is left"
    last = (await get(system, s.session_id)).last_activity_at_ms
    assert (await sweep(system, last + 10_000, s.session_id)).idle_suspended == 0  # pre-filter
    # A heartbeat moves lastActivityAt: the sweep measures from the last frame.
    await system.sessions.BindSession(
        spb.BindSessionRequest(
            tenant_id="default", session_id=s.session_id, connection_id=f"conn_{marker()}"
        )
    )
    beat = (await get(system, s.session_id)).last_activity_at_ms
    assert beat >= last
    assert (await sweep(system, beat + 29_000, s.session_id)).idle_suspended == 0
    assert (await sweep(system, beat + 31_000, s.session_id)).idle_suspended == 1


async def test_each_suspend_cause_with_each_on_suspend_outcome(system: System) -> None:
    """§9: transitionAt per cause and onSuspend, then ARCHIVED (KEEP) or CLOSED (CLOSE)."""
    m = marker()
    keep = HOUR  # shorter than the FORCED floor, to show the floor wins
    rows: list[tuple[str, str, spb.Session]] = []
    for c in ("IDLE", "DISCONNECT", "FORCED"):
        for outcome in ("KEEP", "CLOSE"):
            disc = "SUSPEND" if c == "DISCONNECT" else "KEEP_OPEN"
            s = await new_session(
                system, on_suspend=outcome, suspend_keep_duration_ms=keep, on_disconnect=disc
            )
            await qa(system, s, f"{m} {c} {outcome}")  # one Q&A pair: not abandoned
            rows.append((c, outcome, s))
    for c, _, s in rows:
        sid = s.session_id
        if c == "IDLE":
            last = (await get(system, sid)).last_activity_at_ms
            await sweep(system, last + 31 * MIN, sid)
        elif c == "DISCONNECT":
            conn = f"conn_{marker()}"
            await system.sessions.BindSession(
                spb.BindSessionRequest(tenant_id="default", session_id=sid, connection_id=conn)
            )
            await system.sessions.ReleaseBind(
                spb.ReleaseBindRequest(session_id=sid, connection_id=conn, disconnect=True)
            )
        else:
            await system.sessions.SuspendSession(spb.SuspendSessionRequest(**_op(sid)))
    floor = 7 * DAY
    for c, outcome, s in rows:
        got = await get(system, s.session_id)
        delay = floor if c == "FORCED" else (keep if outcome == "KEEP" else 0)
        if delay == 0 and await status(system, s.session_id) == "CLOSED":
            # Due at once (CLOSE, no keep): the system's own sweeper may have closed it
            # already, while the later rows were being suspended; then it did what the sweep
            # below would have done.
            done = await get(system, s.session_id)
            assert reason(done) == "AUTO_CLOSE", (c, outcome)
            chat = await system.process(s.chat_process_id)
            assert name(pb.CloseReason, chat.close_reason, "CLOSE_REASON_") == "AUTO_CLOSE"
            continue
        assert await status(system, s.session_id) == "SUSPENDED" and cause(got) == c
        assert got.transition_at_ms == got.suspended_at_ms + delay, (c, outcome)
        if delay:
            before = await sweep(system, got.transition_at_ms - 1, s.session_id)
            assert before.archived + before.auto_closed + before.abandoned == 0
        await sweep(system, got.transition_at_ms, s.session_id)
        done = await get(system, s.session_id)
        if outcome == "KEEP":
            assert await status(system, s.session_id) == "ARCHIVED", (c, outcome)
            assert done.archived_at_ms == got.transition_at_ms
            engine_reason = "ARCHIVED"
        else:
            assert await status(system, s.session_id) == "CLOSED", (c, outcome)
            assert reason(done) == "AUTO_CLOSE"
            engine_reason = "AUTO_CLOSE"
        assert done.transition_at_ms == 0 and done.bound_connection_id == ""
        chat = await system.process(s.chat_process_id)
        assert name(pb.CloseReason, chat.close_reason, "CLOSE_REASON_") == engine_reason


def _op(sid: str, tenant: str = "default") -> dict[str, Any]:
    return {"tenant_id": tenant, "session_id": sid}


async def test_abandoned_sessions_skip_the_archive_and_kept_ones_do_not(system: System) -> None:
    """§9.1: no Q&A pair, no side effect and no user investment -> CLOSED/ABANDONED."""
    m = marker()
    throwaway = await new_session(system)
    talked = await new_session(system)
    await qa(system, talked, f"{m} worth keeping")
    spawned = await new_session(system)
    await system.processes_internal.CreateProcess(
        pipb.CreateProcessRequest(
            tenant_id="default",
            project_id="demo",
            session_id=spawned.session_id,
            name="helper",
            engine="arthur",
            start=True,
        )
    )
    touched = await new_session(system)
    # the user pins it (session_service/search/session_metadata.py)
    await system.sessions.UpdateMetadata(
        spb.UpdateMetadataRequest(
            tenant_id="default",
            session_id=touched.session_id,
            caller=spb.Caller(user_id="dev"),
            pinned=True,
        )
    )
    outcome = await _expire(system, throwaway, talked, spawned, touched)
    assert outcome == {
        throwaway.session_id: ("CLOSED", "ABANDONED"),
        talked.session_id: ("ARCHIVED", ""),
        spawned.session_id: ("ARCHIVED", ""),
        touched.session_id: ("ARCHIVED", ""),
    }
    # Tenant settings: a stricter threshold, and detection switched off.
    tenant = f"t{m}"
    await _tenant(system, tenant)
    await put_settings(
        system,
        tenant,
        {
            "vance.session.abandoned-detection.min-qa-pairs": "2",
            "vance.session.forced-floor-ms": str(HOUR),  # the tenant's own FORCED floor
        },
    )
    floored = await new_session(system, tenant=tenant, project="p")
    forced = await system.sessions.SuspendSession(
        spb.SuspendSessionRequest(**_op(floored.session_id, tenant))
    )
    assert forced.transition_at_ms == forced.suspended_at_ms + HOUR
    single = await new_session(system, tenant=tenant, project="p")
    await qa(system, single, f"{m} only one")
    strict = await _expire(system, single, tenant=tenant)
    assert strict[single.session_id] == ("CLOSED", "ABANDONED")
    await put_settings(system, tenant, {"vance.session.abandoned-detection.enabled": "false"})
    silent = await new_session(system, tenant=tenant, project="p")
    assert (await _expire(system, silent, tenant=tenant))[silent.session_id] == ("ARCHIVED", "")


async def _tenant(system: System, tenant: str) -> None:
    await system.sessions.CreateUser(
        spb.CreateUserRequest(tenant_id=tenant, username="dev", password="x", roles=["admin"])
    )
    await system.sessions.CreateProject(
        spb.CreateProjectRequest(tenant_id=tenant, project_id="p", title="p")
    )


async def _expire(
    system: System, *sessions: spb.Session, tenant: str = "default"
) -> dict[str, tuple[str, str]]:
    """Suspends (admin, FORCED) and sweeps past the floor; returns (status, closeReason)."""
    out = {}
    for s in sessions:
        suspended = await system.sessions.SuspendSession(
            spb.SuspendSessionRequest(**_op(s.session_id, tenant))
        )
        await sweep(system, suspended.transition_at_ms, s.session_id)
        done = await get(system, s.session_id, tenant)
        out[s.session_id] = (name(pb.SessionStatus, done.status, "SESSION_STATUS_"), reason(done))
    return out


async def test_one_replica_sweeps_at_a_time(system: System) -> None:
    s = await new_session(system)
    async with replica(system, ManualClock(now_ms())) as other:
        reports = await asyncio.gather(
            system.sessions_internal.RunSweeps(
                sipb.RunSweepsRequest(only_session_ids=[s.session_id])
            ),
            other.internal.RunSweeps(sipb.RunSweepsRequest(only_session_ids=[s.session_id])),
        )
        ran = [r for r in reports if not r.skipped]
        assert len(ran) == 1
        assert list(next(r for r in reports if r.skipped).skipped) == [
            "stale-bind",
            "suspend",
            "idle",
        ]
    # A stopped replica gives the lease back: the other one sweeps at once.
    assert not (await sweep(system, now_ms(), s.session_id)).skipped


async def test_forced_suspend_resume_for_every_cause_extend_and_auto_restart(
    system: System,
) -> None:
    m = marker()
    token = await system.login()
    # A FORCED suspend cuts a running turn off; its message is handled after the resume.
    running = await new_session(system, on_suspend="CLOSE", suspend_keep_duration_ms=0)
    system.script(Rule(match_last=f"{m} long job", text="never committed", delay_ms=3000))
    await system.processes.Steer(
        ppb.SteerRequest(
            target=ref(running),
            message=pb.SteerMessage(user_chat_input=pb.UserChatInput(content=f"{m} long job")),
        )
    )
    await wait_engine(system, running.chat_process_id, "RUNNING")
    forced = await system.sessions.SuspendSession(
        spb.SuspendSessionRequest(**_op(running.session_id))
    )
    assert cause(forced) == "FORCED"
    assert forced.transition_at_ms == forced.suspended_at_ms + 7 * DAY  # floor beats CLOSE
    assert await engines(system, running.session_id) == {"chat": "SUSPENDED"}
    # §3: a SUSPENDED engine takes messages without waking.
    deferred = await system.processes.Steer(
        ppb.SteerRequest(
            target=ref(running),
            message=pb.SteerMessage(user_chat_input=pb.UserChatInput(content=f"{m} later")),
        )
    )
    assert deferred.outcome == pb.DELIVERY_OUTCOME_DEFERRED
    # Extend: later only.
    path = f"/brain/default/session/{running.session_id}"
    longer = await rest(system, "POST", f"{path}/extend", token, {"extendByMs": DAY})
    assert longer.status_code == 200
    assert longer.json()["transitionAt"] == forced.transition_at_ms + DAY
    earlier = await rest(system, "POST", f"{path}/extend", token, {"transitionAt": 1})
    assert earlier.json()["transitionAt"] == forced.transition_at_ms + DAY
    # Manual resume over REST; both messages are handled, the cut-off one again.
    resumed = await rest(system, "POST", f"{path}/resume", token)
    assert resumed.status_code == 200 and resumed.json()["status"] in ("IDLE", "RUNNING")
    assert resumed.json()["suspendCause"] is None and resumed.json()["transitionAt"] is None

    async def handled() -> bool:
        msgs = await system.processes.ListChatMessages(
            ppb.ListChatMessagesRequest(process_id=running.chat_process_id)
        )
        users = [x.content for x in msgs.messages if x.role == pb.CHAT_ROLE_USER]
        return f"{m} long job" in users and f"{m} later" in users

    await eventually(handled, what="the interrupted and the deferred message handled")
    again = await rest(system, "POST", f"{path}/resume", token)  # idempotent
    assert again.status_code == 200 and again.json()["status"] in ("IDLE", "RUNNING")
    bad = await rest(system, "POST", f"{path}/extend", token, {"extendByMs": DAY})
    assert bad.status_code == 409
    # Manual resume works for IDLE and DISCONNECT suspends too.
    idle = await new_session(system)
    await sweep(
        system, (await get(system, idle.session_id)).last_activity_at_ms + HOUR, idle.session_id
    )
    disc = await new_session(system, on_disconnect="SUSPEND")
    await system.sessions.BindSession(
        spb.BindSessionRequest(tenant_id="default", session_id=disc.session_id, connection_id="c1")
    )
    await system.sessions.ReleaseBind(
        spb.ReleaseBindRequest(session_id=disc.session_id, connection_id="c1", disconnect=True)
    )
    for s, c in ((idle, "IDLE"), (disc, "DISCONNECT")):
        assert cause(await get(system, s.session_id)) == c
        r = await rest(system, "POST", f"/brain/default/session/{s.session_id}/resume", token)
        assert r.status_code == 200 and r.json()["status"] == "IDLE"
        assert await engines(system, s.session_id) == {"chat": "IDLE"}
    # Auto-restart resumes FORCED suspends only, on request and on boot; and only those a
    # replica's loss cut off, not an admin's deliberate suspend (seed 002 §10.1).
    f1 = await new_session(system)
    f2 = await new_session(system)
    idle2 = await new_session(system)
    on_purpose = await new_session(system)
    for s in (f1, f2):
        await cut_off(system, s.session_id)
    await system.sessions.SuspendSession(spb.SuspendSessionRequest(**_op(on_purpose.session_id)))
    await sweep(
        system, (await get(system, idle2.session_id)).last_activity_at_ms + HOUR, idle2.session_id
    )
    restarted = await system.sessions_internal.RestartForced(
        sipb.RestartForcedRequest(
            max_concurrent=2,
            delay_between_ms=0,
            only_session_ids=[
                f1.session_id,
                f2.session_id,
                idle2.session_id,
                on_purpose.session_id,
            ],
        )
    )
    assert restarted.resumed == 2
    assert [await status(system, s.session_id) for s in (f1, f2, idle2, on_purpose)] == [
        "IDLE",
        "IDLE",
        "SUSPENDED",
        "SUSPENDED",
    ]
    f3 = await new_session(system)
    await cut_off(system, f3.session_id)
    boot = AutoRestartConfig(enabled=True, max_concurrent=2, delay_between_ms=0)
    async with replica(system, ManualClock(now_ms()), auto_restart_forced=boot):

        async def restarted_on_boot() -> bool:
            return await status(system, f3.session_id) == "IDLE"

        await eventually(restarted_on_boot, what="the boot pass resuming a FORCED session")
    assert await status(system, idle2.session_id) == "SUSPENDED"
    assert await status(system, on_purpose.session_id) == "SUSPENDED"


async def test_auto_restart_respects_max_concurrent_and_survives_failures() -> None:
    sessions = [
        Session(session_id=f"s{i}", tenant_id="t", project_id="p", owner_user_id="u")
        for i in range(7)
    ]
    in_flight, peak = 0, 0
    release = asyncio.Event()

    async def resume(session: Session) -> Session:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            await release.wait()
            if session.session_id == "s3":
                raise RuntimeError("this one fails")
            return session
        finally:
            in_flight -= 1

    async with asyncio.TaskGroup() as tg:
        run = tg.create_task(resume_paced(sessions, resume, max_concurrent=3, delay_between_ms=0))
        await eventually(lambda: in_flight == 3)
        release.set()
    assert run.result() == 6 and peak == 3
    assert LifecycleConfig().auto_restart_forced.enabled is False  # off by default
