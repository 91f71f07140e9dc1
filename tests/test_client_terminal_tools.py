"""The tools the terminal client hosts (clients/python/vance_client/tools): on their own, paths
confined to the workspace root (`..`, absolute paths and symlinks out of it refused), writes,
edits and commands asking the user unless allowed, commands that outlive their wait; and over the
real path (docs/clients.md "Client tools"): `vance chat --workspace` in tmux registers them with
the gateway, a scripted Arthur calls them through tool_service and the gateway, the user answers
the question with keys, and the model reads what happened."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from vance_client.tools.host import SPECS, ToolHost

from gateway.client_tools import ClientToolSpec, RegisterData
from tests.client_support import Terminal, terminal, vance_bin
from tests.harness import System, eventually
from tests.sessions_support import new_user
from tests.test_arthur_flow import call
from tests.test_client_terminal import _login
from tests.test_client_tools import offered
from vance.testing.scripted_llm import Rule

HOSTED = {s.name for s in SPECS}


async def test_files_stay_inside_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (root / "out").symlink_to(outside)  # a link that leads out of the root
    (root / "secret-link.txt").symlink_to(outside / "secret.txt")
    host = ToolHost(str(root), allow=True)

    wrote = await host.invoke("client_file_write", {"path": "src/a.txt", "content": "one two"})
    assert wrote == {"status": "SUCCESS", "result": {"path": "src/a.txt", "written": 7}}
    assert (root / "src" / "a.txt").read_text() == "one two"
    read = await host.invoke("client_file_read", {"path": str(root / "src" / "a.txt")})
    assert read["result"]["content"] == "one two"
    listed = await host.invoke("client_file_list", {"path": "src"})
    assert listed["result"]["entries"] == [{"name": "a.txt", "type": "file", "size": 7}]

    for name, params in [
        ("client_file_read", {"path": "../outside/secret.txt"}),
        ("client_file_read", {"path": str(outside / "secret.txt")}),
        ("client_file_read", {"path": "secret-link.txt"}),
        ("client_file_read", {"path": "out/secret.txt"}),
        ("client_file_write", {"path": "out/new.txt", "content": "x"}),
        ("client_file_list", {"path": "out"}),
        ("client_file_write", {"path": "/etc/vance-test", "content": "x"}),
    ]:
        refused = await host.invoke(name, params)
        assert refused["status"] == "ERROR", (name, params, refused)
        assert "outside the workspace" in refused["error"]
    assert not (outside / "new.txt").exists()
    assert (outside / "secret.txt").read_text() == "secret"

    edited = await host.invoke("client_file_edit", {"path": "src/a.txt", "old": "two", "new": "2"})
    assert edited["status"] == "SUCCESS" and (root / "src" / "a.txt").read_text() == "one 2"
    (root / "src" / "b.txt").write_text("x x")
    twice = await host.invoke("client_file_edit", {"path": "src/b.txt", "old": "x", "new": "y"})
    assert twice["status"] == "ERROR" and "occurs 2 times" in twice["error"]
    unknown = await host.invoke("client_nothing", {})
    assert unknown["status"] == "ERROR" and "no tool" in unknown["error"]
    bad = await host.invoke("client_file_write", {"path": "c.txt", "content": 3})
    assert bad == {"status": "ERROR", "error": "'content' must be a string"}


async def test_writes_and_commands_ask_unless_allowed(tmp_path: Path) -> None:
    asked: list[str] = []
    answer = False

    async def confirm(what: str) -> bool:
        asked.append(what)
        return answer

    host = ToolHost(str(tmp_path), confirm=confirm)
    declined = await host.invoke("client_file_write", {"path": "a.txt", "content": "hi"})
    assert declined == {"status": "ERROR", "error": "the user declined"}
    assert asked == ["write 'a.txt' (2 characters)"] and not (tmp_path / "a.txt").exists()
    assert (await host.invoke("client_file_list", {}))["status"] == "SUCCESS"  # reads never ask
    assert len(asked) == 1
    answer = True
    assert (await host.invoke("client_file_write", {"path": "a.txt", "content": "hi"}))[
        "status"
    ] == "SUCCESS"
    ran = await host.invoke("client_exec_run", {"command": "cat a.txt; echo; pwd"})
    assert asked[-1] == "run `cat a.txt; echo; pwd`"
    result = ran["result"]
    assert result["exitCode"] == 0 and not result["running"]
    assert result["output"] == f"hi\n{tmp_path}\n"
    await host.close()


async def test_a_long_command_goes_on_and_can_be_killed(tmp_path: Path) -> None:
    host = ToolHost(str(tmp_path), allow=True)
    started = await host.invoke(
        "client_exec_run", {"command": "echo begun; sleep 60", "waitMs": 300}
    )
    run = started["result"]
    assert run["running"] and run["exitCode"] is None and run["output"] == "begun\n"
    status = await host.invoke("client_exec_status", {"id": run["id"]})
    assert status["result"]["running"]
    killed = await host.invoke("client_exec_kill", {"id": run["id"]})
    assert not killed["result"]["running"] and killed["result"]["exitCode"] != 0
    missing = await host.invoke("client_exec_status", {"id": "run-99"})
    assert missing == {"status": "ERROR", "error": "no run 'run-99'"}
    await host.close()


def test_the_register_frame_is_what_the_gateway_reads(tmp_path: Path) -> None:
    """The declarations parse as the gateway's own model of `client-tool-register` with no
    field it would ignore, and a tool that asks first may take the user's time to answer."""
    known = {f.alias or name for name, f in ClientToolSpec.model_fields.items()}
    for allow in (False, True):
        tools = ToolHost(str(tmp_path), allow=allow).declarations()
        parsed = RegisterData.model_validate({"tools": tools})
        assert [t.name for t in parsed.tools or []] == [s.name for s in SPECS]
        assert all(set(t) <= known for t in tools), tools
        timeouts = {t.name: t.timeout_ms for t in parsed.tools or []}
        assert timeouts["client_file_read"] == 30_000
        assert timeouts["client_file_write"] == (30_000 if allow else 330_000)


def _tool_results(system: System, marker: str, last: str) -> list[Any]:
    """What the model read from each tool call, in the request whose last message has `last`."""
    body = next(
        r for r in reversed(system.model_requests(marker)) if last in json.dumps(r["messages"][-1])
    )
    return [json.loads(msg["content"]) for msg in body["messages"] if msg.get("role") == "tool"]


def _session_of(screen: str) -> str:
    found = re.search(r"· demo · (sess_\w+)", screen)
    assert found is not None, screen
    return found.group(1)


async def _asked(term: Terminal, what: str) -> None:
    await term.shows(f"? the agent wants to {what}. Allow? [y/N]")


async def test_vance_chat_hosts_file_tools_for_arthur_inside_its_workspace_only(
    system: System, tmp_path: Path
) -> None:
    """A scripted Arthur calls `client_file_write` five times in one turn: inside the workspace
    (the user allows it by typing y), `../outside.txt`, a file symlink and a folder symlink
    leading out (refused before anything is asked), and once more (the user types n). The model
    reads SUCCESS for the first and ERROR with the reason for the others; only the first file
    exists. After leaving the session and coming back, the client registers its tools again:
    the next turn reads the file back."""
    m = uuid.uuid4().hex[:8]
    user, _ = await new_user(system)
    root = tmp_path / "ws"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "target.txt").write_text("original")
    (root / "link.txt").symlink_to(elsewhere / "target.txt")
    (root / "out").symlink_to(elsewhere)
    said = f"{m} files"

    def then(after: str, tool: str, **params: Any) -> Rule:
        return Rule(match=said, match_last=after, tool_calls=[call(tool, **params)])

    system.script(
        Rule(
            match_last=said,
            tool_calls=[call("client_file_write", path="notes/a.txt", content=f"hello {m}")],
        ),
        then("written", "client_file_write", path="../outside.txt", content="x"),
        then("../outside.txt", "client_file_write", path="link.txt", content="x"),
        then("link.txt", "client_file_write", path="out/new.txt", content="x"),
        then("out/new.txt", "client_file_write", path="b.txt", content="x"),
        then("the user declined", "respond", message=f"Done {m}.", awaiting_user_input=False),
        Rule(match_last=f"{m} read", tool_calls=[call("client_file_read", path="notes/a.txt")]),
        Rule(
            match=f"{m} read",
            match_last="tool_call_id",
            tool_calls=[call("respond", message=f"Read {m}.", awaiting_user_input=False)],
        ),
    )
    with terminal(tmp_path) as term:
        await _login(system, term, user)
        term.start(f"{vance_bin()} chat --project demo --workspace {root}")
        await term.shows("client tools ready in")
        sid = _session_of(await term.shows("● connected · demo · sess_"))

        term.type(said)
        await _asked(term, f"write 'notes/a.txt' ({len(f'hello {m}')} characters)")
        assert not (root / "notes").exists()  # nothing before the user says yes
        term.type("y")
        await _asked(term, "write 'b.txt' (1 characters)")
        term.type("n")
        await term.shows(f"Done {m}.")

        assert (root / "notes" / "a.txt").read_text() == f"hello {m}"
        assert not (tmp_path / "outside.txt").exists()
        assert (elsewhere / "target.txt").read_text() == "original"
        assert sorted(p.name for p in elsewhere.iterdir()) == ["target.txt"]
        assert not (root / "b.txt").exists()
        assert HOSTED <= offered(system, said)

        first, *refused, declined = _tool_results(system, said, "the user declined")
        assert first == {"path": "notes/a.txt", "written": len(f"hello {m}")}
        assert [r["status"] for r in refused] == ["ERROR"] * 3
        for r, path in zip(refused, ["../outside.txt", "link.txt", "out/new.txt"], strict=True):
            assert r["error"].startswith(f"'{path}' is outside the workspace"), r
        assert declined == {"status": "ERROR", "error": "the user declined"}

        screen = term.screen()
        assert screen.count("? the agent wants to") == 2, screen  # the refusals asked nothing
        assert "⚙ client_file_write: '../outside.txt' is outside the workspace" in screen

        # Leaving the session drops its tools on the server; binding it again registers them
        # again, so the next turn can call one.
        term.type("/hub")
        await term.shows("● connected · hub · ")
        term.type(f"/resume {sid}")
        await term.shows(f"● connected · demo · {sid}")
        await eventually(
            lambda: term.screen().count("client tools ready in") >= 3,
            what="the tools registered again at each bind",
        )
        term.type(f"{m} read")
        await term.shows(f"Read {m}.")
        read = _tool_results(system, f"{m} read", "tool_call_id")[-1]
        assert read["content"] == f"hello {m}", read
