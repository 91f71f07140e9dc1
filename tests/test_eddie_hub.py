"""The hub's rules: a user's home is theirs alone, SYSTEM projects cannot be deleted, every hub
connection gets its own session and Eddie, `mediate` follows the profile's capabilities, and
the spoken language and its voice rules are resolved per turn."""

from __future__ import annotations

import uuid

from tests.eddie_support import act, eddie_says, hub, rest
from tests.harness import System, eventually
from tests.sessions_support import new_user
from vance.testing.scripted_llm import Rule
from vance.v1 import session_pb2 as spb


async def test_a_hub_is_invisible_and_closed_to_other_users(system: System) -> None:
    owner, owner_token = await new_user(system)
    _, other_token = await new_user(system)
    _, admin_token = await new_user(system, admin=True)
    home = f"_user_{owner}"
    for token in (other_token, admin_token):
        listed = (await rest(system, "GET", "/projects?kind=ALL", token)).json()["projects"]
        assert home not in [p["projectId"] for p in listed]
        client = await system.connect(token)
        refused = await client.request("session-create", {"projectId": home})
        assert refused["type"] == "error" and refused["data"]["errorCode"] == 403, refused
        await client.close()
    # The owner's hub session cannot be resumed by anyone else, tenant admins included.
    client, opened = await hub(system, owner_token)
    await client.close()
    # Not in an admin's session lists either; in the owner's.
    for token, shown in ((admin_token, False), (owner_token, True)):
        listed = (await rest(system, "GET", "/sessions", token)).json()["sessions"]
        assert (opened["sessionId"] in [x["sessionId"] for x in listed]) is shown
    intruder = await system.connect(admin_token)
    refused = await intruder.request("session-resume", {"sessionId": opened["sessionId"]})
    assert refused["type"] == "error" and refused["data"]["reason"] == "hub_foreign", refused
    await intruder.close()
    # SYSTEM projects are never deleted (409); another user's hub is not even found.
    gone = await rest(system, "DELETE", f"/projects/{home}", owner_token)
    assert gone.status_code == 409 and gone.json()["detail"]["reason"] == "project_system"
    assert (await rest(system, "DELETE", f"/projects/{home}", other_token)).status_code == 404
    assert (await rest(system, "GET", "/projects?kind=BOGUS", owner_token)).status_code == 400


async def test_each_hub_connection_gets_its_own_session_and_eddie(system: System) -> None:
    user, token = await new_user(system)
    first, a = await hub(system, token)
    second, b = await hub(system, token)
    assert a["sessionId"] != b["sessionId"]
    assert a["chatProcessId"] != b["chatProcessId"]
    for opened in (a, b):
        assert opened["chatEngine"] == "eddie" and opened["projectId"] == f"_user_{user}"
        eddie = await system.process(opened["chatProcessId"])
        assert eddie.engine == "eddie"
    # A connection that leaves frees its session; the next hub connection takes it up again.
    await second.close()

    async def released() -> bool:
        s = await system.sessions.GetSession(
            spb.GetSessionRequest(tenant_id="default", session_id=b["sessionId"])
        )
        return not s.bound_connection_id

    await eventually(released, what="the second hub session to be free")
    third, c = await hub(system, token)
    assert c["sessionId"] == b["sessionId"] and c["chatProcessId"] == b["chatProcessId"]
    await first.close()
    await third.close()


async def test_mediate_switches_a_web_client_and_is_refused_for_mobile(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"med_{m}"
    _, token = await new_user(system)
    system.script(
        act("project_create", f"{m} make project", name=project),
        act("answer", project, match=f"{m} make project", message="Made it."),
        act(
            "mediate",
            f"{m} web switch",
            target=project,
            reason="client files",
            voiceAnnouncement=f"Connecting you to Arthur {m}",
        ),
        act("mediate", f"{m} mobile switch", target=project, reason="client files"),
    )
    web, _ = await hub(system, token, "web")
    await web.ok("process-steer", {"content": f"{m} make project"})
    await eddie_says(web, "Made it.")
    await web.ok("process-steer", {"content": f"{m} web switch"})
    switch = await web.wait_for(lambda f: f["type"] == "switch-to", timeout=45, what="switch-to")
    sessions = await system.sessions.ListSessions(
        spb.ListSessionsRequest(tenant_id="default", project_id=project)
    )
    worker = sessions.sessions[0]
    assert switch["data"] == {
        "targetSessionId": worker.session_id,
        "targetProjectId": project,
        "targetProcessName": "chat",
        "voiceAnnouncement": f"Connecting you to Arthur {m}",
    }
    said = await eddie_says(web, f"Connecting you to Arthur {m}")
    assert said["meta"]["action"] == "mediate"
    await web.close()

    mobile, _ = await hub(system, token, "mobile")
    await mobile.ok("process-steer", {"content": f"{m} mobile switch"})
    said = await eddie_says(mobile, "can't hand you over")
    assert said["meta"]["mediateRefused"] == "profile_cannot_mediate"
    assert not mobile.of_type("switch-to")
    await mobile.close()


def _prompt_of(system: System, marker: str) -> str:
    requests = [r for r in system.model_requests(marker) if marker in str(r["messages"][-1])]
    assert requests, f"no model request for {marker}"
    return str(requests[-1]["messages"][0]["content"])


async def test_language_switches_mid_session_and_unknown_languages_bootstrap(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    _, token = await new_user(system)
    unknown, failing = f"sw-{m}", f"xh-{m}"
    system.script(
        Rule(match="speech conventions", match_last=unknown, text=f"- Swahili rule {m}"),
        Rule(match="speech conventions", match_last=failing, fail_status=500, repeat=True),
        Rule(match_last=f"{m} turn", text="ok", repeat=True),
    )
    client, _ = await hub(system, token)

    async def turn(n: int) -> str:
        await client.ok("process-steer", {"content": f"{m} turn {n}"})
        await client.wait_for(
            lambda f: f["type"] == "chat-message-appended" and f"{m} turn {n}" in str(f),
            timeout=45,
            what=f"turn {n}",
        )
        await eddie_says(client, "ok")
        client.frames.clear()
        return _prompt_of(system, f"{m} turn {n}")

    first = await turn(1)
    assert "Speak en" in first and "at most 15 words" in first
    await _my_language(system, token, "de")
    second = await turn(2)
    assert "Speak de" in second and "Perfekt statt Präteritum" in second

    # Unknown: English rules at once, rules bootstrapped for the next turn (tenant level).
    await _my_language(system, token, unknown)
    third = await turn(3)
    assert f"Speak {unknown}" in third and "at most 15 words" in third
    fourth = await eventually(lambda: turn(4), what="the bootstrapped rules", timeout=60)
    assert f"Swahili rule {m}" in fourth

    # A failing bootstrap leaves English in place.
    await _my_language(system, token, failing)
    fifth = await turn(5)
    sixth = await turn(6)
    for prompt in (fifth, sixth):
        assert f"Speak {failing}" in prompt and "at most 15 words" in prompt
    assert system.llm.script.requests  # the failing call was made
    assert any(
        failing in str(r["messages"]) and "speech conventions" in str(r["messages"])
        for r in system.llm.script.requests
    )
    await client.close()


async def _my_language(system: System, token: str, language: str) -> None:
    """The user sets their own language, without admin rights (their hub's settings are
    theirs alone: an admin cannot set them)."""
    r = await rest(system, "PATCH", "/me/settings", token, {"set": {"chat.language": language}})
    assert r.status_code == 200, r.text
