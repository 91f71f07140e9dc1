"""The worker's side of "one turn's failure stays that turn's" (engine_worker/worker.py): a
report that does not encode (a payload that is not JSON) goes out as its turn's failure, that
turn stops and lets go of its commit's ack, and every other message of the same write goes out
as it was; nothing raises into the stream every turn shares."""

from __future__ import annotations

import asyncio

import grpc

from engine_worker import protocol as ew
from engine_worker.engine import EngineRegistry
from engine_worker.worker import Outbox, Worker
from process_service.runtime import worker_protocol as ps
from vance.config import LlmConfig
from vance.domain import ChatRole
from vance.internal.v1 import worker_pb2 as wkpb
from vance.llm import make_model_client


async def test_a_report_that_does_not_encode_fails_its_own_turn_only() -> None:
    channel = grpc.aio.insecure_channel("127.0.0.1:9")  # never called here
    worker = Worker(
        channel=channel,
        registry=EngineRegistry(),
        llm=make_model_client(LlmConfig()),
        slots=2,
        worker_id="w-test",
    )
    try:
        # turn-1 waits for its commit's ack; turn-2 runs on.
        async def turn() -> None:
            await asyncio.Event().wait()

        task_1 = asyncio.create_task(turn())
        task_2 = asyncio.create_task(turn())
        ack: asyncio.Future[ew.Ack | None] = asyncio.get_running_loop().create_future()
        worker._turns.update({"turn-1": task_1, "turn-2": task_2})
        worker._acks["turn-1"] = ack
        outbox: Outbox = asyncio.Queue()
        for item in (
            ew.Chunk("turn-2", ChatRole.ASSISTANT, "Bon"),
            ew.Progress("turn-1", "METRICS", {"not json": object()}),
            ew.Chunk("turn-2", ChatRole.ASSISTANT, "jour"),
            None,
        ):
            outbox.put_nowait(item)
        sent = [wkpb.WorkerMessage.FromString(m) async for m in worker._requests(outbox)]
        assert sent[0].WhichOneof("kind") == "hello"
        read = [m for s in sent[1:] for m in ps.from_proto(s)]
        assert read[0] == ps.Chunk("turn-2", ChatRole.ASSISTANT, "Bon")
        assert isinstance(read[1], ps.Failure) and read[1].turn_id == "turn-1"
        assert "Progress did not encode" in read[1].error
        assert read[2] == ps.Chunk("turn-2", ChatRole.ASSISTANT, "jour")
        assert len(read) == 3
        # turn-1 stopped and let go of its ack; turn-2 runs on.
        await asyncio.wait([task_1], timeout=5)
        assert task_1.cancelled() and ack.done() and ack.result() is None
        assert list(worker._turns) == ["turn-2"] and not task_2.done()
        task_2.cancel()
    finally:
        await channel.close()
