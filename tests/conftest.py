"""Session fixtures: the scripted model server and the whole system, started once."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.harness import System, eventually, free_port_block
from vance.config import load_config
from vance.supervisor import Supervisor
from vance.testing.scripted_llm import ThreadedScriptedLlm

WORKERS = 2


@pytest.fixture(scope="session")
def llm() -> Iterator[ThreadedScriptedLlm]:
    server = ThreadedScriptedLlm().start()
    yield server
    server.stop()


def system_env(tmp: Path, llm: ThreadedScriptedLlm) -> dict[str, str]:
    base = free_port_block(6)
    return {
        "VANCE_DATA_DIR": str(tmp / "data"),
        "VANCE_STORE_PORT": str(base + 4),
        "VANCE_GRPC_PORT_BASE": str(base),
        "VANCE_GATEWAY_PORT": str(base + 5),
        "VANCE_ENGINE_WORKERS": str(WORKERS),
        "VANCE_WORKER_SLOTS": "8",
        "VANCE_LEASE_MS": "6000",
        "VANCE_LLM_MODEL": "openai/scripted",
        "VANCE_LLM_API_BASE": llm.base_url,
        "VANCE_LLM_API_KEY": "test-key",
        "VANCE_LOG_LEVEL": "INFO",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


@pytest.fixture(scope="session")
async def system(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[System]:
    tmp = tmp_path_factory.mktemp("vance")
    env = system_env(tmp, llm)
    config = load_config(env={**os.environ, **env})
    logs = Path(os.environ.get("VANCE_TEST_LOGS", str(tmp / "logs")))
    sup = Supervisor(config, env, log_to=logs, quiet=True)
    system = System(config, sup, llm)
    try:
        await sup.start_all()
        await eventually(lambda: _all_workers(system), what="workers to connect", timeout=60)
        yield system
    finally:
        await system.close()
        await sup.stop_all()


async def _all_workers(system: System) -> bool:
    return len(await system.workers()) >= WORKERS
