"""`work_exec_run` through Eddie: off unless the tenant turns it on; in bubblewrap a script
computes the primes up to 100 and leaves a file the doc tools read; it has no network (not
even the test's loopback server) and a read-only system; one that runs past its time limit is
killed; another user neither sees the file nor the job. And where the sandbox cannot start,
the script never runs."""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

import pytest

from process_service.tool_args import ToolError
from process_service.user_work.owner import Owner
from process_service.user_work.sandbox import Sandbox
from process_service.user_work.workspace import Workspaces
from tests.eddie_support import call, eddie_says
from tests.harness import System
from tests.user_work_support import (
    hub_in,
    new_tenant,
    page_server,
    set_tenant,
    tenant_user,
    tool_results,
    tools_then_answer,
)
from vance.json_types import JsonObject
from vance.work_settings import WorkSettings

PRIMES = """
primes = [n for n in range(2, 101) if all(n % d for d in range(2, int(n ** 0.5) + 1))]
print(*primes)
with open("primes.txt", "w") as f:
    f.write(" ".join(map(str, primes)) + "\\n")
"""
NETWORK = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3)
    print("reached the server")
except OSError as exc:
    print("no network:", exc, file=sys.stderr)
    sys.exit(3)
"""
ALL_PRIMES = "2 3 5 7 11 13 17 19 23 29 31 37 41 43 47 53 59 61 67 71 73 79 83 89 97"


async def test_exec_is_refused_while_the_tenant_has_it_off(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    tenant = new_tenant()
    _, token = await tenant_user(system, tenant)
    system.script(
        *tools_then_answer(
            f"{m} run", [call("work_exec_run", language="bash", code="touch ran")], "Off."
        )
    )
    client, _ = await hub_in(system, tenant, token)
    await client.ok("process-steer", {"content": f"{m} run"})
    await eddie_says(client, "Off.")
    (refused,) = tool_results(system, f"{m} run")
    assert "off for this tenant" in refused["error"] and "work.exec.enabled" in refused["error"]
    await client.close()


async def test_scripts_run_sandboxed_with_limits(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    tenant = new_tenant()
    _, token = await tenant_user(system, tenant)
    await set_tenant(system, tenant, {"work.exec.enabled": "true", "work.exec.timeoutMs": "20000"})
    with page_server(m) as server:
        system.script(
            *tools_then_answer(
                f"{m} compute",
                [
                    call("work_exec_run", language="python", code=PRIMES, timeoutMs=15000),
                    call("doc_read", path="workspace/primes.txt"),
                    call(
                        "work_exec_run",
                        language="python",
                        code=NETWORK.format(port=server.port),
                        timeoutMs=15000,
                    ),
                    call(
                        "work_exec_run",
                        language="bash",
                        code="touch /usr/x 2>&1; touch /etc/x 2>&1; echo $HOME; id -u",
                        timeoutMs=15000,
                    ),
                    call(
                        "work_exec_run",
                        language="bash",
                        code="echo started; sleep 30; echo finished",
                        timeoutMs=1500,
                    ),
                    call("work_exec_run", language="python", code="print(1)", timeoutMs=999999),
                ],
                "Done computing.",
            )
        )
        client, _ = await hub_in(system, tenant, token)
        await client.ok("process-steer", {"content": f"{m} compute"})
        await eddie_says(client, "Done computing.", timeout=90)
        primes, file, network, readonly, slow, too_long = tool_results(system, f"{m} compute")
        assert server.seen == []  # the sandbox never reached the host's loopback
    assert primes["status"] == "done" and primes["exitCode"] == 0, primes
    assert primes["stdout"].strip() == ALL_PRIMES
    assert "workspace/primes.txt" in primes["files"]
    assert file["body"] == ALL_PRIMES + "\n" and file["source"] == "workspace"
    assert network["status"] == "failed" and network["exitCode"] == 3, network
    assert "no network" in network["stderr"] and "reached" not in network["stdout"]
    assert readonly["status"] == "done", readonly
    assert readonly["stdout"].count("Read-only file system") == 2
    assert readonly["stdout"].strip().endswith("/workspace\n1000")
    assert slow["status"] == "timeout" and slow["stdout"] == "started\n", slow
    assert 1500 <= slow["durationMs"] < 10_000
    assert "20000" in too_long["error"]

    # A job that goes on past the answer: its status, a kill, and the status after it.
    system.script(
        *tools_then_answer(
            f"{m} start",
            [
                call(
                    "work_exec_run",
                    language="bash",
                    code="echo going; sleep 30",
                    timeoutMs=20000,
                    waitMs=300,
                )
            ],
            "Started.",
        )
    )
    await client.ok("process-steer", {"content": f"{m} start"})
    await eddie_says(client, "Started.")
    (started,) = tool_results(system, f"{m} start")
    assert started["status"] == "running", started
    job = started["jobId"]
    system.script(
        *tools_then_answer(
            f"{m} stop",
            [
                call("work_exec_status", jobId=job),
                call("work_exec_kill", jobId=job),
                call("work_exec_status", jobId=job),
            ],
            "Stopped.",
        )
    )
    await client.ok("process-steer", {"content": f"{m} stop"})
    await eddie_says(client, "Stopped.")
    before, killed, after = tool_results(system, f"{m} stop")
    assert before["status"] == "running" and before["stdout"] in ("", "going\n")
    assert killed["status"] == "killed" and after["status"] == "killed", killed
    assert killed["durationMs"] < 20_000
    await client.close()

    # Another user of the tenant: no such file in their workspace, no such job.
    _, other = await tenant_user(system, tenant)
    system.script(
        *tools_then_answer(
            f"{m} other",
            [
                call("doc_read", path="workspace/primes.txt"),
                call("work_exec_status", jobId=primes["jobId"]),
                call("work_exec_kill", jobId=primes["jobId"]),
            ],
            "Nothing of yours.",
        )
    )
    client, _ = await hub_in(system, tenant, other)
    await client.ok("process-steer", {"content": f"{m} other"})
    await eddie_says(client, "Nothing of yours.")
    file, status, kill = tool_results(system, f"{m} other")
    assert "no file" in file["error"]
    assert "no job" in status["error"] and "no job" in kill["error"]
    await client.close()


def _fake_bwrap(folder: Path) -> None:
    """A `bwrap` that fails as a real one does when it cannot set the sandbox up."""
    script = folder / "bwrap"
    script.write_text(
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


async def test_a_sandbox_that_cannot_start_never_runs_the_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner = Owner("t", "u")
    sandbox = Sandbox(Workspaces(tmp_path / "ws"))
    settings = WorkSettings(exec_enabled=True)
    code: JsonObject = {"language": "bash", "code": "touch ran", "timeoutMs": 5000}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    prlimit = "/usr/bin/prlimit"
    os.symlink(prlimit, bin_dir / "prlimit")
    monkeypatch.setenv("PATH", str(bin_dir))  # no bwrap at all
    with pytest.raises(ToolError, match="bwrap is not installed"):
        await sandbox.run(owner, settings, code, "k1")
    _fake_bwrap(bin_dir)  # one that cannot set the sandbox up
    result = await sandbox.run(owner, settings, code, "k2")
    await sandbox.close()
    assert result.status == "error", result
    assert (result.error or "").startswith("the sandbox could not start: bwrap: setting up uid map")
    assert not (tmp_path / "ws" / "t" / "u" / "ran").exists()
