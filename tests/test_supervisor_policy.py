"""The supervisor's restart policy on real child processes (no system needed): a killed child
comes back with a new pid and its exit recorded; a child that keeps exiting is given up on after
the crash-loop limit and reported, while its siblings run on; a clean stop restarts nothing;
`vance status` prints what the status file says."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.harness import eventually
from vance.config import load_config
from vance.supervisor import Child, RestartPolicy, Supervisor
from vance.supervisor_status import read_status

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]
FAILER = [sys.executable, "-c", "import sys; sys.exit(3)"]


@dataclass
class Watched:
    sup: Supervisor
    stop: asyncio.Event
    watch: asyncio.Task[int]


@pytest.fixture
async def supervised(tmp_path: Path) -> AsyncIterator[Watched]:
    config = load_config(env={"VANCE_DATA_DIR": str(tmp_path / "data")})
    policy = RestartPolicy(backoff_s=0.05, backoff_max_s=0.2, crash_limit=3, window_s=30)
    sup = Supervisor(config, {}, log_to=tmp_path / "logs", quiet=True, policy=policy)
    stop = asyncio.Event()
    try:
        await sup.start(Child("sleeper", SLEEPER))
        run = Watched(sup, stop, asyncio.create_task(sup.watch(stop)))
        yield run
        stop.set()
        await run.watch
    finally:
        await sup.stop_all()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _vance_status(sup: Supervisor) -> subprocess.CompletedProcess[str]:
    """`vance status` as an operator runs it, in its own process."""
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "vance.cli", "status"],
        env={**os.environ, "VANCE_DATA_DIR": sup.config.data_dir},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_backoff_doubles_per_recent_exit_up_to_its_cap() -> None:
    policy = RestartPolicy(backoff_s=0.25, backoff_max_s=10, crash_limit=5, window_s=60)
    assert [policy.delay(n) for n in (1, 2, 3, 4, 7)] == [0.25, 0.5, 1.0, 2.0, 10]


async def test_a_killed_child_is_restarted_with_its_exit_recorded(
    supervised: Watched,
) -> None:
    sup = supervised.sup
    first = sup.children["sleeper"].proc
    assert first is not None
    sup.kill("sleeper")

    def restarted() -> bool:
        c = read_status(sup.status_file).children[0]
        return c.state == "running" and c.restarts == 1 and c.pid != first.pid

    await eventually(restarted, timeout=10, what="the sleeper to be restarted")
    c = read_status(sup.status_file).children[0]
    assert c.last_exit is not None and c.last_exit.signal == "SIGKILL"
    assert c.pid is not None and _pid_alive(c.pid)


async def test_a_crash_loop_is_given_up_on_and_reported(
    supervised: Watched,
) -> None:
    sup = supervised.sup
    await sup.start(Child("failer", FAILER))

    def gave_up() -> bool:
        return read_status(sup.status_file).children[-1].state == "crash-loop"

    await eventually(gave_up, timeout=10, what="the failer to be given up on")
    failer = read_status(sup.status_file).children[-1]
    assert failer.name == "failer"
    assert failer.restarts == 2  # started once, restarted twice, then the third exit: no more
    assert failer.last_exit is not None and failer.last_exit.code == 3
    # Its sibling runs on untouched.
    sleeper = read_status(sup.status_file).children[0]
    assert (sleeper.state, sleeper.restarts) == ("running", 0)
    # `vance status` shows it and fails (exit 1: a child is not running).
    out = await _vance_status(sup)
    assert out.returncode == 1, out.stdout + out.stderr
    failer_line = next(line for line in out.stdout.splitlines() if line.startswith("failer"))
    assert "crash-loop" in failer_line and "exit 3" in failer_line


async def test_a_clean_stop_stops_everything_and_restarts_nothing(
    supervised: Watched,
) -> None:
    sup = supervised.sup
    proc = sup.children["sleeper"].proc
    assert proc is not None
    # What `vance run` does on Ctrl-C or SIGTERM: the watch ends, then everything stops.
    supervised.stop.set()
    assert await supervised.watch == 0
    await sup.stop_all()
    assert proc.returncode == -signal.SIGTERM
    status = read_status(sup.status_file)
    assert not status.running
    assert [(c.state, c.restarts) for c in status.children] == [("stopped", 0)]
    assert not _pid_alive(proc.pid)
    out = await _vance_status(sup)
    assert out.returncode == 3 and "NOT RUNNING" in out.stdout
