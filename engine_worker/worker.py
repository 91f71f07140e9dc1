"""The worker: one bidirectional stream to process_service; turns run as tasks, one per slot.

run() blocks; shutdown() is idempotent: no new turns, running turns finish within the drain
bound, then the stream closes. A lost stream loses nothing: process_service redoes the turns.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import AsyncIterable, AsyncIterator

import grpc

from engine_worker import protocol as wp
from engine_worker.admission import Admission
from engine_worker.chat_held import ChatHeld
from engine_worker.context import ThinkEngineContext
from engine_worker.engine import EngineRegistry, TurnOutcome, compatible
from engine_worker.failures import not_configured
from engine_worker.project_groups import ProjectGroups
from engine_worker.reports import EventPublisher, Flusher
from engine_worker.settings import SettingsCache
from engine_worker.tools import PoolCache, ToolDispatcher
from engine_worker.watched import keep_watching
from vance.domain import HOOK_CALLS, CloseReason, LifecycleCall, ProcessStatus
from vance.internal.v1 import (
    knowledge_internal_pb2_grpc,
    session_internal_pb2_grpc,
    tool_pb2_grpc,
    worker_pb2_grpc,
)
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import worker_pb2 as wkpb
from vance.llm import ModelClient, ModelNotConfiguredError
from vance.observability import logcontext, metrics, tracing
from vance.v1 import process_pb2_grpc, session_pb2_grpc

logger = logging.getLogger(__name__)

# What a stream sends next (engine_worker/protocol.py's messages); None ends the stream.
Outbox = asyncio.Queue[wp.ToServer | None]
# At most this many messages, and this many bytes, in one write: far below gRPC's 4 MB message
# limit (a commit carries the turn's chat messages, which may be long).
MAX_BATCH = 256
MAX_BATCH_BYTES = 1024 * 1024


class Worker:
    def __init__(
        self,
        *,
        channel: grpc.aio.Channel,
        registry: EngineRegistry,
        llm: ModelClient,
        slots: int,
        worker_id: str = "",
        drain_timeout_s: float = 30.0,
        reconnect_backoff_s: float = 0.5,
        tools: tool_pb2_grpc.ToolServiceAsyncStub | None = None,
        sessions: session_internal_pb2_grpc.SessionInternalServiceAsyncStub | None = None,
        projects: session_pb2_grpc.SessionServiceAsyncStub | None = None,
        max_loop_lag_ms: float = 0.0,
        max_rss_mb: float = 0.0,
    ) -> None:
        self.worker_id = worker_id or f"{socket.gethostname()}-{os.getpid()}"
        self._stub = process_pb2_grpc.ProcessServiceStub(channel)
        # process_service's recall and RAG query for the engines
        self._knowledge = knowledge_internal_pb2_grpc.KnowledgeInternalServiceStub(channel)
        self._worker = worker_pb2_grpc.WorkerServiceStub(channel)  # the worker protocol, memory
        # WorkerConnect with the messages sent as the bytes `_requests` encodes (no serializer):
        # a batch is framed around its messages' own encodings (engine_worker/protocol.py).
        self._connect: grpc.aio.StreamStreamMultiCallable[bytes, wkpb.DispatchMessage] = (
            channel.stream_stream(
                "/vance.internal.v1.WorkerService/WorkerConnect",
                request_serializer=None,
                response_deserializer=wkpb.DispatchMessage.FromString,
            )
        )
        self._registry = registry
        self._llm = llm
        self._slots = slots
        self._drain_timeout_s = drain_timeout_s
        self._backoff_s = reconnect_backoff_s
        self._tools = tools
        self._pools = PoolCache()
        self._settings = SettingsCache()
        self._sessions = sessions  # the engines' settings (engine_worker/settings.py)
        self._groups = ProjectGroups(projects)  # GetProject: the project's group
        self._stopping = asyncio.Event()
        self._outbox: Outbox = asyncio.Queue()
        self._flusher = Flusher(self._send)  # the turns' held reports (engine_worker/reports.py)
        self._turns: dict[str, asyncio.Task[None]] = {}
        self._acks: dict[str, asyncio.Future[wp.Ack | None]] = {}
        self._chat = ChatHeld()
        self._heartbeat_s = 3.0
        self.connected = asyncio.Event()
        self.admission = Admission(
            slots=slots,
            max_loop_lag_ms=max_loop_lag_ms,
            max_rss_mb=max_rss_mb,
            running=lambda: len(self._turns),
            announce=self._announce_capacity,
        )

    async def run(self) -> None:
        while not self._stopping.is_set():
            try:
                await self._session()
            except grpc.aio.AioRpcError as exc:
                if self._stopping.is_set():
                    break
                logger.warning("stream to process_service lost: %s", exc.code().name)
            self.connected.clear()
            if not self._stopping.is_set():
                try:
                    await asyncio.wait_for(self._stopping.wait(), self._backoff_s)
                except TimeoutError:
                    pass

    async def shutdown(self) -> None:
        """Drains: announces it, lets running turns finish (bounded), then closes."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        logger.info("draining %d running turns", len(self._turns))
        self._send(wp.Draining())
        running = list(self._turns.values())
        if running:
            _, late = await asyncio.wait(running, timeout=self._drain_timeout_s)
            for task in late:
                task.cancel()
        self._outbox.put_nowait(None)

    async def _requests(self, outbox: Outbox) -> AsyncIterator[bytes]:
        """The messages of one stream, encoded (engine_worker/protocol.py's `to_wire`). Bound to
        that stream's queue: a pump left over from a lost stream must never take messages
        meant for the next one."""
        yield wp.to_wire(
            wp.Hello(self.worker_id, self._registry.versions(), self._registry.hooks(), self._slots)
        )
        carried: bytes | None = None
        while True:
            if carried is None:
                item = await outbox.get()
                if item is None:
                    return
                carried = self._encode(item)
                if carried is None:
                    continue
            # Everything queued meanwhile goes in the same write (a WorkerBatch): the reports
            # of all turns whose windows ended together (engine_worker/reports.py's Flusher),
            # and whatever queued while the previous write was under way.
            batch, size, carried = [carried], len(carried), None
            while not outbox.empty() and len(batch) < MAX_BATCH:
                item = outbox.get_nowait()
                if item is None:
                    yield wp.batch_wire(batch)
                    return
                wire = self._encode(item)
                if wire is None:
                    continue
                if size + len(wire) > MAX_BATCH_BYTES:
                    carried = wire  # the next write's first
                    break
                batch.append(wire)
                size += len(wire)
            yield wp.batch_wire(batch)

    def _encode(self, item: wp.ToServer) -> bytes | None:
        """The item's wire encoding. One that does not encode (a report whose payload is not JSON)
        must not end the stream every turn shares: a turn's report becomes that turn's
        failure (the turn stops here, its slot frees; process_service redoes it, up to
        lanes.max_attempts), anything else is left out."""
        try:
            return wp.to_wire(item)
        except Exception as exc:
            turn_id = getattr(item, "turn_id", "")
            logger.error("%s of turn %r did not encode: %r", type(item).__name__, turn_id, exc)
            if not turn_id:
                return None
            self._end_turn(turn_id)
            return wp.to_wire(wp.Failure(turn_id, f"{type(item).__name__} did not encode: {exc}"))

    def _end_turn(self, turn_id: str) -> None:
        """Stops a turn that process_service no longer runs here (cancelled, or failed by a
        report that did not encode), and lets go of its commit's ack if it waits for one."""
        task = self._turns.pop(turn_id, None)
        if task is not None:
            task.cancel()
        fut = self._acks.pop(turn_id, None)
        if fut is not None and not fut.done():
            fut.set_result(None)

    def _send(self, msg: wp.ToServer) -> None:
        self._outbox.put_nowait(msg)

    def _announce_capacity(self, slots: int, reason: str) -> None:
        self._send(wp.Capacity(slots, reason))

    async def _session(self) -> None:
        outbox: Outbox = asyncio.Queue()
        self._outbox = outbox
        call = self._connect(self._requests(outbox))
        lost: grpc.aio.AioRpcError | None = None
        try:
            async with asyncio.TaskGroup() as tg:
                heartbeat = tg.create_task(self._heartbeats())
                self.admission.reset()
                admission = tg.create_task(self.admission.run())
                watches = self._watch(tg)
                try:
                    async for proto in call:
                        for msg in wp.unbatched(proto):
                            self._on_message(tg, msg)
                except grpc.aio.AioRpcError as exc:
                    lost = exc  # raised after the group, as itself (not in an exception group)
                finally:
                    # The stream is gone: what still runs belongs to it (process_service redoes
                    # those turns), so the group's tasks end here.
                    heartbeat.cancel()
                    admission.cancel()
                    for watch in watches:
                        watch.cancel()
                    for task in self._turns.values():
                        task.cancel()
        finally:
            # Ends this stream's request pump (else it lingers on a queue nobody fills).
            outbox.put_nowait(None)
            call.cancel()
            self._turns.clear()
            for fut in self._acks.values():
                if not fut.done():
                    fut.set_result(None)
            self._acks.clear()
        if lost is not None:
            raise lost

    def _watch(self, tg: asyncio.TaskGroup) -> list[asyncio.Task[None]]:
        """The watches that keep the tool pools and settings held here valid
        (engine_worker/watched.py), for as long as this stream lasts."""
        out: list[asyncio.Task[None]] = []
        tools, sessions = self._tools, self._sessions
        if tools is not None:

            def registry() -> AsyncIterable[tpb.RegistryChange]:
                return tools.WatchRegistry(tpb.WatchRegistryRequest())

            out.append(
                tg.create_task(keep_watching("tools", self._pools, registry, self._backoff_s))
            )
        if sessions is not None:

            def settings() -> AsyncIterable[sipb.SettingsChange]:
                return sessions.WatchSettings(sipb.WatchSettingsRequest())

            out.append(
                tg.create_task(keep_watching("settings", self._settings, settings, self._backoff_s))
            )
        return out

    def _on_message(self, tg: asyncio.TaskGroup, proto: wkpb.DispatchMessage) -> None:
        try:
            msg = wp.from_proto(proto)
        except Exception as exc:
            # A message this worker cannot read: an assignment's turn fails (and is redone,
            # perhaps by another worker); anything else is left out.
            logger.error("unreadable message from process_service: %r", exc)
            turn_id = wp.assignment_turn_id(proto)
            if turn_id:
                self._send(wp.Failure(turn_id, f"unreadable assignment: {exc!r}"))
            return
        match msg:
            case wp.Welcome():
                self._heartbeat_s = max(0.05, msg.heartbeat_ms / 1000)
                self.connected.set()
            case wp.Assignment():
                self._turns[msg.turn_id] = tg.create_task(self._guarded_turn(msg))
            case wp.Ack():
                fut = self._acks.pop(msg.turn_id, None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
            case wp.Cancel():
                if msg.turn_id in self._turns:
                    logger.info("turn %s cancelled by process_service", msg.turn_id)
                self._end_turn(msg.turn_id)

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self._heartbeat_s)
            if self._turns:
                self._send(wp.Heartbeat(list(self._turns)))

    async def _guarded_turn(self, a: wp.Assignment) -> None:
        """`_run_turn`, whose failures stay its own: the turn's task runs in the stream's task
        group, where an exception would cancel every other turn and end the stream. An engine's
        failure is reported inside `_run_turn`; this catches what escapes its bookkeeping."""
        try:
            await self._run_turn(a)
        except Exception as exc:
            logger.exception("turn %s of %s broke off", a.turn_id, a.process.id)
            self._turns.pop(a.turn_id, None)
            self._acks.pop(a.turn_id, None)
            # Ignored by process_service when the turn already ended there (its commit went).
            self._send(wp.Failure(a.turn_id, f"{type(exc).__name__}: {exc}"))

    async def _run_turn(self, a: wp.Assignment) -> None:
        events = EventPublisher(a.turn_id, self._flusher)
        started = time.perf_counter()
        logcontext.for_turn(a.process.session_id, a.process.id, a.turn_id)
        try:
            with tracing.turn_span(
                a.trace_context,
                session_id=a.process.session_id,
                process_id=a.process.id,
                turn_id=a.turn_id,
            ):
                outcome = await self._execute(a, events)
        except asyncio.CancelledError:
            metrics.TURNS.labels(a.process.engine, "cancelled").inc()
            raise
        except Exception as exc:
            metrics.TURNS.labels(a.process.engine, "failed").inc()
            logger.exception("turn %s of %s failed", a.turn_id, a.process.id)
            # What the turn said before it failed is stored, as it would have been sent.
            events.flush(riders=True)
            self._send(wp.Failure(a.turn_id, f"{type(exc).__name__}: {exc}"))
            self._turns.pop(a.turn_id, None)
            return
        metrics.TURNS.labels(a.process.engine, "done").inc()
        metrics.TURN_SECONDS.labels(a.process.engine).observe(time.perf_counter() - started)
        fut: asyncio.Future[wp.Ack | None] = asyncio.get_running_loop().create_future()
        self._acks[a.turn_id] = fut
        self._send(
            wp.Commit(
                turn_id=a.turn_id,
                status=outcome.status,
                close_reason=outcome.close_reason,
                close_detail=outcome.close_detail,
                summary=outcome.summary,
                payload=outcome.payload,
                history_summary=outcome.chat_history_summary,
                history_summary_through=outcome.chat_history_summary_through,
                # The reports still held go with the commit, before it.
                reports=events.take(),
            )
        )
        try:
            # The slot frees when process_service has the commit: flow control stays exact.
            ack = await fut
        finally:
            self._turns.pop(a.turn_id, None)
        self._chat.committed(a, ack)

    async def _execute(self, a: wp.Assignment, events: EventPublisher) -> TurnOutcome:
        process = a.process
        engine = self._registry.get(process.engine)
        if engine is None:
            raise LookupError(f"this worker does not run engine {process.engine!r}")
        call = a.call
        if not compatible(process.engine_version, engine.version):
            return TurnOutcome(
                ProcessStatus.CLOSED,
                CloseReason.STALE,
                close_detail=(
                    f"engine {engine.name} {engine.version} cannot resume a process persisted "
                    f"with {process.engine_version}"
                ),
            )
        ctx = ThinkEngineContext(
            turn_id=a.turn_id,
            process=process,
            pending=a.pending,
            chat_count=a.chat_count,
            recent_chat=self._chat.for_turn(a),
            on_chat_read=lambda read: self._chat.read(a, read),
            llm=self._llm,
            events=events,
            stub=self._stub,
            worker=self._worker,
            tools=ToolDispatcher(
                self._tools,
                process,
                a.turn_id,
                before_invoke=events.flush,
                cache=self._pools,
                events=events,
            ),
            sessions=self._sessions,
            settings_cache=self._settings,
            default_settings=engine.default_settings(),
            project_memory=a.project_memory,
            knowledge=self._knowledge,
            group=await self._groups.of(process.tenant_id, process.project_id),
        )
        if call in HOOK_CALLS:
            # A hook (engine_worker/engine.py): the status stays what the transition made it.
            if call is LifecycleCall.SUSPEND:
                await engine.suspend(process, ctx)
            elif call is LifecycleCall.PEER:
                await engine.peer(process, ctx)
            else:
                await engine.stop(process, ctx)
            return TurnOutcome(process.status)
        try:
            if call is LifecycleCall.START:
                outcome = await engine.start(process, ctx)
            elif call is LifecycleCall.RESUME:
                outcome = await engine.resume(process, ctx)
            else:
                outcome = await engine.steer(process, ctx)
        except ModelNotConfiguredError as exc:
            failed = not_configured(process, exc)
            if failed is None:
                raise
            outcome = failed
        if outcome.status in (ProcessStatus.CLOSED, ProcessStatus.BLOCKED) and not outcome.summary:
            outcome.summary = engine.summarize_for_parent(process, outcome)
        return outcome
