"""A client generated from the protos in another language (Go, tests/clients/go/) logs in and
calls the gRPC API with only the documented metadata; skipped where Go is not installed."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from tests.harness import System
from vance.v1 import session_pb2 as spb

CLIENT = Path(__file__).parent / "clients" / "go"


async def _run(*argv: str, cwd: Path, timeout: float) -> str:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode == 0, f"{argv[0]} failed: {err.decode(errors='replace')}"
    return out.decode()


@pytest.mark.skipif(shutil.which("go") is None, reason="the Go toolchain is not installed")
async def test_a_go_client_authenticates_and_calls(system: System, tmp_path: Path) -> None:
    binary = tmp_path / "vance-goclient"
    # The first build compiles grpc-go (a few minutes on a busy machine); Go caches it after.
    await _run("go", "build", "-o", str(binary), ".", cwd=CLIENT, timeout=900)
    out = await _run(
        str(binary),
        "-gateway",
        system.gateway,
        "-sessions",
        system.config.address("session_service"),
        cwd=tmp_path,
        timeout=60,
    )
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["without_token"] == "Unauthenticated"
    assert seen["created"].startswith("sess_") and seen["listed"] is True
    assert seen["other_tenant"] == "PermissionDenied"
    got = await system.sessions.GetSession(
        spb.GetSessionRequest(tenant_id="default", session_id=seen["created"])
    )
    assert got.owner_user_id == "dev"
