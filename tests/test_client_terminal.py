"""`vance chat` (clients/python/vance_client/terminal) in a real terminal: tmux runs the
installed `vance` command against the running system, the test types keys and reads the screen.
Sign-in with the token kept at mode 0600, a streamed answer, ESC pausing the session, Eddie's
switch-to and /hub back, an ask_user answered by number, and a reconnect after the gateway
restarts that shows nothing twice."""

from __future__ import annotations

import asyncio
import stat
import uuid
from pathlib import Path

from tests.client_support import Terminal, terminal, vance_bin
from tests.eddie_support import act
from tests.harness import System, eventually
from tests.sessions_support import new_user
from tests.test_arthur_flow import child_asks
from vance.testing.scripted_llm import Rule


async def _vance(term: Terminal, *args: str) -> str:
    """Runs the `vance` command outside the terminal (with the terminal's config directory)."""
    proc = await asyncio.create_subprocess_exec(
        vance_bin(), *args, env=term.env, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0, out
    return out.decode()


async def _login(system: System, term: Terminal, user: str) -> None:
    await _vance(term, "login", "--url", system.gateway, "--user", user, "--password", "pw")


async def test_sign_in_stream_pause_and_sign_out(system: System, tmp_path: Path) -> None:
    m = uuid.uuid4().hex[:8]
    user, _ = await new_user(system)
    hold = f"hold-{m}"
    system.script(
        Rule(
            match_last=f"{m} stream",
            text=f"**alpha{m}** beta{m} gamma{m} delta{m}",
            chunks=4,
            hold=hold,
            hold_after=2,
        ),
        Rule(match_last=f"{m} again", text=f"Resumed answer {m}"),
    )
    with terminal(tmp_path) as term:
        term.start(
            f"{vance_bin()} login --url http://{system.gateway} --tenant default --user {user}"
            f" && {vance_bin()} chat --project demo"
        )
        await term.shows("password:")
        term.type("pw")
        await term.shows(f"Signed in as {user}")
        token = tmp_path / "config" / "vance" / "token.json"
        assert stat.S_IMODE(token.stat().st_mode) == 0o600
        assert stat.S_IMODE(token.parent.stat().st_mode) == 0o700
        await term.shows("Hi, I'm Arthur")
        await term.shows("● connected")

        # Streamed: the first chunks show (rendered, the ** gone) while the model holds the rest.
        term.type(f"{m} stream")
        await term.shows(f"you > {m} stream")
        screen = await term.shows(f"beta{m}")
        assert f"**alpha{m}**" not in screen and f"delta{m}" not in screen
        assert "chat RUNNING" in screen

        # ESC: the session-wide pause; the running turn ends, then the chat is PAUSED.
        term.keys("Escape")
        await term.shows("⏸ paused: chat")
        system.llm.release(hold)
        await term.shows(f"delta{m}")
        await term.shows("chat PAUSED")
        screen = term.screen()
        assert screen.count(f"alpha{m}") == 1, screen

        # The next message resumes the paused chat and is answered.
        term.type(f"{m} again")
        await term.shows("(resumed the paused chat)")
        await term.shows(f"Resumed answer {m}")
        term.type("/quit")
        await term.shows("[exited]")
        assert term.screen().count(f"you > {m} stream") == 1

        assert "Signed out (token revoked)" in await _vance(term, "logout")
        assert not token.exists()


async def test_hub_switch_to_and_back_and_a_numbered_answer(system: System, tmp_path: Path) -> None:
    m = uuid.uuid4().hex[:8]
    project = f"term_{m}"
    user, _ = await new_user(system)
    system.script(
        act(
            "ask_user",
            f"{m} choose",
            message=f"Which one {m}?",
            options=[{"label": f"Alpha {m}"}, {"label": f"Beta {m}"}],
        ),
        act("answer", f"Beta {m}", message=f"Beta it is, {m}."),
        act("project_create", f"{m} make project", name=project),
        act("answer", project, match=f"{m} make project", message=f"Made {m}."),
        act(
            "mediate",
            f"{m} switch",
            target=project,
            reason="files to look at",
            voiceAnnouncement=f"Connecting you to Arthur {m}",
        ),
        Rule(match_last=f"{m} in worker", text=f"Worker here {m}"),
    )
    with terminal(tmp_path) as term:
        await _login(system, term, user)
        term.start(f"{vance_bin()} chat")
        await term.shows("Hi, I'm Eddie")
        await term.shows("● connected · hub")

        term.type(f"{m} choose")
        await term.shows("(answer with a number, 1-2)")
        term.type("2")
        await term.shows(f"you > Beta {m}")
        await term.shows(f"Beta it is, {m}.")

        term.type(f"{m} make project")
        await term.shows(f"Made {m}.")
        term.type(f"{m} switch")
        await term.shows(f"→ switching to {project}")
        await term.shows(f"● connected · {project} · ")
        term.type(f"{m} in worker")
        await term.shows(f"Worker here {m}")

        term.type("/hub")
        await term.shows("● connected · hub · ")
        screen = term.screen()
        assert screen.count("── hub (eddie) ──") == 2, screen
        term.type(f"{m} back home")  # the default rule echoes it
        await term.shows(f"You said: {m} back home")
        screen = term.screen()
        # The hub resumed from its last seq: the switch-to was not replayed and followed again.
        assert screen.count(f"→ switching to {project}") == 1, screen
        assert screen.count(f"Beta it is, {m}.") == 1, screen


async def test_approve_sends_the_verdict_to_the_waiting_process(
    system: System, tmp_path: Path
) -> None:
    m = uuid.uuid4().hex[:8]
    user, _ = await new_user(system)
    system.script(*child_asks(m, f"{m} go", f"Count {m}", "counter", f"Shall I count? {m}"))
    with terminal(tmp_path) as term:
        await _login(system, term, user)
        term.start(f"{vance_bin()} chat --project demo")
        await term.shows("● connected")
        term.type(f"{m} go")
        await term.shows("+ counter (")  # the spawned child, shown as it starts
        await term.shows(f"counter asks ({m})")
        await term.shows("counter BLOCKED")  # in the status line's process tree
        term.type(f"/approve counter fine {m}")
        await term.shows("approve sent to counter")

        # Arthur steers the verdict into counter without a model call of its own.
        await eventually(
            lambda: system.model_requests(f"approved: fine {m}"), what="counter to get it"
        )


async def test_an_unknown_project_is_a_clear_error(system: System, tmp_path: Path) -> None:
    user, _ = await new_user(system)
    with terminal(tmp_path) as term:
        await _login(system, term, user)
        term.start(f"{vance_bin()} chat --project nope_{uuid.uuid4().hex[:8]}")
        await term.shows("vance: project_not_found")
        screen = await term.shows("[exited]")
        assert "Traceback" not in screen
