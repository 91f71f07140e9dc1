"""Turn dispatch: which worker runs which lane turn. Flow control by slots; a lost worker's
turns are redone elsewhere; a periodic sweep recovers what another replica left behind.
What goes over a worker's stream is process_service/runtime/worker_stream.py's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass, field

from process_service.knowledge.memory_store import MemoryStore
from process_service.models import NextTurn, TurnRef
from process_service.process_model import InboxMessage, Process
from process_service.runtime.chat_held import ChatHolders
from process_service.runtime.fair_queue import FairQueue
from process_service.runtime.lanes import Lanes
from process_service.runtime.worker_protocol import Ack, Assign, Cancel, ToWorker
from process_service.store.process_store import ProcessStore
from vance.clock import Clock
from vance.config import LanesConfig
from vance.domain import ProcessStatus
from vance.observability import metrics, tracing

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class WorkerConn:
    worker_id: str
    engines: dict[str, str]  # name -> version
    slots: int  # the turns it takes at once now (WorkerCapacity), at most hello_slots
    connected_at_ms: int
    # What the stream sends the worker next; None ends the stream.
    outbox: asyncio.Queue[ToWorker | None] = field(default_factory=asyncio.Queue)
    turns: dict[str, TurnRef] = field(default_factory=dict)
    reserved: int = 0
    draining: bool = False
    closed: bool = False
    hello_slots: int = 0  # the slots its hello announced

    def __post_init__(self) -> None:
        self.hello_slots = self.hello_slots or self.slots

    @property
    def free_slots(self) -> int:
        return self.slots - len(self.turns) - self.reserved


class _Stopped(Exception):
    """Ends the dispatcher's task group (and so every task in it)."""


class Dispatcher:
    def __init__(
        self,
        store: ProcessStore,
        lanes: Lanes,
        clock: Clock,
        config: LanesConfig,
        *,
        memory: MemoryStore | None = None,
    ) -> None:
        self._store = store
        self._memory = memory
        self._lanes = lanes
        self._clock = clock
        self._config = config
        self.workers: dict[str, WorkerConn] = {}
        # Which worker holds which process's chat (from the assignments and commit acks sent
        # on its stream), so an assignment to that worker carries no chat it already has.
        self.chat: ChatHolders[WorkerConn] = ChatHolders()
        self._ready: dict[str, FairQueue] = {}  # by engine
        self._queued: set[str] = set()
        self._turns: dict[str, TurnRef] = {}
        # Turn id -> when (clock ms) the renewal of its lease now in flight was sent.
        self._renewing: dict[str, int] = {}
        self._wakeup = asyncio.Event()
        self._tg: asyncio.TaskGroup | None = None
        self._stopping = False
        self._timers: set[asyncio.TimerHandle] = set()
        self._traces: dict[str, dict[str, str]] = {}  # kicked process -> the kicker's trace
        metrics.STATE.queue_depth = lambda: [(e, len(q)) for e, q in self._ready.items()]
        metrics.STATE.worker_slots = self._slot_counts
        metrics.STATE.leases_held = lambda: len(self._turns)

    # ---- entry points ----

    def kick(self, process_id: str, engine: str, tenant: str = "", session: str = "") -> None:
        """Asks for a turn of this process as soon as a worker for its engine has a slot; while
        none has, it waits its turn among the tenant's and session's (process_service/
        fair_queue.py)."""
        if process_id in self._queued:
            return
        self._queued.add(process_id)
        metrics.QUEUED.labels(engine).inc()
        if tracing.enabled():
            if len(self._traces) > 10_000:
                self._traces.clear()  # kicks that never reached a worker (stopped processes)
            self._traces[process_id] = tracing.carrier()
        self._ready.setdefault(engine, FairQueue()).push(process_id, tenant, session)
        self._wakeup.set()

    def next_turn(self, process: Process) -> NextTurn:
        """Decides whether the process's next turn starts, and queues it when it does. Every
        place that changed a process (a steer, a commit, a failure, a lifecycle transition, the
        recovery sweep) asks here, with the process as that change left it:
        - no lane held: a turn is due when one is wanted (`wake`) of an INIT, IDLE or BLOCKED
          process, or a hook task is asked for;
        - a lane a failed turn gave back (no worker): redone once its backoff has passed;
        - a lane whose lease ran out and that this replica does not run: redone now (a worker
          or a replica was lost).
        A lane that runs is left alone: its commit asks again."""
        lane = process.lane
        if lane is None:
            due = process.hook is not None or (
                process.wake and (process.status is ProcessStatus.INIT or process.waking)
            )
        else:
            if lane.turn_id in self._turns:
                return NextTurn.NONE
            wait_ms = lane.lease_until_ms - self._clock.now_ms() + 1
            if wait_ms > 0 and not lane.worker_id:
                self._kick_later(process, wait_ms)
                return NextTurn.LATER
            due = wait_ms <= 0
        if not due:
            return NextTurn.NONE
        starts = self.can_start(process.engine, process.id)
        self._kick(process)
        return NextTurn.STARTS if starts else NextTurn.QUEUED

    def _kick(self, process: Process) -> None:
        self.kick(process.id, process.engine, process.tenant_id, process.session_id)

    def can_start(self, engine: str, process_id: str = "") -> bool:
        """Whether a turn of this engine would start now: a worker has a free slot and no
        queued turn waits for it (a steer's outcome is STARTED then, else QUEUED)."""
        return self._overtakes_nobody(engine) and self._pick(engine, process_id) is not None

    def _overtakes_nobody(self, engine: str) -> bool:
        """Whether a turn of this engine started now keeps no queued turn from its slot:
        nothing queues, or the workers have a free slot for every queued turn besides this one.
        Kicked turns wait in the ready queue until the dispatcher's next step hands them out
        (`_pump`); a steer arriving in that gap would otherwise be QUEUED with slots free, and
        then cost an inbox write and a lane take of its own (two store commands where
        steer_and_start makes one) and the wait for that step."""
        queue = self._ready.get(engine)
        if not queue:
            return True
        free = sum(w.free_slots for w in self.workers.values() if _can_take(w, engine))
        return free > len(queue)

    def _kick_later(self, process: Process, delay_ms: int) -> None:
        """`kick` once delay_ms have passed (a failed turn's backoff)."""
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._timers.discard(handle)
            if not self._stopping:
                self._kick(process)

        handle = loop.call_later(delay_ms / 1000, fire)
        self._timers.add(handle)

    async def steer_and_start(
        self, process_id: str, session_id: str, engine: str, msg: InboxMessage
    ) -> TurnRef | None:
        """A steer of a waiting process, delivered and started in one store write when a
        worker of its engine has a free slot and no queued turn waits for it; None to push the
        message to the inbox instead. Saves a write and a wake-up hop on the common path."""
        if not self._overtakes_nobody(engine) or self._stopping or self._tg is None:
            return None  # others wait for a slot (they go first), or we are not dispatching
        worker = self._pick(engine, process_id)
        if worker is None:
            return None
        worker.reserved += 1
        try:
            ref = await self._lanes.take_steered(process_id, session_id, msg, worker.worker_id)
        except BaseException:
            worker.reserved -= 1
            raise
        if ref is None:
            worker.reserved -= 1
            return None
        self.spawn(self._start(ref, worker))
        # One loop turn lets _start hand out the RUNNING event (or send its insert, when it
        # cannot go before its write) before this steer's reply is built and sent.
        await asyncio.sleep(0)
        return ref

    async def _start(self, ref: TurnRef, worker: WorkerConn) -> None:
        """After the steer's reply: the RUNNING event goes first (so the worker's events
        follow it in seq order), then the assignment. Handed out at once and stored with
        the turn's next write when the event log can (`Lanes.running_event`), else written
        before the assignment goes out."""
        worker.reserved -= 1
        try:
            await self._lanes.running_event(ref.process, ref.prev_status)
        except Exception:
            logger.exception("the RUNNING event of %s was not written", ref.process_id)
        try:
            await self._hand_over(ref, worker)
        except Exception as exc:
            logger.exception("handing turn %s to %s failed", ref.turn_id, worker.worker_id)
            await self._redo(ref, f"assignment failed: {exc!r}")

    def cancel_turn(self, turn_id: str) -> None:
        ref = self._turns.get(turn_id)
        if ref is None:
            return
        ref.done = True
        worker = self.workers.get(ref.worker_id)
        if worker is not None:
            worker.turns.pop(turn_id, None)
            worker.outbox.put_nowait(Cancel(turn_id))
        self._turns.pop(turn_id, None)
        self._wakeup.set()

    def spawn(self, coro: Coroutine[object, object, None]) -> None:
        """Runs work owned by the dispatcher's task group (cleanups that must outlive a stream)."""
        if self._tg is None:
            raise RuntimeError("dispatcher is not running")
        self._tg.create_task(coro)

    def engines(self) -> set[str]:
        """Engines some connected, non-draining worker runs."""
        return {e for w in self.workers.values() if not w.draining for e in w.engines}

    def turn(self, turn_id: str) -> TurnRef | None:
        return self._turns.get(turn_id)

    # ---- workers ----

    def _slot_counts(self) -> list[tuple[str, int, int]]:
        return [
            (w.worker_id, len(w.turns), max(0, w.free_slots))
            for w in self.workers.values()
            if not w.closed
        ]

    def register(self, worker_id: str, engines: dict[str, str], slots: int) -> WorkerConn:
        old = self.workers.get(worker_id)
        if old is not None:
            self._lost(old, "replaced by a new connection")
        conn = WorkerConn(worker_id, engines, max(1, slots), self._clock.now_ms())
        self.workers[worker_id] = conn
        logger.info("worker %s connected: engines=%s slots=%d", worker_id, engines, slots)
        self._wakeup.set()
        return conn

    def set_capacity(self, conn: WorkerConn, slots: int, reason: str) -> None:
        """The worker takes this many turns at once from now on (engine_worker/admission.py);
        what it runs already goes on. More room wakes the queue."""
        if slots == conn.slots:
            return
        logger.info(
            "worker %s takes %d turns at once (was %d): %s",
            conn.worker_id,
            slots,
            conn.slots,
            reason,
        )
        grew = slots > conn.slots
        conn.slots = max(0, min(slots, conn.hello_slots))
        if grew:
            self._wakeup.set()

    def unregister(self, conn: WorkerConn) -> None:
        if self.workers.get(conn.worker_id) is conn:
            del self.workers[conn.worker_id]
        self._lost(conn, "worker disconnected")

    def _lost(self, conn: WorkerConn, why: str) -> None:
        conn.closed = True
        self.chat.drop_worker(conn)
        turns = list(conn.turns.values())
        conn.turns.clear()
        for ref in turns:
            self._turns.pop(ref.turn_id, None)
            if not ref.done:
                logger.warning("turn %s of %s lost: %s", ref.turn_id, ref.process_id, why)
                metrics.LEASES_LOST.labels("worker_lost").inc()
                self.spawn(self._redo(ref, why))

    async def _redo(self, ref: TurnRef, why: str) -> None:
        metrics.REDOS.inc()
        process = await self._lanes.fail(ref, why, backoff=False)
        if process is not None:
            self.next_turn(process)

    def undeliverable(self, ref: TurnRef, why: str) -> None:
        """The turn's assignment cannot be sent (its process document does not convert): the
        worker's slot frees at once and the turn fails for good, not redone: a redo would read
        the same document and fail the same way (the process closes STALE with `why`)."""
        self.finished(ref, None)
        self.chat.forget(ref.process_id)  # what the assignment noted for the worker
        self.spawn(self._give_up(ref, why))

    async def _give_up(self, ref: TurnRef, why: str) -> None:
        try:
            process = await self._lanes.fail(ref, why, backoff=False, retry=False)
        except Exception:
            # The lane stays held: its lease runs out and the sweep redoes it (bounded by
            # lanes.max_attempts like any redo).
            logger.exception("failing turn %s of %s failed", ref.turn_id, ref.process_id)
            return
        if process is not None:
            self.next_turn(process)

    def finished(self, ref: TurnRef, ack: Ack | None) -> None:
        """The turn ended here; its worker's slot is free once it has the ack (if any)."""
        ref.done = True
        self._turns.pop(ref.turn_id, None)
        worker = self.workers.get(ref.worker_id)
        if worker is not None:
            worker.turns.pop(ref.turn_id, None)
            if ack is not None:
                held = ack.held_through if ack.chat is not None else None
                self.chat.acked(worker, ref.process_id, held)
                worker.outbox.put_nowait(ack)
        self._wakeup.set()

    async def renew(self, conn: WorkerConn, turn_ids: list[str]) -> None:
        """Renews the leases of a worker's running turns, all in one store write."""
        refs = [r for r in (conn.turns.get(t) for t in turn_ids) if r is not None and not r.done]
        sent = self._clock.now_ms()
        for ref in refs:
            self._renewing[ref.turn_id] = sent
        try:
            lost = await self._lanes.renew(refs)
        finally:
            for ref in refs:
                if self._renewing.get(ref.turn_id) == sent:
                    del self._renewing[ref.turn_id]
        for ref in lost:
            # A commit may have landed while the renewal was on its way: only a turn that is
            # still running and lost its lane (stopped, or taken after expiry) is cancelled.
            if not ref.done:
                metrics.LEASES_LOST.labels("taken").inc()
                self.cancel_turn(ref.turn_id)

    # ---- the loop ----

    async def run(self) -> None:
        """Dispatches until `stop`; then every task it started is cancelled (a turn taken but
        not handed over is redone by the next replica's sweep, after its lease)."""
        try:
            async with asyncio.TaskGroup() as tg:
                self._tg = tg
                tg.create_task(self._sweep_loop())
                while not self._stopping:
                    await self._wakeup.wait()
                    self._wakeup.clear()
                    self._pump(tg)
                raise _Stopped
        except* _Stopped:
            pass
        finally:
            self._tg = None
            for handle in self._timers:
                handle.cancel()
            self._timers.clear()

    def stop(self) -> None:
        self._stopping = True
        self._wakeup.set()

    def _pick(self, engine: str, process_id: str = "") -> WorkerConn | None:
        """The worker that holds the process's chat when it has a free slot (its turn then
        needs no chat sent along), else the one with the most free slots."""
        holder = self.chat.holder(process_id) if process_id else None
        if holder is not None and _can_take(holder, engine):
            return holder
        best: WorkerConn | None = None
        for w in self.workers.values():
            if _can_take(w, engine) and (best is None or w.free_slots > best.free_slots):
                best = w
        return best

    def forget(self, processes: list[Process]) -> None:
        """Processes of a suspended, closed or deleted session (ProcessStore.forget): no
        worker is preferred for them any more (the worker lets their chat go itself)."""
        for p in processes:
            self._traces.pop(p.id, None)
            self.chat.forget(p.id)

    def _pump(self, tg: asyncio.TaskGroup) -> None:
        for engine, queue in self._ready.items():
            while queue:
                worker = self._pick(engine, queue.peek() or "")
                if worker is None:
                    break
                pid = queue.pop()
                self._queued.discard(pid)
                worker.reserved += 1
                tg.create_task(self._assign(pid, worker))

    async def _assign(self, process_id: str, worker: WorkerConn) -> None:
        try:
            ref = await self._lanes.take(process_id, worker.worker_id)
        except Exception:
            logger.exception("taking the lane of %s failed", process_id)
            ref = None
        finally:
            worker.reserved -= 1
        if ref is None:
            self._wakeup.set()
            return
        try:
            await self._hand_over(ref, worker)
        except Exception as exc:
            # In the dispatcher's task group: escaping, it would end dispatching altogether.
            logger.exception("handing turn %s to %s failed", ref.turn_id, worker.worker_id)
            await self._redo(ref, f"assignment failed: {exc!r}")

    async def _hand_over(self, ref: TurnRef, worker: WorkerConn) -> None:
        ref.engine_version = worker.engines.get(ref.engine, "")
        ref.recipe_snapshot = await self._store.snapshot(ref.process_id)
        ref.chat = self.chat.assign(worker, ref.process_id, ref.chat_base, self._store.recent_chat)
        if self._memory is not None:
            # What the project remembers, so an engine's prompt needs no ListMemory call.
            ref.project_memory = await self._memory.project_newest(ref.process)
        if worker.closed:
            self.chat.drop_worker(worker)  # what `assign` noted for it goes with it
            self.spawn(self._redo(ref, "worker left before the assignment"))
            return
        worker.turns[ref.turn_id] = ref
        self._turns[ref.turn_id] = ref
        metrics.DISPATCHED.labels(ref.engine).inc()
        trace = None
        if tracing.enabled():
            # A kicked turn is handed over from the dispatcher's loop: the trace is the
            # kicker's; a steer-started one still runs in the steer's context.
            trace = self._traces.pop(ref.process_id, None) or tracing.carrier()
        worker.outbox.put_nowait(Assign(ref, trace))

    async def _sweep_loop(self) -> None:
        await self.sweep()
        # A replica that just (re)started may have left turns whose leases still run: scan
        # again once they have run out, so they are redone after one lease, not one interval.
        next_scan = self._clock.now_ms() + min(
            self._config.scan_interval_ms, self._config.lease_ms + self._config.heartbeat_ms
        )
        while not self._stopping:
            await asyncio.sleep(self._config.heartbeat_ms / 1000)
            self.expire_local()
            if self._clock.now_ms() < next_scan:
                continue
            next_scan = self._clock.now_ms() + self._config.scan_interval_ms
            try:
                await self.sweep()
            except Exception:
                logger.exception("lane sweep failed")

    def expire_local(self) -> None:
        """Our own turns whose worker stopped renewing the lease (hung, not disconnected).
        A turn whose worker asked in time, with the renewal still on its way to the store, is
        late, not hung: the renewal's answer decides (`renew` cancels the turn when its lane
        was taken meanwhile), for up to a lease. Redoing it instead threw away a running turn
        whenever the store was slow, and the redo made the store slower still (800 clients at
        a hosted model's pace: up to 1,000 turns redone in a minute)."""
        now = self._clock.now_ms()
        for ref in list(self._turns.values()):
            if ref.lease_until_ms < now and not ref.done:
                sent = self._renewing.get(ref.turn_id)
                if sent is not None and now - sent < self._config.lease_ms:
                    continue
                logger.warning("turn %s missed its lease; redoing it", ref.turn_id)
                metrics.LEASES_LOST.labels("expired").inc()
                self.cancel_turn(ref.turn_id)
                self.spawn(self._redo(ref, "lease expired"))

    async def sweep(self) -> None:
        """Finds turns nobody runs: wanted turns (a replica died before dispatching) and
        lanes whose lease expired (a replica died mid-turn). A full scan of live processes,
        so it runs rarely (`lanes.scan_interval_ms`)."""
        self.expire_local()
        # A suspend hook whose kick was lost with its replica is found too (a stop hook on a
        # CLOSED process is not in this scan: it is dropped then).
        for process in await self._store.all_live():
            self.next_turn(process)


def _can_take(w: WorkerConn, engine: str) -> bool:
    return not (w.closed or w.draining or engine not in w.engines or w.free_slots <= 0)
