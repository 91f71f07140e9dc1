"""What process_service queues for a worker goes as one stream message (a DispatchBatch,
process_service/runtime/worker_stream.py `serve`, docs/architecture.md "The worker protocol"):
the assignments of turns handed out together, the commit acks of commits stored together. Each
reaches the worker that took its turn, in the order it was queued; one that does not encode
fails its own turn only. A worker of the older form (its hello does not say it reads batches)
gets every message on its own, on a real stream.

The first tests run process_service's dispatch on the real store with two stand-in workers
whose streams are read only when a test says so, so what queues meanwhile is exactly what one
write holds (on a live stream: what queues while the previous write is under way)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pymongo import AsyncMongoClient

from engine_worker import protocol as ew
from process_service.events.log import EventLog
from process_service.process_model import Process
from process_service.runtime import worker_protocol as ps
from process_service.runtime.dispatcher import Dispatcher, WorkerConn
from process_service.runtime.inbox import Inbox
from process_service.runtime.lane_signals import LaneSignals
from process_service.runtime.lanes import Lanes
from process_service.runtime.outbox import Outbox
from process_service.runtime.turns import Turns
from process_service.runtime.worker_stream import MAX_BATCH_BYTES, WorkerStreams
from process_service.store.process_store import ProcessStore
from tests.harness import System, eventually
from vance.clock import SystemClock
from vance.config import LanesConfig
from vance.domain import ProcessStatus, UserChatInput
from vance.internal.v1 import worker_pb2 as wkpb
from vance.v1 import common_pb2 as pb


@dataclass
class Dispatch:
    """process_service's turn dispatch on the real store, without its gRPC server."""

    store: ProcessStore
    dispatcher: Dispatcher
    streams: WorkerStreams
    inbox: Inbox
    stand_ins: list[StandIn] = field(default_factory=list)


@asynccontextmanager
async def running_dispatch(system: System) -> AsyncIterator[Dispatch]:
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(system.config.mongodb_uri)
    store = ProcessStore(client[f"dispatch_batch_{uuid.uuid4().hex[:8]}"])
    clock, config = SystemClock(), LanesConfig()
    events = EventLog(store, clock, chunk_window_s=600)
    lanes = Lanes(store, events, clock, config, LaneSignals())
    dispatcher = Dispatcher(store, lanes, clock, config)
    inbox = Inbox(store, clock, dispatcher)
    outbox = Outbox(store, inbox, LaneSignals(), observations=None, scan_every_s=600)
    turns = Turns(store, events, lanes, outbox)
    streams = WorkerStreams(
        dispatcher=dispatcher, turns=turns, lanes=lanes, events=events, heartbeat_ms=3_000
    )
    tasks = [asyncio.create_task(dispatcher.run()), asyncio.create_task(streams.run())]
    try:
        await asyncio.sleep(0)  # both task groups up
        dispatch = Dispatch(store, dispatcher, streams, inbox)
        yield dispatch
        for stand_in in dispatch.stand_ins:
            await stand_in.close()
    finally:
        dispatcher.stop()
        streams.stop()
        for task in tasks:
            with suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(task, 10)
        await client.close()


class StandIn:
    """A worker's stream as `WorkerConnect` serves it to a worker that reads batches: each
    `write()` is the next stream message, read as the worker reads it (engine_worker/
    protocol.py)."""

    def __init__(self, dispatch: Dispatch, worker_id: str, slots: int) -> None:
        self.worker_id = worker_id
        self._dispatch = dispatch
        self._reports: asyncio.Queue[list[ps.FromWorker] | None] = asyncio.Queue()
        hello = ps.Hello(worker_id, {"arthur": "1.0.0"}, slots, reads_batch=True)
        self._stream = dispatch.streams.serve(hello, self._incoming(), ps.to_wire)
        dispatch.stand_ins.append(self)

    async def _incoming(self) -> AsyncIterator[list[ps.FromWorker]]:
        while (messages := await self._reports.get()) is not None:
            yield messages

    async def write(self) -> list[ew.FromServer]:
        wire = wkpb.DispatchMessage.FromString(ps.batch_wire(await anext(self._stream)))
        return [ew.from_proto(m) for m in ew.unbatched(wire)]

    def send(self, *messages: ps.FromWorker) -> None:
        """One stream message of the worker's, holding these."""
        self._reports.put_nowait(list(messages))

    @property
    def conn(self) -> WorkerConn:
        return self._dispatch.dispatcher.workers[self.worker_id]

    async def close(self) -> None:
        """The worker's side ends: so does the stream, as when a worker goes away."""
        self._reports.put_nowait(None)
        async for _ in self._stream:
            pass


def _waiting(name: str) -> Process:
    """A chat process whose first turn is wanted."""
    pid = f"proc_{name}_{uuid.uuid4().hex[:8]}"
    return Process(
        id=pid,
        session_id=f"sess_{pid}",
        name="chat",
        engine="arthur",
        status=ProcessStatus.INIT,
        tenant_id="acme",
        wake=True,
    )


async def _malformed(dispatch: Dispatch, pid: str) -> None:
    """Gives the process an inbox message that does not convert (a tool result without its
    call): the assignment that hands it to the turn does not encode."""
    key = f"bad-{uuid.uuid4().hex[:8]}"
    pushed = await dispatch.store.processes.update_one(
        {"_id": pid},
        {
            "$push": {
                "pending": {"id": key, "idempotency_key": key, "kind": "TOOL_RESULT"},
                "pending_keys": key,
            }
        },
    )
    assert pushed.modified_count == 1


async def _queued(stand_ins: list[StandIn], count: int) -> None:
    await eventually(
        lambda: sum(s.conn.outbox.qsize() for s in stand_ins) == count,
        what=f"{count} messages queued for the workers",
    )


def _in_outbox(conn: WorkerConn) -> list[tuple[str, str]]:
    """What waits in the worker's outbox, in order (asyncio.Queue holds it in `_queue`), as
    (kind, turn id)."""
    items: list[ps.ToWorker | None] = list(conn.outbox._queue)  # type: ignore[attr-defined]
    out = []
    for item in items:
        if isinstance(item, ps.Assign):
            out.append(("assign", item.ref.turn_id))
        elif isinstance(item, ps.Ack):
            out.append(("ack", item.turn_id))
    return out


def _read(write: list[ew.FromServer]) -> list[tuple[str, str]]:
    """A write as the worker read it, as (kind, turn id)."""
    out = []
    for m in write:
        if isinstance(m, ew.Assignment):
            out.append(("assign", m.turn_id))
        elif isinstance(m, ew.Ack):
            out.append(("ack", m.turn_id))
    return out


async def test_turns_handed_out_together_reach_their_workers_in_one_write_each(
    system: System,
) -> None:
    """Seven turns asked for in one step, two workers: each worker's next write is one stream
    message holding every assignment it was given, in the order they were queued; the one
    whose assignment does not encode fails alone (its process closes STALE, not redone) and
    the rest of its write goes. The commits' acks then come back in one write per worker, and
    a process steered meanwhile gets its next turn in the same write, after its ack."""
    async with running_dispatch(system) as dispatch:
        one, two = StandIn(dispatch, "w-one", 4), StandIn(dispatch, "w-two", 4)
        for stand_in in (one, two):
            assert [type(m) for m in await stand_in.write()] == [ew.Welcome]
        good = [_waiting(f"good{i}") for i in range(6)]
        bad = _waiting("bad")
        processes = [*good[:3], bad, *good[3:]]
        for p in processes:
            await dispatch.store.insert_process(p)
        await _malformed(dispatch, bad.id)
        for p in processes:
            dispatch.dispatcher.next_turn(p)  # all in one step
        await _queued([one, two], 7)
        queued = {s.worker_id: _in_outbox(s.conn) for s in (one, two)}

        writes = {s.worker_id: await s.write() for s in (one, two)}
        got: dict[str, tuple[str, str]] = {}  # process -> (worker, turn)
        for s in (one, two):
            write = writes[s.worker_id]
            assert all(isinstance(m, ew.Assignment) for m in write)
            for m in write:
                assert isinstance(m, ew.Assignment)
                got[m.process.id] = (s.worker_id, m.turn_id)
            # In the order queued; only the malformed one is left out.
            assert set(s.conn.turns) == {t for _, t in _read(write)}
            assert [t for _, t in _read(write)] == [
                t for _, t in queued[s.worker_id] if t in s.conn.turns
            ]
        assert sorted(got) == sorted(p.id for p in good)
        assert len(queued[one.worker_id]) + len(queued[two.worker_id]) == len(got) + 1
        # Its turn fails for good, not redone; the chat stays open and says why.
        ended = await eventually(
            lambda: _failed(dispatch, bad.id), what="the malformed turn to fail for good"
        )
        (notice,) = await dispatch.store.chat_range(bad.id, 1, ended.chat_count)
        assert notice.content.startswith("No answer came: the turn could not be sent to a worker:")

        # good[0] is steered while its turn runs: its commit starts its next turn at once.
        steered, (holder_id, first_turn) = good[0], got[good[0].id]
        await dispatch.inbox.steer(steered.id, "", "", UserChatInput(content="and then?"))
        for s in (one, two):
            s.send(*(ps.Commit(t, ProcessStatus.IDLE) for w, t in got.values() if w == s.worker_id))
        for s in (one, two):
            turns = [t for w, t in got.values() if w == s.worker_id]
            await _queued([s], len(turns) + (1 if s.worker_id == holder_id else 0))
            expected = _in_outbox(s.conn)
            write = await s.write()
            assert _read(write) == expected  # one write, in the order queued
            assert sorted(t for kind, t in _read(write) if kind == "ack") == sorted(turns)
            assert all(m.ok for m in write if isinstance(m, ew.Ack))
            if s.worker_id != holder_id:
                continue
            (nxt,) = [m for m in write if isinstance(m, ew.Assignment)]
            assert nxt.process.id == steered.id and nxt.turn_id != first_turn
            assert [m.content for m in nxt.pending if isinstance(m, UserChatInput)] == ["and then?"]
            # Per process, in order: the ack of its turn before the assignment of its next.
            order = [t for _, t in _read(write)]
            assert order.index(first_turn) < order.index(nxt.turn_id)


async def _failed(dispatch: Dispatch, pid: str) -> Process | None:
    """The process once its turn ended with no lane held (IDLE: a chat stays open)."""
    p = await dispatch.store.get(pid)
    return p if p is not None and p.status is ProcessStatus.IDLE and p.lane is None else None


async def test_a_write_holds_at_most_a_mebibyte_and_the_rest_follows(system: System) -> None:
    """Assignments queued past the write's byte bound go in the next write, in order, none lost
    (gRPC refuses a message over 4 MB: an assignment carries the recent chat)."""
    async with running_dispatch(system) as dispatch:
        one = StandIn(dispatch, "w-big", 8)
        await one.write()
        big = {"text": "x" * (MAX_BATCH_BYTES // 3)}
        processes = [_waiting(f"big{i}") for i in range(4)]
        for p in processes:
            p.params = big
            await dispatch.store.insert_process(p)
            dispatch.dispatcher.next_turn(p)
        await _queued([one], 4)
        queued = _in_outbox(one.conn)
        first, second = await one.write(), await one.write()
        assert (len(first), len(second)) == (2, 2)
        assert _read(first) + _read(second) == queued


class WireStandIn:
    """A stand-in worker on a real `WorkerConnect` stream of the shared system: it has more
    free slots than the system's workers, so new sessions' first turns go to it."""

    def __init__(self, system: System, *, reads_batch: bool) -> None:
        self.worker_id = f"stand-in-{uuid.uuid4().hex[:6]}"
        self.received: list[wkpb.DispatchMessage] = []  # the stream messages, as they came
        self._system = system
        self._outbox: asyncio.Queue[wkpb.WorkerMessage | None] = asyncio.Queue()
        hello = ew.Hello(self.worker_id, {"arthur": "1.0.0"}, {}, 100, reads_batch=reads_batch)
        self._outbox.put_nowait(ew.to_proto(hello))

    async def _requests(self) -> AsyncIterator[wkpb.WorkerMessage]:
        while (msg := await self._outbox.get()) is not None:
            yield msg

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[None]:
        call = self._system.worker_service.WorkerConnect(self._requests())

        async def read() -> None:
            async for msg in call:
                self.received.append(msg)

        reader = asyncio.create_task(read())
        try:
            yield
        finally:
            self._outbox.put_nowait(None)
            call.cancel()
            await asyncio.gather(reader, return_exceptions=True)

    def read(self) -> list[tuple[str, str]]:
        """Every message received, as the worker reads them, as (kind, turn id)."""
        return _read([ew.from_proto(m) for r in self.received for m in ew.unbatched(r)])

    def assigned(self, pids: set[str]) -> dict[str, str]:
        """Turn id -> process id, of the assignments for these processes."""
        return {
            m.assignment.turn_id: m.assignment.process.id
            for r in self.received
            for m in ew.unbatched(r)
            if m.WhichOneof("kind") == "assignment" and m.assignment.process.id in pids
        }

    def acked(self, turn_ids: set[str]) -> bool:
        return {t for kind, t in self.read() if kind == "ack"} >= turn_ids

    def commit(self, turn_ids: list[str]) -> None:
        """The turns' commits, in one stream message (a WorkerBatch)."""
        commits = [
            ew.to_wire(ew.Commit(t, ProcessStatus.IDLE, None, "", "", {}, None, 0, []))
            for t in turn_ids
        ]
        self._outbox.put_nowait(wkpb.WorkerMessage.FromString(ew.batch_wire(commits)))


async def test_a_worker_of_the_older_form_gets_every_message_on_its_own(system: System) -> None:
    """A worker whose hello does not say it reads batches (one built before DispatchBatch,
    during a rolling update: docs/operations.md "Upgrading") and one that does, on real
    streams: both get their turns' assignments and, after their commits, the acks, in that
    order; the older one never a batch."""
    old, new = WireStandIn(system, reads_batch=False), WireStandIn(system, reads_batch=True)
    async with old.connected(), new.connected():

        async def both_connected() -> bool:
            ids = {w.worker_id for w in await system.workers()}
            return {old.worker_id, new.worker_id} <= ids

        await eventually(both_connected, what="both stand-ins to connect")
        clients = [await system.connect() for _ in range(6)]
        created = await asyncio.gather(
            *(c.ok("session-create", {"projectId": "demo"}) for c in clients)
        )
        pids = {c["chatProcessId"] for c in created}
        await eventually(
            lambda: set(old.assigned(pids).values()) | set(new.assigned(pids).values()) == pids,
            what="every new session's first turn on a stand-in",
        )
        for stand_in in (old, new):
            assert stand_in.assigned(pids), "the slots are shared: each stand-in gets turns"
            stand_in.commit(list(stand_in.assigned(pids)))
        for stand_in in (old, new):
            turns = set(stand_in.assigned(pids))
            await eventually(partial(stand_in.acked, turns), what="the commits' acks")
            order = stand_in.read()
            for turn_id in turns:
                assert order.count(("assign", turn_id)) == order.count(("ack", turn_id)) == 1
                assert order.index(("assign", turn_id)) < order.index(("ack", turn_id))
        assert all(m.WhichOneof("kind") != "batch" for m in old.received)
        for pid in pids:
            got = await system.process(pid)
            assert got.status == pb.PROCESS_STATUS_IDLE
        for client in clients:
            await client.close()
