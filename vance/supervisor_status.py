"""The supervisor's status file and `vance status`: each child's state, pid, restarts, last exit.

The supervisor (vance/supervisor.py) rewrites `<data_dir>/supervisor.json` whenever a child
starts, exits, is restarted or is given up on; `vance status` reads it. A file, not an
endpoint: it needs no port and still tells what happened after the supervisor has gone.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

STATUS_FILE = "supervisor.json"

# starting: spawned, not ready yet; running: ready (or started, for children without a probe);
# restarting: exited, waiting out its backoff; crash-loop: exited too often, no longer restarted;
# stopped: stopped on purpose.
ChildState = Literal["starting", "running", "restarting", "crash-loop", "stopped"]


class ExitInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: int | None = None  # the exit code, when it exited by itself
    signal: str | None = None  # the signal's name, when a signal ended it (SIGKILL, ...)
    at: float  # wall-clock time (epoch seconds)

    @classmethod
    def from_returncode(cls, returncode: int, at: float | None = None) -> ExitInfo:
        """asyncio reports death by signal N as returncode -N."""
        when = time.time() if at is None else at
        if returncode < 0:
            try:
                name = signal.Signals(-returncode).name
            except ValueError:
                name = f"signal {-returncode}"
            return cls(signal=name, at=when)
        return cls(code=returncode, at=when)

    def describe(self) -> str:
        what = self.signal if self.signal is not None else f"exit {self.code}"
        return f"{what} at {time.strftime('%H:%M:%S', time.localtime(self.at))}"


class ChildStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    state: ChildState
    pid: int | None = None
    restarts: int = 0
    started_at: float | None = None
    last_exit: ExitInfo | None = None
    crashes_in_window: int = 0


class SupervisorStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    pid: int
    running: bool  # false once the supervisor has stopped everything
    updated_at: float
    crash_loop_limit: int
    crash_loop_window_s: float
    children: list[ChildStatus]


def status_path(data_dir: str | Path) -> Path:
    return Path(data_dir) / STATUS_FILE


def write_status(path: Path, status: SupervisorStatus) -> None:
    """Atomically (a rename), so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(status.model_dump_json(indent=2))
    os.replace(tmp, path)


def read_status(path: Path) -> SupervisorStatus:
    return SupervisorStatus.model_validate_json(path.read_text())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def render(status: SupervisorStatus) -> tuple[str, int]:
    """The table `vance status` prints, and its exit code: 0 when the supervisor runs and every
    child runs, 1 when a child is not running (restarting, crash-loop), 3 when no supervisor
    runs (the table is then the last one it wrote)."""
    live = status.running and _alive(status.pid)
    updated = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status.updated_at))
    head = (
        f"supervisor pid {status.pid}: {'running' if live else 'NOT RUNNING'} "
        f"(status of {updated}; crash-loop limit {status.crash_loop_limit} exits "
        f"within {status.crash_loop_window_s:.0f}s)"
    )
    rows = [("child", "state", "pid", "restarts", "last exit")]
    for c in status.children:
        rows.append(
            (
                c.name,
                c.state,
                str(c.pid) if c.pid is not None and c.state != "stopped" else "-",
                str(c.restarts),
                c.last_exit.describe() if c.last_exit is not None else "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [head] + [
        "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    if not live:
        return "\n".join(lines), 3
    healthy = all(c.state == "running" for c in status.children)
    return "\n".join(lines), 0 if healthy else 1


def show(data_dir: str, *, as_json: bool = False) -> int:
    """`vance status`: prints the supervisor's last status; the exit code as in render()."""
    path = status_path(data_dir)
    try:
        status = read_status(path)
    except FileNotFoundError:
        print(f"no supervisor status at {path}: `vance run` has not run with this data directory")
        return 3
    text, code = render(status)
    if as_json:
        print(json.dumps(json.loads(status.model_dump_json()), indent=2))
    else:
        print(text)
    return code
