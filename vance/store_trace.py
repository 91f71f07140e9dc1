"""Counts store commands per (command, collection) in this process, for the benchmark's
"store calls per turn" table: with `VANCE_STORE_TRACE=<dir>` set, every process that connects to
the store writes its counts to `<dir>/<pid>.json` once a second. Off (no listener) otherwise."""

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


class CommandCounter(monitoring.CommandListener):
    def __init__(self, out_dir: Path) -> None:
        self.counts: Counter[str] = Counter()
        self._path = out_dir / f"{os.getpid()}.json"
        self._name = Path(sys.argv[0]).parent.name or sys.argv[0]
        threading.Thread(target=self._dump_forever, daemon=True).start()

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        name = event.command_name
        target = event.command.get(name)
        self.observed(name, target if isinstance(target, str) else "", 0.0, False)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        return None

    def observed(self, name: str, collection: str, seconds: float, failed: bool) -> None:
        """A command sent by vance/store_wire.py (or, through `started`, by PyMongo)."""
        self.counts[f"{name} {collection}".strip()] += 1

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
