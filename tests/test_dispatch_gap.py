"""A steer that arrives while kicked turns wait for the dispatcher's next step (issue 28): kicks
sit in the ready queue until `_pump` hands them out, and a steer in that gap answered QUEUED
although every worker slot was free, then paid an inbox write and a lane take of its own (about
a hundred turns of each realpace200 run). It starts at once now when the workers have a free
slot for every queued turn besides it; when they do not, it still waits behind them (the fair
queue's order, process_service/runtime/fair_queue.py)."""

from __future__ import annotations

import uuid
from typing import Any

from pymongo import AsyncMongoClient

from process_service.events.log import EventLog
from process_service.models import NextTurn
from process_service.process_model import Process
from process_service.runtime.dispatcher import Dispatcher
from process_service.runtime.lane_signals import LaneSignals
from process_service.runtime.lanes import Lanes
from process_service.store.process_store import ProcessStore
from tests.harness import System
from vance.clock import SystemClock
from vance.config import LanesConfig
from vance.domain import ProcessStatus


def _waiting(name: str) -> Process:
    """A chat process waiting for its user: IDLE, started, a turn wanted, no lane held."""
    pid = f"proc_{name}_{uuid.uuid4().hex[:8]}"
    return Process(
        id=pid,
        session_id=f"sess_{pid}",
        name=name,
        engine="arthur",
        status=ProcessStatus.IDLE,
        tenant_id="acme",
        started=True,
        wake=True,
    )


async def _outcomes(system: System, slots: int) -> tuple[NextTurn, NextTurn]:
    """The outcomes of two turns asked for in one step, with a worker of `slots` slots: the
    first is kicked into the ready queue, the second finds it there."""
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(system.config.mongodb_uri)
    try:
        store = ProcessStore(client[f"dispatch_gap_{uuid.uuid4().hex[:8]}"])
        clock = SystemClock()
        config = LanesConfig()
        lanes = Lanes(
            store, EventLog(store, clock, chunk_window_s=600), clock, config, LaneSignals()
        )
        dispatcher = Dispatcher(store, lanes, clock, config)
        dispatcher.register("worker-1", {"arthur": "1"}, slots)
        first = dispatcher.next_turn(_waiting("first"))
        second = dispatcher.next_turn(_waiting("second"))
        return first, second
    finally:
        await client.close()


async def test_a_turn_asked_for_while_another_waits_for_a_free_slot_starts(
    system: System,
) -> None:
    assert await _outcomes(system, slots=2) == (NextTurn.STARTS, NextTurn.STARTS)


async def test_a_turn_does_not_overtake_one_that_waits_for_the_last_slot(
    system: System,
) -> None:
    assert await _outcomes(system, slots=1) == (NextTurn.STARTS, NextTurn.QUEUED)
