"""`python -m engine_worker`: one worker process."""

from __future__ import annotations

from vance.grpc_env import apply_grpc_env

apply_grpc_env()  # before gRPC is imported: it reads the variables then

import asyncio
import logging
import os
import socket

from engine_worker.engine import EngineRegistry
from engine_worker.engines import default_engines
from engine_worker.health import WorkerHealth
from engine_worker.worker import Worker
from vance.channels import Channels
from vance.config import load_config
from vance.heap import settle_heap
from vance.internal.v1 import session_internal_pb2_grpc, tool_pb2_grpc
from vance.llm import (
    is_configured,
    make_model_client,
    warm_up_clients,
)
from vance.logsetup import setup_logging
from vance.memdebug import interval_from_env, report_growth
from vance.observability.setup import start_observability
from vance.server import run_main, wait_for_signal
from vance.v1 import session_pb2_grpc

logger = logging.getLogger("engine_worker")


async def serve() -> None:
    config = load_config()
    setup_logging(config.logging, "engine_worker")
    start_observability(config, "engine_worker")
    registry = EngineRegistry(default_engines())
    if not is_configured(config.llm):
        logger.warning("no model provider configured: chats will answer with setup instructions")
    channels = Channels(config)
    llm = make_model_client(config.llm)
    # One stream per process_service replica: every replica can hand its turns to every
    # worker, so no turn waits for another replica's sweep (docs/operations.md "Replicas").
    workers = [
        Worker(
            channel=channel,
            registry=registry,
            llm=llm,
            slots=config.worker.slots,
            worker_id=replica_worker_id(config.worker.worker_id, i),
            drain_timeout_s=config.worker.drain_timeout_s,
            reconnect_backoff_s=config.worker.reconnect_backoff_s,
            tools=tool_pb2_grpc.ToolServiceStub(channels.get("tool_service")),
            sessions=session_internal_pb2_grpc.SessionInternalServiceStub(
                channels.get("session_service")
            ),
            projects=session_pb2_grpc.SessionServiceStub(channels.get("session_service")),
            max_loop_lag_ms=config.worker.max_loop_lag_ms,
            max_rss_mb=config.worker.max_rss_mb,
        )
        for i, channel in enumerate(channels.replicas("process_service"))
    ]
    worker = workers[0]
    if is_configured(config.llm):
        # Before taking turns: a client's first call would otherwise spend its imports and
        # schema building (litellm: ~0.7 s of CPU) inside the first user's turn (vance/llm.py).
        try:
            await warm_up_clients(config.llm)
        except Exception:
            logger.warning(
                "warming up the model client failed; the first turn pays for it", exc_info=True
            )
    settle_heap()
    async with asyncio.TaskGroup() as tg:
        for w in workers:
            tg.create_task(w.run())
        health = None
        if config.worker.health_port:
            health = tg.create_task(
                WorkerHealth(worker, config.grpc_host, config.worker.health_port).run()
            )
        memdebug_s = interval_from_env()  # VANCE_DEBUG_TRACEMALLOC (vance/memdebug.py)
        memdebug = tg.create_task(report_growth(memdebug_s)) if memdebug_s else None
        logger.info("worker %s runs engines %s", worker.worker_id, registry.names())
        await wait_for_signal()
        if health is not None:
            health.cancel()  # NOT_SERVING while it drains: no probe counts it as ready
        if memdebug is not None:
            memdebug.cancel()
        # Drains: running turns finish (bounded), then run() returns and the group ends.
        await asyncio.gather(*(w.shutdown() for w in workers))
    await llm.aclose()
    await channels.close()


def replica_worker_id(worker_id: str, replica: int) -> str:
    """The id this worker declares to process_service replica `replica` (0-based): its own
    id (generated when empty) to the first, marked ones to the others, so lanes and logs tell
    which stream ran a turn."""
    if replica == 0:
        return worker_id
    base = worker_id or f"{socket.gethostname()}-{os.getpid()}"
    return f"{base}@r{replica + 1}"


def main() -> None:
    run_main(serve)


main()
