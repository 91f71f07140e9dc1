"""The tools the terminal client hosts (clients/python/vance_client/tools), on their own: paths
confined to the workspace root (`..`, absolute paths and symlinks out of it refused), writes,
edits and commands asking the user unless allowed, commands that outlive their wait."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from vance_client.tools.host import ToolHost

from tests.client_support import terminal, vance_bin
from tests.harness import System, eventually
from tests.sessions_support import new_user
from tests.test_client_terminal import _login
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb


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


async def test_vance_chat_runs_an_invoked_tool_in_its_workspace(
    system: System, tmp_path: Path
) -> None:
    """The terminal's half of a client tool call: a `client-tool-invoke` frame reaches the bound
    session (published here as a session notice, the gateway's routing being another change),
    the user allows the write, the file appears in the workspace; a path outside is refused
    without asking."""
    m = uuid.uuid4().hex[:8]
    user, _ = await new_user(system)
    root = tmp_path / "ws"
    root.mkdir()
    with terminal(tmp_path) as term:
        await _login(system, term, user)
        term.start(f"{vance_bin()} chat --project demo --workspace {root}")
        screen = await term.shows("● connected · demo · sess_")
        found = re.search(r"· demo · (sess_\w+)", screen)
        assert found is not None
        sid = found.group(1)

        async def invoke(call_id: str, name: str, **params: str) -> None:
            notice = pb.Notice(type="client-tool-invoke")
            notice.data.update({"callId": call_id, "name": name, "params": params})
            await system.processes.PublishNotice(
                ppb.PublishNoticeRequest(session_ids=[sid], notice=notice)
            )

        await invoke(f"w-{m}", "client_file_write", path="notes/a.txt", content=f"hello {m}")
        await term.shows("? the agent wants to write 'notes/a.txt'")
        assert not (root / "notes" / "a.txt").exists()  # not before the user says yes
        term.type("y")
        await eventually(lambda: (root / "notes" / "a.txt").exists(), what="the file written")
        assert (root / "notes" / "a.txt").read_text() == f"hello {m}"

        await invoke(f"x-{m}", "client_file_write", path="../escape.txt", content="x")
        await term.shows("client_file_write: '../escape.txt' is outside the workspace")
        assert not (tmp_path / "escape.txt").exists()
        assert term.screen().count("? the agent wants to") == 1  # the refusal asked nothing
