"""client_exec_run, client_exec_status, client_exec_kill: shell commands run in the workspace.

A run waits up to `waitMs` (default 10 s) and answers with what the command printed so far and,
when it ended, its exit code; a longer command goes on and `client_exec_status` reads it later.
The runs belong to the `Execs` object, which kills what still runs when it closes."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
from dataclasses import dataclass, field
from typing import Any

from vance_client.tools.workspace import ToolRefused, Workspace

MAX_OUTPUT_CHARS = 100_000
DEFAULT_WAIT_MS = 10_000
MAX_WAIT_MS = 120_000


@dataclass
class _Run:
    proc: asyncio.subprocess.Process
    command: str
    output: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task[None] | None = None

    def view(self, run_id: str) -> dict[str, Any]:
        text = self.output.decode(errors="replace")
        return {
            "id": run_id,
            "command": self.command,
            "running": self.proc.returncode is None,
            "exitCode": self.proc.returncode,
            "output": text[-MAX_OUTPUT_CHARS:],
            "truncated": len(text) > MAX_OUTPUT_CHARS,
        }


class Execs:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._runs: dict[str, _Run] = {}
        self._ids = itertools.count(1)

    async def run(self, params: dict[str, Any]) -> dict[str, Any]:
        command = params.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ToolRefused("'command' must be a non-empty string")
        wait_ms = params.get("waitMs", DEFAULT_WAIT_MS)
        if not isinstance(wait_ms, int) or isinstance(wait_ms, bool) or wait_ms < 0:
            raise ToolRefused("'waitMs' must be a non-negative integer")
        proc = await asyncio.create_subprocess_shell(
            command,
            cwd=self.ws.root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        run = _Run(proc, command)
        run.reader = asyncio.create_task(self._pump(run))  # awaited by close() or kill()
        run_id = f"run-{next(self._ids)}"
        self._runs[run_id] = run
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(proc.wait()), min(wait_ms, MAX_WAIT_MS) / 1000)
        if proc.returncode is not None:
            await asyncio.gather(run.reader, return_exceptions=True)
        return run.view(run_id)

    async def status(self, params: dict[str, Any]) -> dict[str, Any]:
        run_id, run = self._find(params)
        return run.view(run_id)

    async def kill(self, params: dict[str, Any]) -> dict[str, Any]:
        run_id, run = self._find(params)
        await self._stop(run)
        return run.view(run_id)

    async def close(self) -> None:
        for run in self._runs.values():
            await self._stop(run)

    def _find(self, params: dict[str, Any]) -> tuple[str, _Run]:
        run_id = params.get("id")
        if not isinstance(run_id, str) or run_id not in self._runs:
            raise ToolRefused(f"no run {run_id!r}")
        return run_id, self._runs[run_id]

    @staticmethod
    async def _pump(run: _Run) -> None:
        assert run.proc.stdout is not None
        while chunk := await run.proc.stdout.read(65536):
            run.output += chunk
            if len(run.output) > 2 * MAX_OUTPUT_CHARS:
                del run.output[: len(run.output) - MAX_OUTPUT_CHARS]

    @staticmethod
    async def _stop(run: _Run) -> None:
        if run.proc.returncode is None:
            # The shell leads its own process group (start_new_session): kill the group, so
            # what the command started goes too.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.proc.pid, signal.SIGKILL)
            await run.proc.wait()
        if run.reader is not None:
            await asyncio.gather(run.reader, return_exceptions=True)
