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
# every update scans its whole collection; without idle-connections a burst's 100 SQLite
# connections stay open for good (docs/operations.md "Memory"). So a binary that does not name
# them all is refused.
PATCH_MARKER = "vancetope-patches:"
REQUIRED_PATCHES = frozenset(
    {
        "atomic-writes",
        "column-text-once",
        "json-extract-fast",
        "params-tag-cache",
        "query-iterator-buffer",
        "read-then-write",
        "resource-tracking",
        "sjson-one-pass",
        "sjson-schema-share",
        "sjson-write-one-pass",
        "sqlite-id-pushdown",
        "sqlite-idle-connections",
        "statement-cache",
        "update-connections",
        "wire-decode-once",
        "write-autocommit",
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


# SQLite's page cache per connection, in KiB (its default is 2,000). Each of FerretDB's pooled
# connections keeps one, so this times the connections open is what the caches can hold; a page
# the cache lacks comes from the operating system's file cache (docs/operations.md "Memory").
CACHE_KIB = 1024
# Idle connections FerretDB keeps (upstream: 100, for good), and how long one may stay idle:
# the connections a burst opened are closed again, and their caches and prepared statements
# (tools/ferretdb/sqlite/statement-cache.patch: at most 64 each) go with them
# (tools/ferretdb/sqlite-idle-connections.patch).
MAX_IDLE_CONNS = 8
CONN_IDLE_S = 30
# The Go runtime's soft memory limit. With GOGC=200 the heap may grow to three times what it
# holds after a collection (9-12 MB under `--rounds realpace200`, so a goal of about 30 MB);
# near this limit the collector runs sooner instead, so a larger live heap no longer grows the
# process threefold. SQLite's caches are outside it (the driver allocates them itself).
GOMEMLIMIT = "64MiB"
# Pages the write-ahead log may grow to before a commit copies it into the database file
# (SQLite's default: 1,000, 4 MB). Each copy writes every page changed since the last one and
# syncs twice; the turn path rewrites the same few pages (processes, sessions, the _id indexes)
# over and over, so a longer log copies each of them once instead of ten times (about 40 MB of
# log at most; docs/operations.md "The embedded store").
WAL_AUTOCHECKPOINT = 10000


def ferretdb_command(data_dir: Path, port: int, *, sync: str = "normal") -> list[str]:
    """The FerretDB command line. WAL with synchronous=normal survives a crash of any of our
    processes and of FerretDB itself; only an OS crash or power loss can drop the last commits."""
    sqlite_dir = data_dir / "store"
    sqlite_dir.mkdir(parents=True, exist_ok=True)
    cache_kib = int(os.environ.get("VANCE_STORE_CACHE_KIB", CACHE_KIB))
    checkpoint = int(os.environ.get("VANCE_STORE_WAL_AUTOCHECKPOINT", WAL_AUTOCHECKPOINT))
    pragmas = (
        f"_pragma=synchronous({sync})&_pragma=cache_size(-{cache_kib})"
        f"&_pragma=wal_autocheckpoint({checkpoint})"
    )
    return [
        str(ferretdb_binary()),
        "--handler=sqlite",
        f"--sqlite-url=file:{sqlite_dir}/?{pragmas}",
        f"--listen-addr=127.0.0.1:{port}",
        f"--state-dir={sqlite_dir}",
        "--telemetry=disable",
        # Empty: no debug HTTP handler. VANCE_STORE_DEBUG_ADDR=127.0.0.1:8088 serves Go's pprof
        # (/debug/pprof/profile) for profiling the store (docs/operations.md).
        f"--debug-addr={os.environ.get('VANCE_STORE_DEBUG_ADDR', '')}",
        # Warnings include a dump of every unsupported command (pymongo's endSessions).
        "--log-level=error",
    ]


def ferretdb_env() -> dict[str, str]:
    """What FerretDB's process adds to the environment. Its Go heap is small (tens of MiB) and
    every command allocates the documents it decodes, so the default GOGC=100 collects often:
    a profile under `make bench` showed the collector and allocator at a quarter of the store's
    CPU. GOGC=200 collects half as often as the default; GOGC=400 (before) saved 1-2% more of
    the store's CPU per command but let the heap grow to five times the live one: about 16 MiB
    more of the store's RSS under `--rounds realpace200` (docs/operations.md).

    GOMAXPROCS=1: SQLite takes one write at a time (and findAndModify, update and delete hold
    FerretDB's write lock, tools/ferretdb/atomic-writes.patch), so a second Go processor mostly
    handed each command's goroutine between threads and spun looking for work; with one, the
    store spent 20-30% less CPU per turn under `make bench` (docs/operations.md).

    GOMEMLIMIT and the idle connections bound its memory (docs/operations.md "Memory")."""
    env = os.environ.get
    return {
        "DO_NOT_TRACK": "1",
        "GOGC": env("VANCE_STORE_GOGC", "200"),
        "GOMAXPROCS": env("VANCE_STORE_GOMAXPROCS", "1"),
        "GOMEMLIMIT": env("VANCE_STORE_GOMEMLIMIT", GOMEMLIMIT),
        "FERRETDB_SQLITE_MAX_IDLE_CONNS": env("VANCE_STORE_MAX_IDLE_CONNS", str(MAX_IDLE_CONNS)),
        "FERRETDB_SQLITE_CONN_IDLE_S": env("VANCE_STORE_CONN_IDLE_S", str(CONN_IDLE_S)),
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
