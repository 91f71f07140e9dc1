"""The SDK stands alone: clients/python installs into a fresh venv with only websockets, httpx and
pydantic, imports without any of the server's packages, and its `vance` command says clearly what
it lacks (the terminal extra, the server) instead of failing with a traceback."""

from __future__ import annotations

import asyncio
import venv
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "clients" / "python"
SERVER_ONLY = ["litellm", "grpc", "google.protobuf", "pymongo", "fastapi", "vance", "gateway"]


async def _run(*argv: str | Path) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *[str(a) for a in argv],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


async def test_the_sdk_installs_and_imports_without_the_server(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    await asyncio.to_thread(venv.create, env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    code, out = await _run(
        py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", PACKAGE
    )
    assert code == 0, out
    code, out = await _run(py, "-m", "pip", "list", "--format=freeze")
    installed = {line.split("==")[0].lower() for line in out.splitlines()}
    assert {"websockets", "httpx", "pydantic", "vance-client"} <= installed
    assert not installed & {"litellm", "grpcio", "pymongo", "fastapi", "rich", "prompt-toolkit"}
    probe = (
        "import sys, vance_client\n"
        "from vance_client import VanceClient, parse_frame, ChatMessageAppended\n"
        "f = parse_frame({'type': 'chat-message-appended', 'seq': 1, 'data': {'content': 'hi'}})\n"
        "assert isinstance(f, ChatMessageAppended) and f.data.content == 'hi'\n"
        f"loaded = [m for m in {SERVER_ONLY!r} if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "print('ok', vance_client.__file__)\n"
    )
    code, out = await _run(py, "-c", probe)
    assert code == 0 and out.startswith("ok"), out
    assert str(env_dir) in out  # the installed copy, not this checkout's
    vance = env_dir / "bin" / "vance"
    code, out = await _run(vance, "run")
    assert code == 2 and "needs the Vancetope server" in out, out
    home = tmp_path / "config"
    code, out = await _run("env", f"XDG_CONFIG_HOME={home}", vance, "chat")
    assert code == 1 and "not signed in" in out, out
    (home / "vance").mkdir(parents=True)
    (home / "vance" / "token.json").write_text(
        '{"url": "http://127.0.0.1:9", "tenant": "default", "user": "dev", "token": "t"}'
    )
    code, out = await _run("env", f"XDG_CONFIG_HOME={home}", vance, "chat")
    assert code == 2 and "pip install 'vance-client[terminal]'" in out, out
