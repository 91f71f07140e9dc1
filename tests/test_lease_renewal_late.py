"""A renewal that is late is not a worker that hung (issue 28, 800 clients): a turn whose
worker's heartbeat asked for its lease in time, with the renewal's write still on its way to a
slow store when the lease passes, goes on; before, the dispatcher redid it, throwing away a
running turn and adding a redo to the store that was slow already. A turn that nobody renewed
is still redone once its lease has passed. The dispatcher runs on the real store, reached
through a relay that holds its commands (tests/store_gate.py), in a database of its own."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

from pymongo import AsyncMongoClient

from process_service.events.log import EventLog
from process_service.process_model import Process
from process_service.runtime.dispatcher import Dispatcher
from process_service.runtime.lane_signals import LaneSignals
from process_service.runtime.lanes import Lanes, renewal_due
from process_service.store.process_store import ProcessStore
from tests.harness import System, eventually
from tests.store_gate import StoreGate
from vance.clock import SystemClock
from vance.config import LanesConfig


async def test_a_turn_whose_renewal_is_late_is_not_redone(system: System) -> None:
    gate = StoreGate(system.config.mongodb_uri)
    await gate.start()
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(gate.uri)
    db = client[f"lease_late_{uuid.uuid4().hex[:8]}"]
    clock = SystemClock()
    config = LanesConfig(lease_ms=6_000, heartbeat_ms=250, scan_interval_ms=600_000)
    store = ProcessStore(db)
    lanes = Lanes(store, EventLog(store, clock, chunk_window_s=600), clock, config, LaneSignals())
    dispatcher = Dispatcher(store, lanes, clock, config)
    running: asyncio.Task[None] | None = None
    try:
        conn = dispatcher.register("worker-late", {"arthur": "1"}, 0)  # takes no new turns
        refs = []
        for name in ("renewed", "forgotten"):
            pid = f"proc_{name}_{uuid.uuid4().hex[:8]}"
            await store.insert_process(
                Process(id=pid, session_id=f"sess_{pid}", name=name, engine="arthur", wake=True)
            )
            ref = await lanes.take(pid, conn.worker_id)
            assert ref is not None
            # As `_hand_over` leaves a turn handed to the worker.
            conn.turns[ref.turn_id] = ref
            dispatcher._turns[ref.turn_id] = ref
            refs.append(ref)
        # Started once both lanes are held: its first sweep, run late on a loaded machine,
        # would otherwise take a lane the test takes itself.
        running = asyncio.create_task(dispatcher.run())  # stopped and awaited below
        renewed, forgotten = refs
        # The renewal goes out in the second half of the lease (due then anyway), so that the
        # lease it asks for runs seconds past the one it renews.
        await eventually(
            lambda: renewed.lease_until_ms - clock.now_ms() < 2_000,
            timeout=10.0,
            what="the lease in its second half",
        )
        assert renewal_due(config, renewed.lease_until_ms, clock.now_ms())
        gate.hold()  # the store answers nothing from now on: the renewal is late
        renewal = asyncio.create_task(dispatcher.renew(conn, [renewed.turn_id]))
        await asyncio.sleep(0)  # the renewal is sent (and waits at the gate)
        assert renewed.lease_until_ms > clock.now_ms(), "the machine was too slow to test this"
        # Both leases pass; the sweep loop looks every heartbeat.
        await eventually(
            lambda: dispatcher.turn(forgotten.turn_id) is None,
            timeout=10.0,
            what="the turn nobody renewed being redone",
        )
        assert renewed.lease_until_ms < clock.now_ms()
        assert dispatcher.turn(renewed.turn_id) is renewed and not renewed.done
        gate.release()
        await renewal
        assert renewed.lease_until_ms > clock.now_ms(), "the late renewal extended the lease"
        assert dispatcher.turn(renewed.turn_id) is renewed and not renewed.done
    finally:
        gate.release()
        dispatcher.stop()
        if running is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(running, timeout=10)
        await client.drop_database(db.name)
        await client.close()
        await gate.close()
