"""Clients generated from the public protos in other languages (`make clients`, clients/) log in
at the gateway and call the gRPC API with only the documented metadata: Go (tests/clients/go/,
which also reads why a call was refused), Java (tests/clients/java/, next to java.lang.Process)
and TypeScript (tests/clients/ts/). One system for all three; each is skipped where its
toolchain or `make clients` output is missing."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from tests.harness import System
from vance.v1 import session_pb2 as spb

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = Path(__file__).parent / "clients"
TS_PACKAGE = ROOT / "clients" / "typescript"
JAVA_SOURCES = ROOT / "clients" / "java" / "src" / "main" / "java"
# Debian's packages (libprotobuf-java, libgrpc-java and what they depend on, `make proto-debs`).
JAVA_CLASSPATH = "/usr/share/java/*"


async def _run(*argv: str, cwd: Path, timeout: float) -> str:
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode == 0, f"{argv[0]} failed: {err.decode(errors='replace')}"
    return out.decode()


def _last_json(out: str) -> dict[str, object]:
    seen: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return seen


async def _owner(system: System, session_id: str) -> str:
    got = await system.sessions.GetSession(
        spb.GetSessionRequest(tenant_id="default", session_id=session_id)
    )
    return got.owner_user_id


@pytest.mark.skipif(shutil.which("go") is None, reason="the Go toolchain is not installed")
async def test_a_go_client_authenticates_calls_and_reads_why_it_was_refused(
    system: System, tmp_path: Path
) -> None:
    binary = tmp_path / "vance-goclient"
    # The first build compiles grpc-go (a few minutes on a busy machine); Go caches it after.
    await _run("go", "build", "-o", str(binary), ".", cwd=CLIENTS / "go", timeout=900)
    out = await _run(
        str(binary),
        "-gateway",
        system.gateway,
        "-sessions",
        system.config.address("session_service"),
        cwd=tmp_path,
        timeout=60,
    )
    seen = _last_json(out)
    assert seen["without_token"] == "Unauthenticated"
    assert str(seen["created"]).startswith("sess_") and seen["listed"] is True
    assert seen["other_tenant"] == "PermissionDenied"
    assert await _owner(system, str(seen["created"])) == "dev"
    # Why: the reason as the `vance-reason` trailer carries it, and as google.rpc.ErrorInfo in
    # the status details, which every refused call carries (vance/rpc_calls.py).
    assert seen["vance_reason"] == "tenant_mismatch"
    assert seen["error_info_reason"] == "tenant_mismatch"
    assert seen["error_info_domain"] == "vance.dev"


@pytest.mark.skipif(
    shutil.which("javac") is None or not JAVA_SOURCES.is_dir(),
    reason="no JDK, or `make clients` has not generated clients/java",
)
async def test_a_java_client_compiles_beside_java_lang_process_and_calls(
    system: System, tmp_path: Path
) -> None:
    classes = tmp_path / "classes"
    # The generated sources on the source path: javac compiles the classes the client uses (the
    # wildcard import still sees every generated name), not all of them. C1 only: javac's run
    # is short, full JIT optimisation costs more than it saves.
    javac = ["javac", "-J-XX:TieredStopAtLevel=1", "-nowarn", "-cp", JAVA_CLASSPATH]
    await _run(
        *javac,
        "-sourcepath",
        str(JAVA_SOURCES),
        "-d",
        str(classes),
        str(CLIENTS / "java" / "VanceClient.java"),
        cwd=tmp_path,
        timeout=900,
    )
    out = await _run(
        "java",
        "-cp",
        f"{classes}:{JAVA_CLASSPATH}",
        "VanceClient",
        system.gateway,
        system.config.address("session_service"),
        cwd=tmp_path,
        timeout=120,
    )
    seen = _last_json(out)
    assert str(seen["created"]).startswith("sess_") and seen["listed"] is True
    assert seen["other_tenant"] == "PERMISSION_DENIED"
    assert seen["process_exit"] == 0  # java.lang.Process ran `true`
    assert await _owner(system, str(seen["created"])) == "dev"


@pytest.mark.skipif(
    shutil.which("node") is None or not (TS_PACKAGE / "node_modules").is_dir(),
    reason="no Node, or `make clients` has not installed clients/typescript",
)
async def test_a_typescript_client_calls(system: System, tmp_path: Path) -> None:
    # The package as another team's project would depend on it: node_modules links to the
    # generated package and its runtime dependencies.
    modules = tmp_path / "node_modules"
    (modules / "@vancetope").mkdir(parents=True)
    (modules / "@vancetope" / "vance-client").symlink_to(TS_PACKAGE)
    for scope in ("@connectrpc", "@bufbuild"):
        (modules / scope).symlink_to(TS_PACKAGE / "node_modules" / scope)
    for name in ("main.ts", "tsconfig.json", "package.json"):
        shutil.copy(CLIENTS / "ts" / name, tmp_path / name)
    tsc = TS_PACKAGE / "node_modules" / ".bin" / "tsc"
    await _run(str(tsc), "-p", str(tmp_path), cwd=tmp_path, timeout=300)
    out = await _run(
        "node",
        "main.js",
        system.gateway,
        system.config.address("session_service"),
        cwd=tmp_path,
        timeout=60,
    )
    seen = _last_json(out)
    assert str(seen["created"]).startswith("sess_") and seen["listed"] is True
    assert seen["other_tenant"] == "PermissionDenied"
    assert await _owner(system, str(seen["created"])) == "dev"
