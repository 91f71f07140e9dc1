"""The peer figure: the LangGraph agent server doing the same work as a turn of round (b),
run by its own script (`shared/peers/langgraph/run.sh`, beside the repository in a session's
checkout) after our system has stopped, so the two never share the machine."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vance.testing.ports import free_port_block

RUN_SH = Path("peers") / "langgraph" / "run.sh"
INSTALL_AND_RUN_S = 420.0  # a first run installs the peer (about a minute on a warm index)


@dataclass
class PeerResult:
    figures: dict[str, Any] = field(default_factory=dict)  # the script's JSON line
    skipped: str = ""  # why there is no figure

    @property
    def turns_per_s(self) -> float:
        return float(self.figures.get("turns_per_s") or 0.0)

    @property
    def cpu_ms_per_turn(self) -> float:
        return float(self.figures.get("server_cpu_ms_per_turn") or 0.0)


def find_run_sh(repo: Path) -> Path | None:
    """`$BENCH_PEER_RUN_SH`, else `shared/peers/langgraph/run.sh` beside the repository or
    beside one of its parents (a worktree checkout sits a level deeper)."""
    explicit = os.environ.get("BENCH_PEER_RUN_SH")
    if explicit:
        return Path(explicit) if Path(explicit).is_file() else None
    for parent in repo.resolve().parents:
        candidate = parent / "shared" / RUN_SH
        if candidate.is_file():
            return candidate
    return None


async def run_peer(
    repo: Path,
    *,
    clients: int,
    duration_s: float,
    log: Path,
    env: dict[str, str] | None = None,
) -> PeerResult:
    """`env`: the peer model's pace and the server's run limit (MODEL_TTFT_MS,
    MODEL_STREAM_MS, N_JOBS_PER_WORKER; see the peer's README)."""
    script = find_run_sh(repo)
    if script is None:
        return PeerResult(skipped=f"no shared/{RUN_SH} beside {repo} or its parents")
    log.parent.mkdir(parents=True, exist_ok=True)
    # Ports of its own each run: the script's defaults are fixed, and a server of the round
    # before that is still letting go of its port makes the next one fail to start.
    base = free_port_block(2)
    ports = {"PEER_PORT": str(base), "PEER_MODEL_PORT": str(base + 1)}
    with log.open("ab") as err:
        proc = await asyncio.create_subprocess_exec(
            "bash",
            str(script),
            "--clients",
            str(clients),
            "--duration",
            str(int(duration_s)),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            env={**os.environ, **ports, **(env or {})},
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), INSTALL_AND_RUN_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return PeerResult(skipped=f"{script} did not finish in {INSTALL_AND_RUN_S:.0f}s")
    if proc.returncode != 0:
        return PeerResult(
            skipped=f"{script} exited with {proc.returncode} (install or start failed): "
            + _tail(log)
        )
    lines = [line for line in out.decode().splitlines() if line.strip().startswith("{")]
    try:
        figures = json.loads(lines[-1])
    except (IndexError, ValueError):
        return PeerResult(skipped=f"{script} printed no JSON line: " + _tail(log))
    return PeerResult(figures=figures)


def _tail(log: Path, lines: int = 5) -> str:
    """The log's last lines, for the report: the log itself goes with the bench's temporary
    directory."""
    try:
        text = log.read_text(errors="replace").strip().splitlines()[-lines:]
    except OSError as exc:
        return f"(its log {log} could not be read: {exc})"
    return " | ".join(line.strip() for line in text) or "(its log is empty)"
