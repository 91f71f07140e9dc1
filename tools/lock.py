"""Keeps requirements.lock (every Python package `make setup` installs, pinned) in step with
the dependencies declared in pyproject.toml and clients/python/pyproject.toml.

The lock's first line records a hash of those two files. When it matches, nothing happens and
nothing is fetched, so `make setup` on a fresh clone, or offline with pip's cache, installs the
committed pins. When a pyproject changed, `uv pip compile` resolves again (PyPI is needed then),
keeping every pin the old lock already had unless the new ranges exclude it, so adding one
dependency does not upgrade the others. `--upgrade` resolves everything to the newest allowed."""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
INPUTS = (ROOT / "pyproject.toml", ROOT / "clients/python/pyproject.toml")
MARK = "# inputs: "


def inputs_hash() -> str:
    digest = hashlib.sha256()
    for path in INPUTS:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def recorded_hash() -> str:
    if not LOCK.exists():
        return ""
    first = LOCK.read_text().split("\n", 1)[0]
    return first.removeprefix(MARK) if first.startswith(MARK) else ""


def uv() -> str:
    """The venv's uv (a dev dependency), else one on PATH, else installed into the venv."""
    beside = Path(sys.executable).parent / "uv"
    if beside.exists():
        return str(beside)
    found = shutil.which("uv")
    if found:
        return found
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "uv"], check=True)
    return str(beside)


def compile_lock(*, upgrade: bool) -> None:
    body = LOCK.with_suffix(".body")
    if LOCK.exists():
        # Seeds the resolution with the current pins (uv keeps what the output file holds).
        body.write_text(LOCK.read_text().split("\n", 1)[1] if recorded_hash() else LOCK.read_text())
    command = [
        uv(),
        "pip",
        "compile",
        *(str(p.relative_to(ROOT)) for p in INPUTS),
        "--all-extras",
        "--universal",  # one lock for this machine and the image (Dockerfile)
        "--python-version",
        "3.11",
        "--no-header",
        "--quiet",
        "-o",
        str(body.relative_to(ROOT)),
    ]
    if upgrade:
        command.append("--upgrade")
    try:
        subprocess.run(command, cwd=ROOT, check=True)
        LOCK.write_text(f"{MARK}{inputs_hash()}\n{body.read_text()}")
    finally:
        body.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upgrade", action="store_true", help="newest allowed versions")
    parser.add_argument("--check", action="store_true", help="fail when the lock is stale")
    ns = parser.parse_args(argv)
    fresh = recorded_hash() == inputs_hash()
    if ns.check:
        if not fresh:
            print("requirements.lock is stale: run `make lock`", file=sys.stderr)
        return 0 if fresh else 1
    if fresh and not ns.upgrade:
        LOCK.touch()  # newer than the inputs, for make
        return 0
    compile_lock(upgrade=ns.upgrade)
    print("requirements.lock written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
