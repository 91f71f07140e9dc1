"""Reconnects after the gateway restarts (a crash: SIGKILL, then a new process), on a system of
this module's own so the restart disturbs no other test: the SDK replays from the last seq it
saw and delivers every event once; `vance chat` says it lost and regained the link, shows
nothing twice, and registers its client tools with the new gateway process."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

from vance_client import ChatMessageAppended, Link

from tests.client_support import sdk_client, terminal, vance_bin
from tests.harness import System, eventually
from tests.sessions_support import new_user
from tests.test_arthur_flow import call
from tests.test_client_terminal import _login
from vance.testing.scripted_llm import Rule


def _said(text: str) -> Callable[[ChatMessageAppended], bool]:
    return lambda f: f.data.role == "assistant" and text in f.data.content


async def test_reconnect_after_a_gateway_restart_replays_once(own_system: System) -> None:
    system = own_system
    m = uuid.uuid4().hex[:8]
    _, token = await new_user(system)
    async with sdk_client(system, token) as (c, seen):
        opened = await c.create_session("demo")
        system.script(Rule(match_last=f"{m} one", text=f"First {m}"))
        await c.steer(f"{m} one")
        await seen.wait(ChatMessageAppended, _said(f"First {m}"))
        before = c.last_seq()
        await system.supervisor.restart_service("gateway")
        await eventually(
            lambda: [e for e in seen.events if isinstance(e, Link) and e.state == "reconnecting"],
            what="the client to notice the drop",
        )
        await eventually(lambda: c.opened is not None and c.session_id == opened.session_id)
        system.script(Rule(match_last=f"{m} two", text=f"Second {m}"))
        reply = await c.steer(f"{m} two")  # waits for the socket and the bind to be back
        assert reply.outcome in ("STARTED", "QUEUED")
        await seen.wait(ChatMessageAppended, _said(f"Second {m}"))
        assert c.last_seq() > before
        seqs = [e.seq for e in seen.events if not isinstance(e, Link) and e.seq is not None]
        assert seqs == sorted(set(seqs)), seqs
        assert len(seen.frames(ChatMessageAppended, _said(f"First {m}"))) == 1


async def test_reconnect_after_a_gateway_restart_shows_nothing_twice(
    own_system: System, tmp_path: Path
) -> None:
    system = own_system
    m = uuid.uuid4().hex[:8]
    user, _ = await new_user(system)
    system.script(
        Rule(match_last=f"{m} one", text=f"First answer {m}"),
        Rule(match_last=f"{m} two", text=f"Second answer {m}"),
    )
    with terminal(tmp_path) as term:
        await _login(system, term, user)
        term.start(f"{vance_bin()} chat --project demo")
        await term.shows("● connected")
        term.type(f"{m} one")
        await term.shows(f"First answer {m}")

        await system.supervisor.restart_service("gateway")
        await term.shows("connection lost")
        await term.shows("reconnected")
        await term.shows("● connected")
        term.type(f"{m} two")
        await term.shows(f"Second answer {m}")

        async def settled() -> bool:
            return "chat IDLE" in term.screen()

        await eventually(settled, what="the chat idle again")
        screen = term.screen()
        for line in (f"you > {m} one", f"First answer {m}", f"you > {m} two", "Hi, I'm Arthur"):
            assert screen.count(line) == 1, f"{line!r} shown {screen.count(line)} times:\n{screen}"


async def test_vance_chat_registers_its_tools_again_after_a_reconnect(
    own_system: System, tmp_path: Path
) -> None:
    """The new gateway process knows nothing of the old socket's client tools: `vance chat
    --workspace` registers them again once it is back, and the next turn's call reaches it."""
    system = own_system
    m = uuid.uuid4().hex[:8]
    user, _ = await new_user(system)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "note.txt").write_text(f"kept on the user's machine {m}")
    system.script(
        Rule(match_last=f"{m} read", tool_calls=[call("client_file_read", path="note.txt")]),
        Rule(
            match=f"{m} read",
            match_last="tool_call_id",
            tool_calls=[call("respond", message=f"Read it {m}.", awaiting_user_input=False)],
        ),
    )
    with terminal(tmp_path) as term:
        await _login(system, term, user)
        term.start(f"{vance_bin()} chat --project demo --workspace {root} --allow")
        await term.shows("client tools ready in")
        await system.supervisor.restart_service("gateway")
        await term.shows("reconnected")
        await eventually(
            lambda: term.screen().count("client tools ready in") >= 2,
            what="the tools registered again",
        )
        term.type(f"{m} read")
        await term.shows(f"Read it {m}.")
        [body] = [
            r for r in system.model_requests(f"{m} read") if "tool_call_id" in str(r["messages"])
        ]
        [result] = [msg["content"] for msg in body["messages"] if msg.get("role") == "tool"]
        assert json.loads(result)["content"] == f"kept on the user's machine {m}"
