"""The embedded store: a FerretDB process with its SQLite backend under the data directory."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FERRETDB_BIN = ROOT / ".tools" / "bin" / "ferretdb"


# Our FerretDB patches (tools/ferretdb/*.patch, sqlite/*.patch), which the build names in the
# binary's package string (tools/ferretdb/install.sh; `ferretdb --version`, "package:"). Without
# atomic-writes two compare-and-sets on one document both win (two turns of one process);
# without update-connections a large update command hangs the server; without id-pushdown
# every update scans its whole collection. So a binary that does not name them all is refused.
PATCH_MARKER = "vancetope-patches:"
REQUIRED_PATCHES = frozenset(
    {
        "atomic-writes",
        "resource-tracking",
        "sjson-one-pass",
        "sqlite-id-pushdown",
        "statement-cache",
        "update-connections",
    }
)


class UnpatchedFerretDBError(RuntimeError):
    """The ferretdb found lacks this project's patches."""


def ferretdb_binary() -> Path:
    if FERRETDB_BIN.exists():
        found = FERRETDB_BIN
    elif which := shutil.which("ferretdb"):
        found = Path(which)
    else:
        raise FileNotFoundError(
            f"FerretDB is not installed at {FERRETDB_BIN}; run `make setup` (it builds it once)"
        )
    check_patched(found)
    return found


def ferretdb_patches(binary: Path) -> frozenset[str]:
    """The patches the binary says it carries (none for an upstream build)."""
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    for line in done.stdout.splitlines():
        key, _, value = line.partition(":")
        value = value.strip()
        if key.strip() == "package" and value.startswith(PATCH_MARKER):
            return frozenset(p for p in value.removeprefix(PATCH_MARKER).split(",") if p)
    return frozenset()


def check_patched(binary: Path) -> None:
    missing = REQUIRED_PATCHES - ferretdb_patches(binary)
    if missing:
        raise UnpatchedFerretDBError(
            f"{binary} lacks this project's FerretDB patches ({', '.join(sorted(missing))});"
            f" without them concurrent compare-and-sets can both succeed. Run `make setup`"
            f" to build the patched one into {FERRETDB_BIN}, or run on MongoDB"
            f' (docs/operations.md, "FerretDB 1.x end of life").'
        )


def ferretdb_command(data_dir: Path, port: int, *, sync: str = "normal") -> list[str]:
    """The FerretDB command line. WAL with synchronous=normal survives a crash of any of our
    processes and of FerretDB itself; only an OS crash or power loss can drop the last commits."""
    sqlite_dir = data_dir / "store"
    sqlite_dir.mkdir(parents=True, exist_ok=True)
    return [
        str(ferretdb_binary()),
        "--handler=sqlite",
        f"--sqlite-url=file:{sqlite_dir}/?_pragma=synchronous({sync})",
        f"--listen-addr=127.0.0.1:{port}",
        f"--state-dir={sqlite_dir}",
        "--telemetry=disable",
        "--debug-addr=",
        # Warnings include a dump of every unsupported command (pymongo's endSessions).
        "--log-level=error",
    ]


def ferretdb_env() -> dict[str, str]:
    """What FerretDB's process adds to the environment. Its Go heap is small (tens of MiB) and
    every command allocates the documents it decodes, so the default GOGC=100 collects often:
    a profile under `make bench` showed the collector and allocator at a quarter of the store's
    CPU. GOGC=400 trades a few MiB of heap for about a quarter less store CPU per command.

    GOMAXPROCS=1: SQLite takes one write at a time (and findAndModify, update and delete hold
    FerretDB's write lock, tools/ferretdb/atomic-writes.patch), so a second Go processor mostly
    handed each command's goroutine between threads and spun looking for work; with one, the
    store spent 20-30% less CPU per turn under `make bench` (docs/operations.md)."""
    return {
        "DO_NOT_TRACK": "1",
        "GOGC": os.environ.get("VANCE_STORE_GOGC", "400"),
        "GOMAXPROCS": os.environ.get("VANCE_STORE_GOMAXPROCS", "1"),
    }


def wait_for_port(port: int, timeout_s: float = 30.0, host: str = "127.0.0.1") -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on {host}:{port} after {timeout_s}s") from None
            time.sleep(0.05)


def start_ferretdb(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    """Starts FerretDB and returns once it accepts connections."""
    proc = subprocess.Popen(
        ferretdb_command(data_dir, port),
        stdin=subprocess.DEVNULL,
        env={**os.environ, **ferretdb_env()},
    )
    try:
        wait_for_port(port)
    except TimeoutError:
        proc.kill()
        raise
    return proc
