"""Reconnects after the gateway restarts (a crash: SIGKILL, then a new process), on a system of
this module's own so the restart disturbs no other test: the SDK replays from the last seq it
saw and delivers every event once; `vance chat` says it lost and regained the link and shows
nothing twice."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from vance_client import ChatMessageAppended, Link

from tests.client_support import sdk_client, terminal, vance_bin
from tests.harness import System, eventually, running_system
from tests.sessions_support import new_user
from tests.test_client_terminal import _login
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm


@pytest.fixture(scope="module")
async def own_system(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[System]:
    async with running_system(tmp_path_factory.mktemp("reconnect"), llm) as system:
        yield system


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
