"""What an open system costs while nothing happens, and per second while turns wait on a
model (issue 28): nothing is polled per session or per turn; what runs on a timer runs once
per process. Each test starts a system of its own with the store trace on
(vance/store_trace.py: every process writes its store command counts to a file once a
second), so it can read what process_service and session_service send the store."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.harness import System, eventually, running_system
from tests.sessions_support import TENANT, ask, caller, chat_session, found, new_user, word
from tests.test_tokens import me
from vance.testing.scripted_llm import ThreadedScriptedLlm
from vance.v1 import tokens_pb2 as tpb
from vance.v1 import tokens_pb2_grpc

# Trace writes (about a second apart) in the quiet window: long enough for the former poll
# (two store reads every 0.5 s while the feed was quiet) to show many times over.
QUIET_DUMPS = 4


@pytest.fixture(scope="module")
async def traced(
    tmp_path_factory: pytest.TempPathFactory, llm: ThreadedScriptedLlm
) -> AsyncIterator[tuple[System, Path]]:
    tmp = tmp_path_factory.mktemp("idle_cost")
    trace = tmp / "store-trace"
    trace.mkdir()
    async with running_system(tmp, llm, extra_env={"VANCE_STORE_TRACE": str(trace)}) as system:
        yield system, trace


def _trace_file(system: System, trace: Path, service: str) -> Path:
    proc = system.supervisor.children[service].proc
    assert proc is not None, f"{service} is not running"
    return trace / f"{proc.pid}.json"


def _newer(path: Path, stamp: int) -> dict[str, int] | None:
    """The counts in the file once it was written after `stamp`."""
    if not path.exists() or path.stat().st_mtime_ns == stamp:
        return None
    try:
        return {str(k): int(v) for k, v in json.loads(path.read_text())["counts"].items()}
    except (ValueError, KeyError):
        return None  # caught between the write and the rename


async def _after_dumps(system: System, trace: Path, service: str, dumps: int) -> dict[str, int]:
    """The service's store command counts once it has written its trace file `dumps` more
    times (about a second apart): a window measured by the service's own writes."""
    path = _trace_file(system, trace, service)
    counts: dict[str, int] = {}
    for _ in range(dumps):
        stamp = path.stat().st_mtime_ns if path.exists() else 0
        counts = await eventually(
            functools.partial(_newer, path, stamp), what=f"{service}'s store trace", timeout=30
        )
    return counts


async def test_a_quiet_system_polls_the_store_neither_for_its_chat_feed_nor_for_revocations(
    traced: tuple[System, Path],
) -> None:
    """Two timers of an open system used to read the store whatever happened: the chat feed's
    end (process_service/events/chat_feed.py, two reads every half second while the feed was
    quiet) and the token revocation refresh every service asks session_service for every two
    seconds (session_service/access/token_service.py, one read per caller). With one replica
    of each, the writer of those records is the one answering, so neither reads while nothing
    changes (the revocations are re-read every RECONCILE_S, for a writer the configuration
    does not know of); what they answer still arrives at once: a message asked after the quiet
    spell is findable, and a token revoked then is refused."""
    system, trace = traced
    owner, token = await new_user(system)
    client, sid = await chat_session(system, token)
    first = word()
    await ask(system, client, "What does the first gauge say?", f"It reads {first}.")
    await found(system, first, caller(owner), sid)  # the indexer follows the feed's end

    feed = await _after_dumps(system, trace, "process_service", 2)
    tokens = await _after_dumps(system, trace, "session_service", 1)
    feed_after = await _after_dumps(system, trace, "process_service", QUIET_DUMPS)
    tokens_after = await _after_dumps(system, trace, "session_service", 1)
    feed_reads = feed_after.get("find chat_feed", 0) - feed.get("find chat_feed", 0)
    assert feed_reads == 0, f"{feed_reads} chat feed reads in {QUIET_DUMPS} s of quiet"
    token_reads = tokens_after.get("find token_revocations", 0) - tokens.get(
        "find token_revocations", 0
    )
    # At most the copy's re-read (RECONCILE_S, 10 s; the window is about 6 s): the refreshes of
    # seven processes, one read each every two seconds, were about 20.
    assert token_reads <= 1, f"{token_reads} revocation reads in {QUIET_DUMPS} s of quiet"

    second = word()
    await ask(system, client, "And the second gauge?", f"It reads {second}.")
    hit = await found(system, second, caller(owner), sid)
    assert hit.conversation_match
    await client.close()

    stub = tokens_pb2_grpc.TokenServiceStub(system.channel("session_service"))
    await stub.RevokeTokens(tpb.RevokeTokensRequest(tenant_id=TENANT, username=owner, all=True))
    started = time.monotonic()

    async def refused() -> bool:
        return await me(system, token) == 401

    await eventually(refused, what="the gateway refusing the revoked token", timeout=30)
    # The gateway's refresh (auth.revocation_refresh_s) and then some, for a loaded machine.
    assert time.monotonic() - started < 15
