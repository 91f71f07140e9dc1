"""Seed 002 §4-§6: the five lifecycle properties resolved once at session-create (recipe profile
blocks, then settings, then the caller), kept immutable with their sources and the profile;
and the RUNNING/IDLE roll-up of the session status over its engines."""

from __future__ import annotations

from typing import Any

from tests.harness import System, eventually
from tests.lifecycle_support import (
    DAY,
    HOUR,
    MIN,
    create,
    engines,
    get,
    marker,
    name,
    put_settings,
    recipes,
    status,
    wait_engine,
    wait_status,
)
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import session_pb2 as spb


def props(s: spb.Session) -> dict[str, Any]:
    lc = s.lifecycle
    return {
        "onDisconnect": name(rpb.OnDisconnect, lc.on_disconnect, "ON_DISCONNECT_"),
        "onIdle": name(rpb.OnIdle, lc.on_idle, "ON_IDLE_"),
        "onSuspend": name(rpb.OnSuspend, lc.on_suspend, "ON_SUSPEND_"),
        "idle": lc.idle_timeout_ms,
        "keep": lc.suspend_keep_duration_ms,
    }


def sources(s: spb.Session) -> dict[str, str]:
    src = s.lifecycle_sources
    return {
        f.name: name(rpb.LifecycleSource, getattr(src, f.name), "LIFECYCLE_SOURCE_")
        for f in rpb.LifecycleSources.DESCRIPTOR.fields
    }


async def test_properties_come_from_the_bootstrap_recipe_profile_blocks(system: System) -> None:
    client = await system.connect()
    expected = {
        # seed 002 §5 "Typical Combinations", as the bundled arthur recipe carries them
        "foot": ("KEEP_OPEN", "SUSPEND", "KEEP", HOUR, DAY),
        "web": ("KEEP_OPEN", "SUSPEND", "KEEP", 30 * MIN, DAY),
        "mobile": ("KEEP_OPEN", "SUSPEND", "KEEP", 30 * MIN, DAY),
        "default": ("KEEP_OPEN", "SUSPEND", "KEEP", 30 * MIN, DAY),
    }
    for profile, (disc, idle, susp, idle_ms, keep_ms) in expected.items():
        created = await create(client, profile=profile)
        s = await get(system, created["sessionId"])
        assert props(s) == {
            "onDisconnect": disc,
            "onIdle": idle,
            "onSuspend": susp,
            "idle": idle_ms,
            "keep": keep_ms,
        }, profile
        assert s.profile == profile  # kept for audit; lifecycle code never reads it
        assert s.bootstrap_recipe == "arthur"
        assert set(sources(s).values()) == {"RECIPE_PROFILE"}
    # daemon: the profile block names only onDisconnect; the rest falls through per property.
    daemon = await get(system, (await create(client, profile="daemon"))["sessionId"])
    assert props(daemon)["onDisconnect"] == "CLOSE"
    assert sources(daemon)["on_disconnect"] == "RECIPE_PROFILE"
    assert sources(daemon)["idle_timeout_ms"] != "RECIPE_PROFILE"
    await client.close()


async def test_event_driven_recipe_settings_and_caller_override_in_that_order(
    system: System,
) -> None:
    m = marker()
    project = f"lc-{m}"
    await system.sessions.CreateProject(
        spb.CreateProjectRequest(tenant_id="default", project_id=project, title=project)
    )
    recipe = f"news-{m}"
    await recipes(system).CreateRecipe(
        rpb.CreateRecipeRequest(
            tenant_id="default",
            project_id=project,
            name=recipe,
            yaml=(
                "description: event news\nengine: arthur\nprofiles:\n  default:\n    session:\n"
                "      onDisconnect: KEEP_OPEN\n      onIdle: SUSPEND\n      onSuspend: CLOSE\n"
                "      idleTimeoutMs: 0\n      suspendKeepDurationMs: 0\n"
            ),
        )
    )
    client = await system.connect()
    event = await get(system, (await create(client, projectId=project, recipe=recipe))["sessionId"])
    assert props(event) == {
        "onDisconnect": "KEEP_OPEN",
        "onIdle": "SUSPEND",
        "onSuspend": "CLOSE",
        "idle": 0,
        "keep": 0,
    }
    assert event.bootstrap_recipe == recipe
    assert sources(event)["on_suspend"] == "RECIPE_PROFILE"  # the session profile is `default`
    # Settings (tenant -> project) beat the recipe; the caller beats both.
    await put_settings(system, f"default:{project}", {"vance.session.idleTimeoutMs": "7200000"})
    by_settings = await get(
        system, (await create(client, projectId=project, recipe=recipe))["sessionId"]
    )
    assert props(by_settings)["idle"] == 2 * HOUR
    assert sources(by_settings)["idle_timeout_ms"] == "SETTINGS"
    by_caller = await get(
        system,
        (
            await create(
                client,
                projectId=project,
                recipe=recipe,
                lifecycle={"idleTimeoutMs": 5000, "onSuspend": "KEEP"},
            )
        )["sessionId"],
    )
    assert props(by_caller)["idle"] == 5000 and props(by_caller)["onSuspend"] == "KEEP"
    assert sources(by_caller)["idle_timeout_ms"] == "CALLER"
    assert sources(by_caller)["on_suspend"] == "CALLER"
    # Immutable: neither a recipe edit nor a settings change reaches existing sessions.
    await recipes(system).UpdateRecipe(
        rpb.UpdateRecipeRequest(
            tenant_id="default",
            project_id=project,
            name=recipe,
            yaml="description: changed\nengine: arthur\nprofiles:\n  default:\n    session:\n"
            "      onSuspend: KEEP\n",
        )
    )
    await put_settings(system, f"default:{project}", {"vance.session.idleTimeoutMs": "1"})
    assert props(await get(system, event.session_id))["onSuspend"] == "CLOSE"
    assert props(await get(system, by_settings.session_id))["idle"] == 2 * HOUR
    bad = await client.request(
        "session-create", {"projectId": project, "lifecycle": {"onIdle": "X"}}
    )
    assert bad["type"] == "error" and bad["data"]["reason"] == "bad_lifecycle"
    await client.close()


async def test_session_status_rolls_up_over_its_engines(system: System) -> None:
    """§4: RUNNING while an engine runs, is BLOCKED or PAUSED (the user is engaged); IDLE when
    every non-CLOSED engine is IDLE or SUSPENDED, or there is none."""
    m = marker()
    client = await system.connect()
    created = await create(client)
    sid, chat = created["sessionId"], created["chatProcessId"]
    await wait_engine(system, chat, "IDLE")
    await wait_status(system, sid, "IDLE")
    # RUNNING: a slow turn.
    system.script(Rule(match_last=f"{m} slow", text="done slowly", delay_ms=1500))
    await client.ok("process-steer", {"processId": chat, "content": f"{m} slow"})
    await wait_status(system, sid, "RUNNING")
    await wait_engine(system, chat, "IDLE")
    await wait_status(system, sid, "IDLE")
    # BLOCKED counts as busy: the engine waits for the user.
    system.script(
        Rule(
            match_last=f"{m} ask me",
            tool_calls=[
                {
                    "name": "respond",
                    "arguments": {"message": "Which one?", "awaiting_user_input": True},
                }
            ],
        )
    )
    await client.ok("process-steer", {"processId": chat, "content": f"{m} ask me"})
    await wait_engine(system, chat, "BLOCKED")
    assert await status(system, sid) == "RUNNING"
    await client.ok("process-steer", {"processId": chat, "content": f"{m} this one"})
    await wait_engine(system, chat, "IDLE")
    await wait_status(system, sid, "IDLE")
    # PAUSED counts as busy: the user stopped and wants to come back.
    await client.ok("process-pause", {"processId": chat})
    await wait_engine(system, chat, "PAUSED")
    assert await status(system, sid) == "RUNNING"
    await client.ok("process-resume", {"processId": chat})
    await wait_status(system, sid, "IDLE")
    # SUSPENDED alone (e.g. a pod shutdown) counts as idle.
    await system.processes_internal.SuspendProcesses(
        pipb.SessionCascadeRequest(
            session_id=sid, suspend_cause=pb.SUSPEND_CAUSE_FORCED, process_ids=[chat]
        )
    )
    assert (await engines(system, sid))["chat"] == "SUSPENDED"
    assert await status(system, sid) == "IDLE"
    await system.processes_internal.ResumeProcesses(
        pipb.SessionCascadeRequest(session_id=sid, process_ids=[chat])
    )
    await wait_engine(system, chat, "IDLE")
    # A CLOSED engine no longer counts; a session without engines is IDLE.
    await client.ok("process-stop", {"processId": chat})
    assert await status(system, sid) == "IDLE"
    autonomous = await create(client, autonomous=True)
    assert await status(system, autonomous["sessionId"]) == "IDLE"

    async def no_engines() -> bool:
        return await engines(system, autonomous["sessionId"]) == {}

    await eventually(no_engines)
    await client.close()
