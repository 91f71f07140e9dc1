"""Session fixtures: the scripted model server and the whole system, started once."""

from __future__ import annotations

from vance.grpc_env import apply_grpc_env

# The tests start the system's processes from here (tests/harness.py); gRPC reads its
# variables when it is imported (vance/grpc_env.py).
apply_grpc_env()

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.harness import System, running_system
from vance.testing.scripted_llm import ThreadedScriptedLlm


@pytest.fixture(scope="session")
def llm() -> Iterator[ThreadedScriptedLlm]:
    server = ThreadedScriptedLlm().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
async def system(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[System]:
    tmp = tmp_path_factory.mktemp("vance")
    logs = Path(os.environ.get("VANCE_TEST_LOGS", str(tmp / "logs")))
    async with running_system(tmp, llm, logs=logs) as system:
        yield system


@pytest.fixture(scope="module")
async def own_system(
    tmp_path_factory: pytest.TempPathFactory,
    llm: ThreadedScriptedLlm,
    request: pytest.FixtureRequest,
) -> AsyncIterator[System]:
    """A system of the test module's own, for tests that kill, restart or stop its services
    (the shared `system` must stay whole for every other module)."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    async with running_system(tmp_path_factory.mktemp(name), llm) as system:
        yield system


# Browser fixtures (tests/browser_support.py): loaded here so any test module can use them.
pytest_plugins = ["tests.browser_support", "tests.hang_watch"]
