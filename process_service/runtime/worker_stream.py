"""The worker stream: one engine worker's connection, from its hello to its last report.

`serve` is the whole protocol of `WorkerService.WorkerConnect` in typed messages
(process_service/runtime/worker_protocol.py; the servicer only converts): it registers the
worker with the dispatcher, sends what the dispatcher queues for it (assignments, cancels,
commit acks; all that is queued when the stream can write goes as one message, a
DispatchBatch), reads its heartbeats and turn reports, and hands each turn's reports, in order,
to a pump that calls the turn domain (process_service/runtime/turns.py, lanes.py).

Every task runs in this module's task group: a stream's reader, and one pump per assigned turn.
Pumps outlive their stream on purpose: a turn whose worker left still has its queued reports
stored (its chat messages and events), and the dispatcher redoes the turn.

A stream chunk whose turn's pump waits with nothing in hand skips it: the reader hands it to the
session's stream itself when it can go at once (EventLog.chunk `only_now`), in the same order,
without waking the pump (a streamed answer sends several, issue 28).

A pump takes every report at hand as one batch. The chat appends of a batch are stored in one
insert, and their events go out in one write with whatever else the batch queued; a worker
sends the reports it held back together with the commit (engine_worker/context.py), so a
short turn's chat messages, events and commit take one write each.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

from process_service.events.log import EventLog
from process_service.models import TurnRef
from process_service.runtime.dispatcher import Dispatcher, WorkerConn
from process_service.runtime.lanes import Lanes
from process_service.runtime.turns import Turns
from process_service.runtime.worker_protocol import (
    Ack,
    Assign,
    Capacity,
    ChatAppend,
    Chunk,
    Commit,
    Draining,
    Failure,
    FromWorker,
    Heartbeat,
    Hello,
    Progress,
    Report,
    ToWorker,
    Unreadable,
    Welcome,
)

logger = logging.getLogger(__name__)

# At most this many messages, and this many bytes, in one write: far below gRPC's 4 MB message
# limit (an assignment carries the recent chat, which may be long). The worker's own writes
# are bounded alike (engine_worker/worker.py).
MAX_BATCH = 256
MAX_BATCH_BYTES = 1024 * 1024


class TurnQueue:
    """A turn's reports on their way to its pump, in order, then None when its stream ended.

    One pump reads it and takes all that is queued at once, so it is a list and at most one
    waiter: an `asyncio.Queue` made four deques (its items, getters, putters and its `join`
    event's waiters, 2.9 KiB) for every turn in flight, 40% of the Python objects
    process_service held per turn (issue 28,
    docs/operations.md "Memory per turn in flight")."""

    __slots__ = ("_items", "_waiter", "ref", "waiting")

    def __init__(self, ref: TurnRef) -> None:
        self.ref = ref
        self.waiting = False  # its pump waits for the next report: all before it are handled
        self._items: list[Report | None] = []
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Report | None) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def take(self) -> list[Report | None]:
        """Everything queued, in order; waits for at least one."""
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        items, self._items = self._items, []
        return items

    def empty(self) -> bool:
        return not self._items

    def idle(self) -> bool:
        """Whether a report may skip the queue: the pump has handled (and flushed) everything
        before it and nothing is queued."""
        return self.waiting and not self._items and not self.ref.done


class WorkerStreams:
    def __init__(
        self,
        *,
        dispatcher: Dispatcher,
        turns: Turns,
        lanes: Lanes,
        events: EventLog,
        heartbeat_ms: int,
    ) -> None:
        self._dispatcher = dispatcher
        self._turns = turns
        self._lanes = lanes
        self._events = events
        self._heartbeat_ms = heartbeat_ms
        self._tg: asyncio.TaskGroup | None = None
        self._stop = asyncio.Event()

    async def run(self) -> None:
        """Hosts the streams' tasks until `stop`; then lets the pumps finish what they hold."""
        async with asyncio.TaskGroup() as tg:
            self._tg = tg
            await self._stop.wait()
        self._tg = None

    def stop(self) -> None:
        self._stop.set()

    def _group(self) -> asyncio.TaskGroup:
        if self._tg is None:
            raise RuntimeError("worker streams are not running")
        return self._tg

    # ---- one stream ----

    async def serve(
        self,
        hello: Hello,
        incoming: AsyncIterator[list[FromWorker]],
        encode: Callable[[ToWorker], bytes],
    ) -> AsyncIterator[list[bytes]]:
        """The messages for one worker, while it stays connected, as `encode` makes them, a
        write at a time: every message queued for the worker when the stream can write again
        (the assignments of the turns handed out together, the acks of the commits stored
        together), in order, at most MAX_BATCH of them and MAX_BATCH_BYTES; the caller sends
        each list as one DispatchBatch, or message by message to a worker that reads none.
        `incoming` yields what each of the worker's stream messages holds (a commit carries
        the reports held back for it; a batch, the messages of many turns,
        worker_protocol.py). Each message is encoded on its own, so one that does not encode
        (an assignment whose process document does not convert) fails its own turn only
        (`_unsendable`): the rest of its write, the stream and the worker's other turns go
        on."""
        tg = self._group()
        conn = self._dispatcher.register(hello.worker_id, hello.engines, hello.slots)
        self._lanes.declare_hooks(hello.hooks)
        queues: dict[str, TurnQueue] = {}
        reader = tg.create_task(self._read(conn, queues, incoming))
        try:
            welcome = Welcome(lease_ms=self._lanes.config.lease_ms, heartbeat_ms=self._heartbeat_ms)
            yield [encode(welcome)]
            carried: bytes | None = None
            while True:
                if carried is None:
                    item = await conn.outbox.get()
                    if item is None:
                        return
                    carried = self._encode(conn, item, encode, queues)
                    if carried is None:
                        continue
                write, carried, ended = self._gather(conn, carried, encode, queues)
                yield write
                if ended:
                    return
        finally:
            reader.cancel()
            self._dispatcher.unregister(conn)
            for queue in queues.values():
                queue.put_nowait(None)

    def _gather(
        self,
        conn: WorkerConn,
        first: bytes,
        encode: Callable[[ToWorker], bytes],
        queues: dict[str, TurnQueue],
    ) -> tuple[list[bytes], bytes | None, bool]:
        """One write: `first`, then whatever else the worker's outbox holds, within the
        bounds; what does not fit is carried to the next write. True when the outbox ended."""
        write, size = [first], len(first)
        while not conn.outbox.empty() and len(write) < MAX_BATCH:
            item = conn.outbox.get_nowait()
            if item is None:
                return write, None, True
            out = self._encode(conn, item, encode, queues)
            if out is None:
                continue
            if size + len(out) > MAX_BATCH_BYTES:
                return write, out, False
            write.append(out)
            size += len(out)
        return write, None, False

    def _encode(
        self,
        conn: WorkerConn,
        item: ToWorker,
        encode: Callable[[ToWorker], bytes],
        queues: dict[str, TurnQueue],
    ) -> bytes | None:
        """The item as the stream sends it, or what goes instead when it does not encode
        (None: nothing). An assignment's turn gets its queue of reports here, before the
        worker can have any to send."""
        try:
            out = encode(item)
        except Exception as exc:
            fallback = self._unsendable(conn, item, exc)
            if fallback is None:
                return None
            out = encode(fallback)
        if isinstance(item, Assign):
            queue = queues[item.ref.turn_id] = TurnQueue(item.ref)
            self._group().create_task(self._pump(item.ref, queue, queues))
        return out

    def _unsendable(self, conn: WorkerConn, item: ToWorker, exc: Exception) -> ToWorker | None:
        """What goes instead of a message that did not encode, if anything. An assignment's
        turn fails for good (`Dispatcher.undeliverable`); a commit ack goes without the chat
        it carried (the worker then reads the chat when it needs it); anything else is left
        out."""
        if isinstance(item, Assign):
            ref = item.ref
            logger.error(
                "turn %s of %s cannot be sent to worker %s: %r",
                ref.turn_id,
                ref.process_id,
                conn.worker_id,
                exc,
            )
            self._dispatcher.undeliverable(ref, f"the turn could not be sent to a worker: {exc}")
            return None
        logger.error("a message for worker %s did not encode: %r", conn.worker_id, exc)
        if isinstance(item, Ack) and item.chat is not None:
            return Ack(item.turn_id, item.ok, item.error)
        return None

    async def _read(
        self,
        conn: WorkerConn,
        queues: dict[str, TurnQueue],
        incoming: AsyncIterator[list[FromWorker]],
    ) -> None:
        try:
            async for messages in incoming:
                for msg in messages:
                    if isinstance(msg, Heartbeat):
                        await self._renew(conn, msg.turn_ids)
                    elif isinstance(msg, Draining):
                        conn.draining = True
                        logger.info("worker %s is draining", conn.worker_id)
                    elif isinstance(msg, Capacity):
                        self._dispatcher.set_capacity(conn, msg.slots, msg.reason)
                    elif isinstance(msg, Unreadable) and not msg.turn_id:
                        logger.error(
                            "left out a message of worker %s: %s", conn.worker_id, msg.error
                        )
                    else:
                        queue = queues.get(msg.turn_id)
                        if queue is None:
                            continue
                        # A stream chunk whose turn has nothing in hand goes to the session's
                        # stream from here when it can go at once: no wake-up of the turn's
                        # pump per chunk (several a streamed answer, issue 28).
                        if isinstance(msg, Chunk) and queue.idle() and self._chunk_now(queue, msg):
                            continue
                        queue.put_nowait(msg)
        except Exception as exc:
            # The worker went away (or sent what we cannot read): its turns are redone.
            logger.info("stream of worker %s ended: %r", conn.worker_id, exc)
        finally:
            conn.outbox.put_nowait(None)

    def _chunk_now(self, queue: TurnQueue, chunk: Chunk) -> bool:
        """Hands the chunk to the session's stream if it can go at once (True: handled). A
        failure is the turn's own, as in its pump: the reader serves every turn of the worker."""
        try:
            return self._turns.chunk(queue.ref, chunk.role, chunk.text, only_now=True)
        except Exception:
            logger.exception("handling a chunk of turn %s failed", queue.ref.turn_id)
            self._dispatcher.cancel_turn(queue.ref.turn_id)
            return True

    async def _renew(self, conn: WorkerConn, turn_ids: list[str]) -> None:
        """A renewal that failed (the store did not answer) ends nothing: the next heartbeat
        renews again, and a lease that runs out meanwhile is redone as any expired one."""
        try:
            await self._dispatcher.renew(conn, turn_ids)
        except Exception:
            logger.exception("renewing the leases of worker %s failed", conn.worker_id)

    # ---- one turn ----

    async def _pump(self, ref: TurnRef, queue: TurnQueue, queues: dict[str, TurnQueue]) -> None:
        """Handles one turn's reports in order, a batch of those at hand at a time, until its
        commit or failure (or its stream's end)."""
        try:
            ended = False
            while not ended:
                queue.waiting = True
                try:
                    batch = await queue.take()
                finally:
                    queue.waiting = False
                ended = await self._handle(ref, batch)
        except Exception:
            # Every pump runs in the group all streams share: what escapes here would end
            # every worker's stream. The worker stops the turn; its lane, no longer renewed,
            # is redone once its lease ran out (the sweep).
            logger.exception("handling the reports of turn %s failed", ref.turn_id)
            self._dispatcher.cancel_turn(ref.turn_id)
        finally:
            if queues.get(ref.turn_id) is queue:
                del queues[ref.turn_id]
            # A failed or lost turn's chat messages are stored: their events go out too.
            await self._flush(ref)

    async def _flush(self, ref: TurnRef) -> None:
        try:
            await self._events.flush(ref.session_id)
        except Exception:
            logger.exception("writing the events of turn %s failed", ref.turn_id)

    async def _handle(self, ref: TurnRef, batch: list[Report | None]) -> bool:
        """Stores a batch; True when the turn ended with it."""
        if ref.done:
            return True  # cancelled (stopped, or its lease lost): the rest is not its to write
        end = next((i for i, r in enumerate(batch) if not _is_event(r)), len(batch))
        events = [r for r in batch[:end] if r is not None and _is_event(r)]
        try:
            await self._store_events(ref, events)
        except Exception:
            logger.exception("storing reports of turn %s failed", ref.turn_id)
        last = batch[end] if end < len(batch) else None
        if end == len(batch):
            # Nothing ends the turn yet: write the events now, so the client sees them.
            await self._flush(ref)
            return False
        if last is None or ref.done:
            return True
        try:
            if isinstance(last, Commit):
                await self._commit(ref, last)
            elif isinstance(last, Failure):
                await self._failure(ref, last)
            elif isinstance(last, Unreadable):
                await self._unreadable(ref, last)
        except Exception as exc:
            logger.exception("handling the end of turn %s failed", ref.turn_id)
            # The worker's slot frees; the lane, still held, is redone once its lease ran out.
            self._dispatcher.finished(ref, Ack(ref.turn_id, False, f"commit failed: {exc!r}"))
        return True

    async def _store_events(self, ref: TurnRef, reports: list[Report]) -> None:
        """Chat appends first, all in one insert; then every report's event in its order (the
        caller writes them)."""
        appends = [r for r in reports if isinstance(r, ChatAppend)]
        stored = await self._turns.store_chat(ref, appends) if appends else []
        for doc in stored:
            ref.chat.stored_one(doc)
        chat = iter(stored)
        for r in reports:
            if isinstance(r, ChatAppend):
                doc = next(chat)
                if doc is not None:
                    self._turns.chat_event(ref, doc)
            elif isinstance(r, Chunk):
                self._turns.chunk(ref, r.role, r.text)
            elif isinstance(r, Progress):
                await self._turns.progress(ref, r.kind, r.payload)

    async def _commit(self, ref: TurnRef, commit: Commit) -> None:
        ref.history_summary = commit.history_summary
        doc = await self._turns.commit(
            ref,
            commit.status,
            commit.close_reason,
            commit.summary,
            commit.payload,
            commit.close_detail,
        )
        if doc is None:
            ack = Ack(ref.turn_id, False, "the lane is no longer this turn's")
        else:
            through = doc.chat_count
            # With all of the turn's chat, the worker holds the process's chat through here.
            chat = ref.chat.for_ack(ref.chat_base, through)
            ack = Ack(ref.turn_id, True, chat=chat, held_through=through)
        self._dispatcher.finished(ref, ack)
        if doc is not None:
            # Messages (or a hook) that arrived during the turn: the next one starts at once.
            self._dispatcher.next_turn(doc)

    async def _failure(self, ref: TurnRef, failure: Failure) -> None:
        logger.warning("turn %s of %s failed: %s", ref.turn_id, ref.process_id, failure.error)
        doc = await self._lanes.fail(ref, failure.error, backoff=True)
        self._dispatcher.finished(ref, None)
        if doc is not None:
            # Redone once the backoff written into its lease has passed.
            self._dispatcher.next_turn(doc)

    async def _unreadable(self, ref: TurnRef, report: Unreadable) -> None:
        """A report of the turn did not convert: the turn fails as if its worker had said so
        (redone with backoff, up to max_attempts), and the worker is told to stop it (a
        Cancel frees its slot, whether the turn still runs or waits for its commit's ack)."""
        logger.error("turn %s of %s: %s", ref.turn_id, ref.process_id, report.error)
        self._dispatcher.cancel_turn(ref.turn_id)
        doc = await self._lanes.fail(ref, report.error, backoff=True)
        if doc is not None:
            self._dispatcher.next_turn(doc)


def _is_event(report: Report | None) -> bool:
    return isinstance(report, ChatAppend | Chunk | Progress)
