"""Counts store commands per (command, collection) in this process, for the benchmark's
"store calls per turn" table: with `VANCE_STORE_TRACE=<dir>` set, every process that connects to
the store writes its counts to `<dir>/<pid>.json` once a second. Off (no listener) otherwise.
With `VANCE_STORE_TRACE_SITES=1` as well, each count also names the function of ours that sent
the command (`find sessions <- session_service.lifecycle.connection_binding:heartbeat`): how the
costs in the benchmark's table were traced to their callers."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from pymongo import monitoring

ENV = "VANCE_STORE_TRACE"
SITES_ENV = "VANCE_STORE_TRACE_SITES"
# Frames of these modules are the store plumbing, not the caller a reader looks for.
_PLUMBING = ("vance.store", "pymongo", "asyncio", "motor", "contextlib")


def _caller() -> str:
    """The two innermost functions of ours on the stack (a store module's helper and its
    caller), innermost first."""
    names: list[str] = []
    frame = sys._getframe(2)
    while frame is not None and len(names) < 2:
        module = str(frame.f_globals.get("__name__", ""))
        if not module.startswith(_PLUMBING) and module != __name__:
            names.append(f"{module}:{frame.f_code.co_name}")
        frame = frame.f_back  # type: ignore[assignment]
    return " < ".join(names) or "?"


class CommandCounter(monitoring.CommandListener):
    def __init__(self, out_dir: Path) -> None:
        self.counts: Counter[str] = Counter()
        self._path = out_dir / f"{os.getpid()}.json"
        self._name = Path(sys.argv[0]).parent.name or sys.argv[0]
        self._sites = os.environ.get(SITES_ENV) == "1"
        threading.Thread(target=self._dump_forever, daemon=True).start()

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        name = event.command_name
        target = event.command.get(name)
        self.observed(name, target if isinstance(target, str) else "", 0.0, False)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        return None

    def observed(self, name: str, collection: str, seconds: float, failed: bool) -> None:
        """A command sent by vance/store_wire.py (or, through `started`, by PyMongo)."""
        key = f"{name} {collection}".strip()
        if self._sites:
            key = f"{key} <- {_caller()}"
        self.counts[key] += 1

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        return None

    def _dump_forever(self) -> None:
        while True:
            time.sleep(1.0)
            tmp = self._path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"argv": sys.argv, "counts": dict(self.counts)}))
            tmp.replace(self._path)


_counter: CommandCounter | None = None


def listeners() -> list[CommandCounter]:
    """This process's one counter (it owns `<pid>.json`), or none when tracing is off."""
    global _counter
    out_dir = os.environ.get(ENV)
    if not out_dir:
        return []
    if _counter is None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        _counter = CommandCounter(Path(out_dir))
    return [_counter]
