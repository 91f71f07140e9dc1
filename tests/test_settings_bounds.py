"""Settings with bounds: an out-of-range value is refused where it is written, and a value
already in the store that fails today's checks never makes a project's session-create fail."""

from __future__ import annotations

import httpx

from tests.harness import System
from tests.lifecycle_support import get
from tests.sessions_support import word
from vance.store import connect
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import session_pb2 as spb


async def test_a_bad_stored_setting_falls_back_to_the_default(system: System) -> None:
    project = f"p{word()}"
    await system.sessions.CreateProject(
        spb.CreateProjectRequest(tenant_id="default", project_id=project, title=project)
    )
    # A value stored before the bound existed, written straight into the store (before the
    # admin's write below, which keeps it: session_service reads the documents it wrote again,
    # not ones changed behind its back).
    client, db = connect(system.config)
    try:
        await db["settings"].update_one(
            {"_id": f"default:{project}"},
            {"$push": {"values": {"key": "vance.session.idleTimeoutMs", "value": "9" * 30}}},
            upsert=True,
        )
    finally:
        await client.close()
    admin = await system.login()
    async with httpx.AsyncClient(
        base_url=f"http://{system.gateway}/brain/default",
        headers={"Authorization": f"Bearer {admin}"},
        timeout=30,
    ) as http:
        for value in ("9" * 30, str(2**63), "315360000001"):
            r = await http.patch(
                f"/project/{project}/settings", json={"set": {"vance.session.idleTimeoutMs": value}}
            )
            assert r.status_code == 400 and r.json()["detail"]["reason"] == "invalid_setting"
        ok = await http.patch(
            f"/project/{project}/settings", json={"set": {"vance.session.onIdle": "SUSPEND"}}
        )
        assert ok.status_code == 200, ok.text
        # The stored bad value is still there, and skipped.
        assert ok.json()["values"]["vance.session.idleTimeoutMs"] == "9" * 30
        assert "vance.session.idleTimeoutMs" not in ok.json()["effective"]
    socket = await system.connect(admin)
    created = await socket.ok("session-create", {"projectId": project})
    session = await get(system, created["sessionId"])
    # The good value applies; the bad one is skipped for the built-in default.
    default = await socket.ok("session-create", {"projectId": "demo"})
    assert (
        session.lifecycle.idle_timeout_ms
        == (await get(system, default["sessionId"])).lifecycle.idle_timeout_ms
    )
    assert session.lifecycle.on_idle == rpb.OnIdle.Value("ON_IDLE_SUSPEND")
    await socket.close()
