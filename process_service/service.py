"""The ProcessService servicer: converts, calls the domain, converts back."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc

from process_service import convert as pc
from process_service.cascade import SessionCascade
from process_service.dispatcher import Assign, Cancel, Dispatcher, WorkerConn
from process_service.events import NOTICE, EventLog, SubscriberOverflow
from process_service.inbox import Inbox
from process_service.lanes import Lanes
from process_service.memory_rpc import MemoryRpcs, history_summary_fields
from process_service.models import TurnRef
from process_service.processes import Processes
from process_service.store import ProcessStore
from process_service.turns import Turns
from vance import convert as c
from vance import domain as d
from vance.errors import AbortedError, InvalidArgumentError, grpc_errors
from vance.observability import metrics
from vance.protoutil import struct_to_dict
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc

logger = logging.getLogger(__name__)

_END = object()


_OUTCOME_LABELS = {v: k.removeprefix("DELIVERY_OUTCOME_") for k, v in pb.DeliveryOutcome.items()}


class ProcessServicer(MemoryRpcs, process_pb2_grpc.ProcessServiceServicer):
    def __init__(
        self,
        *,
        store: ProcessStore,
        events: EventLog,
        lanes: Lanes,
        inbox: Inbox,
        processes: Processes,
        turns: Turns,
        dispatcher: Dispatcher,
        heartbeat_ms: int,
        cascade: SessionCascade,
    ) -> None:
        self.store = store
        self.events = events
        self.lanes = lanes
        self.inbox = inbox
        self.processes = processes
        self.turns = turns
        self.dispatcher = dispatcher
        self.heartbeat_ms = heartbeat_ms
        self.cascade = cascade

    # ---- processes ----

    @grpc_errors
    async def CreateProcess(
        self, request: ppb.CreateProcessRequest, context: Any
    ) -> pb.ThinkProcess:
        spec = d.ThinkProcess(
            id="",
            tenant_id=request.tenant_id,
            project_id=request.project_id,
            session_id=request.session_id,
            name=request.name,
            title=request.title,
            goal=request.goal,
            engine=request.engine,
            engine_version=request.engine_version,
            recipe_name=request.recipe_name,
            parent_process_id=request.parent_process_id,
            owner_user_id=request.owner_user_id,
            recipe_snapshot=struct_to_dict(request.recipe_snapshot),
            params=struct_to_dict(request.params),
        )
        created = await self.processes.create(
            spec, idempotency_key=request.idempotency_key, start=request.start
        )
        return c.process_to_proto(created)

    @grpc_errors
    async def GetProcess(self, request: ppb.GetProcessRequest, context: Any) -> pb.ThinkProcess:
        doc = await self.processes.get(request.process_id)
        snapshot = await self.store.snapshot(request.process_id)
        return pc.process_doc_to_proto({**doc, "recipe_snapshot": snapshot})

    @grpc_errors
    async def ListProcesses(
        self, request: ppb.ListProcessesRequest, context: Any
    ) -> ppb.ListProcessesResponse:
        if not request.session_id:
            raise InvalidArgumentError("session_id is required")
        found = await self.processes.in_session(
            request.session_id,
            include_terminated=request.include_terminated,
            parent_id=request.parent_process_id,
        )
        return ppb.ListProcessesResponse(processes=[c.process_to_proto(p) for p in found])

    @grpc_errors
    async def Steer(self, request: ppb.SteerRequest, context: Any) -> ppb.SteerResponse:
        try:
            message = c.steer_from_proto(request.message)
        except ValueError as exc:
            raise InvalidArgumentError(str(exc), reason="bad_message") from exc
        t = request.target
        result = await self.inbox.steer(t.process_id, t.session_id, t.process_name, message)
        reply = pc.steer_result_to_proto(result)
        metrics.STEERS.labels(_OUTCOME_LABELS.get(reply.outcome, "UNSPECIFIED")).inc()
        return reply

    async def _ref(self, ref: ppb.ProcessRef) -> dict[str, Any]:
        return await self.processes.resolve(ref.process_id, ref.session_id, ref.process_name)

    @grpc_errors
    async def Pause(self, request: ppb.ProcessRef, context: Any) -> pb.ThinkProcess:
        return pc.process_doc_to_proto(await self.processes.pause(await self._ref(request)))

    @grpc_errors
    async def Resume(self, request: ppb.ProcessRef, context: Any) -> pb.ThinkProcess:
        return pc.process_doc_to_proto(await self.processes.resume(await self._ref(request)))

    @grpc_errors
    async def Stop(self, request: ppb.ProcessRef, context: Any) -> pb.ThinkProcess:
        return pc.process_doc_to_proto(await self.processes.stop(await self._ref(request)))

    @grpc_errors
    async def PauseSession(
        self, request: ppb.PauseSessionRequest, context: Any
    ) -> ppb.ListProcessesResponse:
        paused = await self.processes.pause_session(request.session_id)
        return ppb.ListProcessesResponse(processes=[pc.process_doc_to_proto(p) for p in paused])

    @grpc_errors
    async def ListChatMessages(
        self, request: ppb.ListChatMessagesRequest, context: Any
    ) -> ppb.ListChatMessagesResponse:
        if request.through > 0 and request.process_id and not request.session_id:
            # An engine's own history: the worker knows how far it reaches (no process read).
            count = int(request.through)
        else:
            doc = await self.processes.resolve(request.process_id, request.session_id, "")
            count = int(doc.get("chat_count", 0))
            if doc.get("lane"):
                # A running turn may have appended beyond the committed count.
                count += 64
            if request.through > 0:
                count = min(count, int(request.through))
        first = 1 if request.limit <= 0 else max(1, count - request.limit + 1)
        docs = await self.store.chat_range(request.process_id, first, count)
        if request.limit > 0:
            docs = docs[-request.limit :]
        return ppb.ListChatMessagesResponse(messages=[pc.chat_doc_to_proto(m) for m in docs])

    @grpc_errors
    async def DrainPending(
        self, request: ppb.DrainPendingRequest, context: Any
    ) -> ppb.DrainPendingResponse:
        doc = await self.processes.get(request.process_id)
        exclude = set(request.exclude_ids)
        msgs = [
            m
            for m in [*(doc.get("owned") or []), *(doc.get("pending") or [])]
            if m.get("id") not in exclude
        ]
        return ppb.DrainPendingResponse(
            messages=[c.steer_to_proto(d.steer_from_dict(m)) for m in msgs]
        )

    # ---- session lifecycle cascades (process_service/cascade.py) ----

    @grpc_errors
    async def SuspendProcesses(
        self, request: ppb.SessionCascadeRequest, context: Any
    ) -> ppb.ListProcessesResponse:
        cause = pc.suspend_cause_from_proto(request.suspend_cause)
        done = await self.cascade.suspend(_session(request), cause, list(request.process_ids))
        return ppb.ListProcessesResponse(processes=[pc.process_doc_to_proto(p) for p in done])

    @grpc_errors
    async def ResumeProcesses(
        self, request: ppb.SessionCascadeRequest, context: Any
    ) -> ppb.ListProcessesResponse:
        done = await self.cascade.resume(_session(request), list(request.process_ids))
        return ppb.ListProcessesResponse(processes=[pc.process_doc_to_proto(p) for p in done])

    @grpc_errors
    async def CloseProcesses(
        self, request: ppb.SessionCascadeRequest, context: Any
    ) -> ppb.ListProcessesResponse:
        reason = c.close_reason_from_proto(request.close_reason) or d.CloseReason.STOPPED
        done = await self.cascade.close(_session(request), reason, list(request.process_ids))
        return ppb.ListProcessesResponse(processes=[pc.process_doc_to_proto(p) for p in done])

    @grpc_errors
    async def DeleteSessionData(
        self, request: ppb.SessionCascadeRequest, context: Any
    ) -> ppb.DeleteSessionDataResponse:
        return ppb.DeleteSessionDataResponse(**await self.cascade.delete(_session(request)))

    @grpc_errors
    async def RespawnChat(self, request: ppb.RespawnChatRequest, context: Any) -> pb.ThinkProcess:
        spec = pc.process_spec_from_proto(request.process)
        created = await self.cascade.respawn_chat(
            spec,
            idempotency_key=request.process.idempotency_key,
            history_from=request.history_from_process_id,
        )
        return c.process_to_proto(created)

    # ---- events ----

    @grpc_errors
    async def SubscribeSession(
        self, request: ppb.SubscribeSessionRequest, context: Any
    ) -> AsyncIterator[pb.SessionEvent]:
        if not request.session_id:
            raise InvalidArgumentError("session_id is required")
        try:
            async for event in self.events.subscribe(request.session_id, request.since_seq):
                yield pc.event_to_proto(event)
        except SubscriberOverflow as exc:
            raise AbortedError(str(exc), reason="subscriber_overflow") from exc

    # ---- workers ----

    @grpc_errors
    async def ListWorkers(
        self, request: ppb.ListWorkersRequest, context: Any
    ) -> ppb.ListWorkersResponse:
        return ppb.ListWorkersResponse(
            workers=[
                ppb.WorkerInfo(
                    worker_id=w.worker_id,
                    engines=sorted(w.engines),
                    slots=w.slots,
                    free_slots=max(0, w.free_slots),
                    draining=w.draining,
                    connected_at_ms=w.connected_at_ms,
                    running_turns=sorted(w.turns),
                )
                for w in self.dispatcher.workers.values()
            ]
        )

    async def WorkerConnect(
        self, request_iterator: AsyncIterator[ppb.WorkerMessage], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[ppb.DispatchMessage]:
        try:
            first = await anext(aiter(request_iterator))
        except StopAsyncIteration:
            return
        if first.WhichOneof("kind") != "hello" or not first.hello.worker_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message is hello")
        hello = first.hello
        conn = self.dispatcher.register(
            hello.worker_id, {e.name: e.version for e in hello.engines}, hello.slots
        )
        reader = asyncio.ensure_future(self._read_worker(conn, request_iterator))
        try:
            yield ppb.DispatchMessage(
                welcome=ppb.Welcome(
                    lease_ms=self.lanes.config.lease_ms, heartbeat_ms=self.heartbeat_ms
                )
            )
            while True:
                item = await conn.outbox.get()
                if item is _END:
                    return
                if isinstance(item, Assign):
                    self.dispatcher.spawn(self._pump_turn(item.ref))
                    message = pc.assignment_to_proto(item.ref)
                    if item.trace:
                        message.assignment.trace_context.update(item.trace)
                    yield message
                elif isinstance(item, Cancel):
                    yield ppb.DispatchMessage(cancel_turn_id=item.turn_id)
                else:
                    yield item
        finally:
            reader.cancel()
            self.dispatcher.unregister(conn)
            for ref in list(conn.turns.values()):
                ref.events.put_nowait(None)

    async def _read_worker(
        self, conn: WorkerConn, request_iterator: AsyncIterator[ppb.WorkerMessage]
    ) -> None:
        try:
            async for msg in request_iterator:
                kind = msg.WhichOneof("kind")
                if kind == "heartbeat":
                    await self.dispatcher.renew(conn, list(msg.heartbeat.turn_ids))
                elif kind == "draining":
                    conn.draining = True
                    logger.info("worker %s is draining", conn.worker_id)
                elif kind in ("event", "commit", "failure"):
                    turn_id = getattr(msg, kind).turn_id
                    ref = conn.turns.get(turn_id)
                    if ref is not None:
                        ref.events.put_nowait(msg)
        except (asyncio.CancelledError, grpc.aio.AioRpcError):
            pass
        finally:
            conn.outbox.put_nowait(_END)

    async def _pump_turn(self, ref: TurnRef) -> None:
        """Handles one turn's reports in order: events first, then its commit or failure."""
        try:
            await self._pump_reports(ref)
        finally:
            # A failed or lost turn's chat messages are stored: their events go out too.
            await self.events.flush(ref.session_id)

    async def _pump_reports(self, ref: TurnRef) -> None:
        while True:
            if ref.events.empty():
                # Nothing more at hand: write what this turn queued, so the client sees it now.
                await self.events.flush(ref.session_id)
            msg = await ref.events.get()
            if msg is None or ref.done:
                return
            kind = msg.WhichOneof("kind")
            try:
                if kind == "event":
                    await self._turn_event(ref, msg.event)
                    continue
                if kind == "commit":
                    await self._commit(ref, msg.commit)
                else:
                    await self._failure(ref, msg.failure)
                return
            except Exception:
                logger.exception("handling %s of turn %s failed", kind, ref.turn_id)
                if kind != "event":
                    self.dispatcher.finished(ref)
                    return

    async def _turn_event(self, ref: TurnRef, event: ppb.TurnEvent) -> None:
        which = event.WhichOneof("kind")
        if which == "chat_append":
            a = event.chat_append
            ordinal = int(a.message_id.rsplit(":", 1)[-1])
            await self.turns.chat_append(
                ref, ordinal, c.role_from_proto(a.role), a.content, struct_to_dict(a.meta)
            )
        elif which == "stream_chunk":
            ch = event.stream_chunk
            await self.turns.chunk(ref, c.role_from_proto(ch.role), ch.chunk)
        elif which == "progress":
            await self.turns.progress(
                ref, event.progress.kind, struct_to_dict(event.progress.payload)
            )

    async def _commit(self, ref: TurnRef, commit: ppb.TurnCommit) -> None:
        status = c.status_from_proto(commit.status) or d.ProcessStatus.IDLE
        ref.commit_fields = history_summary_fields(commit)
        doc = await self.turns.commit(
            ref,
            status,
            c.close_reason_from_proto(commit.close_reason),
            commit.summary_for_parent,
            struct_to_dict(commit.parent_payload),
            commit.close_detail,
        )
        worker = self.dispatcher.workers.get(ref.worker_id)
        self.dispatcher.finished(ref)
        if worker is not None:
            worker.outbox.put_nowait(
                ppb.DispatchMessage(
                    commit_ack=ppb.TurnAck(
                        turn_id=ref.turn_id,
                        ok=doc is not None,
                        error="" if doc is not None else "the lane is no longer this turn's",
                    )
                )
            )
        if doc is not None and doc.get("wake") and doc["status"] in ("IDLE", "BLOCKED"):
            # Messages arrived during the turn: the next one starts at once.
            self.dispatcher.kick(ref.process_id, ref.engine)

    async def _failure(self, ref: TurnRef, failure: ppb.TurnFailure) -> None:
        logger.warning("turn %s of %s failed: %s", ref.turn_id, ref.process_id, failure.error)
        doc = await self.lanes.fail(ref, failure.error, backoff=True)
        self.dispatcher.finished(ref)
        if doc is not None and doc.get("status") == d.ProcessStatus.RUNNING.value:
            delay = max(0, int(doc["lane"]["lease_until_ms"]) - self.lanes.clock.now_ms() + 1)
            await asyncio.sleep(delay / 1000)
            self.dispatcher.kick(ref.process_id, ref.engine)

    # ---- hub (process_service/observations.py) ----

    @grpc_errors
    async def PublishNotice(
        self, request: ppb.PublishNoticeRequest, context: Any
    ) -> ppb.PublishNoticeResponse:
        data = {"type": request.notice.type, "data": struct_to_dict(request.notice.data)}
        for session_id in request.session_ids:
            self.events.submit(session_id, NOTICE, data)
            await self.events.flush(session_id)
        return ppb.PublishNoticeResponse()


def _session(request: ppb.SessionCascadeRequest) -> str:
    if not request.session_id:
        raise InvalidArgumentError("session_id is required")
    return request.session_id
