"""The ProcessService servicer: converts, calls the domain, converts back."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any

import grpc

from process_service import convert as pc
from process_service.events.chat_feed import ChatFeed, page_to_proto
from process_service.events.follow import FollowStream
from process_service.events.log import NOTICE, EventLog, SubscriberOverflow
from process_service.knowledge.memory_rpc import MemoryRpcs
from process_service.knowledge.memory_store import MemoryStore
from process_service.lifecycle.plan_rpcs import ConnectionProfiles, PlanRpcs
from process_service.lifecycle.plans import Plans
from process_service.lifecycle.processes import Processes
from process_service.lifecycle.session_teardown import SessionCascade
from process_service.process_model import Process
from process_service.runtime import worker_protocol as wp
from process_service.runtime.dispatcher import Dispatcher
from process_service.runtime.inbox import Inbox
from process_service.runtime.steer_stream import SteerCalls
from process_service.runtime.worker_stream import WorkerStreams
from process_service.store.process_store import ProcessStore
from vance import convert as c
from vance import domain as d
from vance.errors import AbortedError, InvalidArgumentError, grpc_errors
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import process_internal_pb2_grpc, worker_pb2_grpc
from vance.internal.v1 import worker_pb2 as wkpb
from vance.observability import metrics
from vance.protoutil import struct_to_dict
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc

logger = logging.getLogger(__name__)


_OUTCOME_LABELS = {v: k.removeprefix("DELIVERY_OUTCOME_") for k, v in pb.DeliveryOutcome.items()}
_REPLAY_BATCH = 200  # events per batch of a replay-only read: well under the message limit


class ProcessServicer(
    MemoryRpcs,
    PlanRpcs,
    process_pb2_grpc.ProcessServiceServicer,
    process_internal_pb2_grpc.ProcessInternalServiceServicer,
    worker_pb2_grpc.WorkerServiceServicer,
):
    """process_service's public (vance.v1) and service-only (vance.internal.v1) RPCs in one
    servicer, registered once per service."""

    def __init__(
        self,
        *,
        events: EventLog,
        inbox: Inbox,
        processes: Processes,
        dispatcher: Dispatcher,
        streams: WorkerStreams,
        cascade: SessionCascade,
        chat_feed: ChatFeed,
        store: ProcessStore,
        memory: MemoryStore,
        plans: Plans,
        connection_profiles: ConnectionProfiles,
    ) -> None:
        self.plans = plans
        self.connection_profiles = connection_profiles
        self.store = store
        self.memory = memory
        self.events = events
        self.inbox = inbox
        self.processes = processes
        self.dispatcher = dispatcher
        self.streams = streams
        self.cascade = cascade
        self.chat_feed = chat_feed
        # Set once the server's auth checks exist (process_service/server.py).
        self.steer_calls: SteerCalls | None = None

    # ---- processes ----

    @grpc_errors
    async def CreateProcess(
        self,
        request: pipb.CreateProcessRequest,
        context: grpc.aio.ServicerContext[pipb.CreateProcessRequest, pb.ThinkProcess],
    ) -> pb.ThinkProcess:
        spec = pc.process_spec_from_proto(request)
        created = await self.processes.create(
            spec, idempotency_key=request.idempotency_key, start=request.start
        )
        return c.process_to_proto(created)

    @grpc_errors
    async def GetProcess(
        self,
        request: ppb.GetProcessRequest,
        context: grpc.aio.ServicerContext[ppb.GetProcessRequest, pb.ThinkProcess],
    ) -> pb.ThinkProcess:
        return pc.process_to_proto(await self.processes.get_with_snapshot(request.process_id))

    @grpc_errors
    async def ListSessionEngines(
        self,
        request: pipb.ListSessionEnginesRequest,
        context: grpc.aio.ServicerContext[
            pipb.ListSessionEnginesRequest, pipb.ListSessionEnginesResponse
        ],
    ) -> pipb.ListSessionEnginesResponse:
        ids = _session_ids(request.session_ids)
        states = await self.store.engine_states(ids)
        return pipb.ListSessionEnginesResponse(
            sessions=[
                pipb.SessionEngines(
                    session_id=sid,
                    engines=[
                        pipb.EngineState(
                            process_id=p.process_id,
                            status=c.status_to_proto(p.status),
                            pending_count=p.pending_count,
                        )
                        for p in states.get(sid, [])
                    ],
                )
                for sid in ids
            ]
        )

    @grpc_errors
    async def ListProcesses(
        self,
        request: ppb.ListProcessesRequest,
        context: grpc.aio.ServicerContext[ppb.ListProcessesRequest, ppb.ListProcessesResponse],
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
    async def Steer(
        self,
        request: ppb.SteerRequest,
        context: grpc.aio.ServicerContext[ppb.SteerRequest, ppb.SteerResponse],
    ) -> ppb.SteerResponse:
        return await self.steer(request)

    async def steer(self, request: ppb.SteerRequest) -> ppb.SteerResponse:
        """What `Steer` does, also for each call on `SteerStream`."""
        try:
            message = c.steer_from_proto(request.message)
        except ValueError as exc:
            raise InvalidArgumentError(str(exc), reason="bad_message") from exc
        if isinstance(message, d.PeerEvent):
            # Hub to hub only, sent by process_service itself (hub_peers.py): no engine but a
            # hub reads one, so nobody steers one in from outside.
            raise InvalidArgumentError(
                "peer events are sent between hubs only (peer_notify)", reason="peer_event"
            )
        t = request.target
        result = await self.inbox.steer(t.process_id, t.session_id, t.process_name, message)
        reply = pc.steer_result_to_proto(result)
        metrics.STEERS.labels(_OUTCOME_LABELS.get(reply.outcome, "UNSPECIFIED")).inc()
        return reply

    async def _ref(self, ref: ppb.ProcessRef) -> Process:
        return await self.processes.resolve(ref.process_id, ref.session_id, ref.process_name)

    @grpc_errors
    async def Pause(
        self,
        request: ppb.ProcessRef,
        context: grpc.aio.ServicerContext[ppb.ProcessRef, pb.ThinkProcess],
    ) -> pb.ThinkProcess:
        return pc.process_to_proto(await self.processes.pause(await self._ref(request)))

    @grpc_errors
    async def Resume(
        self,
        request: ppb.ProcessRef,
        context: grpc.aio.ServicerContext[ppb.ProcessRef, pb.ThinkProcess],
    ) -> pb.ThinkProcess:
        return pc.process_to_proto(await self.processes.resume(await self._ref(request)))

    @grpc_errors
    async def Stop(
        self,
        request: ppb.ProcessRef,
        context: grpc.aio.ServicerContext[ppb.ProcessRef, pb.ThinkProcess],
    ) -> pb.ThinkProcess:
        return pc.process_to_proto(await self.processes.stop(await self._ref(request)))

    @grpc_errors
    async def PauseSession(
        self,
        request: ppb.PauseSessionRequest,
        context: grpc.aio.ServicerContext[ppb.PauseSessionRequest, ppb.ListProcessesResponse],
    ) -> ppb.ListProcessesResponse:
        paused = await self.processes.pause_session(request.session_id)
        return ppb.ListProcessesResponse(processes=[pc.process_to_proto(p) for p in paused])

    @grpc_errors
    async def ListChatMessages(
        self,
        request: ppb.ListChatMessagesRequest,
        context: grpc.aio.ServicerContext[
            ppb.ListChatMessagesRequest, ppb.ListChatMessagesResponse
        ],
    ) -> ppb.ListChatMessagesResponse:
        docs = await self.processes.chat(
            request.process_id, request.session_id, limit=request.limit, through=request.through
        )
        return ppb.ListChatMessagesResponse(messages=[pc.chat_to_proto(m) for m in docs])

    @grpc_errors
    async def DrainPending(
        self,
        request: wkpb.DrainPendingRequest,
        context: grpc.aio.ServicerContext[wkpb.DrainPendingRequest, wkpb.DrainPendingResponse],
    ) -> wkpb.DrainPendingResponse:
        msgs = await self.processes.pending(request.process_id, set(request.exclude_ids))
        return wkpb.DrainPendingResponse(messages=[c.steer_to_proto(m) for m in msgs])

    # ---- session lifecycle cascades (process_service/lifecycle/session_teardown.py) ----

    @grpc_errors
    async def SuspendProcesses(
        self,
        request: pipb.SessionCascadeRequest,
        context: grpc.aio.ServicerContext[pipb.SessionCascadeRequest, ppb.ListProcessesResponse],
    ) -> ppb.ListProcessesResponse:
        cause = pc.suspend_cause_from_proto(request.suspend_cause)
        done = await self.cascade.suspend(_session(request), cause, list(request.process_ids))
        return ppb.ListProcessesResponse(processes=[pc.process_to_proto(p) for p in done])

    @grpc_errors
    async def ResumeProcesses(
        self,
        request: pipb.SessionCascadeRequest,
        context: grpc.aio.ServicerContext[pipb.SessionCascadeRequest, ppb.ListProcessesResponse],
    ) -> ppb.ListProcessesResponse:
        done = await self.cascade.resume(_session(request), list(request.process_ids))
        return ppb.ListProcessesResponse(processes=[pc.process_to_proto(p) for p in done])

    @grpc_errors
    async def CloseProcesses(
        self,
        request: pipb.SessionCascadeRequest,
        context: grpc.aio.ServicerContext[pipb.SessionCascadeRequest, ppb.ListProcessesResponse],
    ) -> ppb.ListProcessesResponse:
        reason = c.close_reason_from_proto(request.close_reason) or d.CloseReason.STOPPED
        done = await self.cascade.close(_session(request), reason, list(request.process_ids))
        return ppb.ListProcessesResponse(processes=[pc.process_to_proto(p) for p in done])

    @grpc_errors
    async def DeleteSessionData(
        self,
        request: pipb.SessionCascadeRequest,
        context: grpc.aio.ServicerContext[
            pipb.SessionCascadeRequest, pipb.DeleteSessionDataResponse
        ],
    ) -> pipb.DeleteSessionDataResponse:
        deleted = await self.cascade.delete(_session(request))
        await self.chat_feed.scrub(request.session_id)
        return pipb.DeleteSessionDataResponse(**deleted)

    # ---- the same for many sessions (the lifecycle sweeps' batches) ----

    @grpc_errors
    async def ListSessionsProcesses(
        self,
        request: pipb.ListSessionsProcessesRequest,
        context: grpc.aio.ServicerContext[
            pipb.ListSessionsProcessesRequest, pipb.ListSessionsProcessesResponse
        ],
    ) -> pipb.ListSessionsProcessesResponse:
        found = await self.processes.in_sessions(
            _session_ids(request.session_ids), include_terminated=request.include_terminated
        )
        out = pipb.ListSessionsProcessesResponse()
        for sid, processes in found.items():
            out.sessions[sid].processes.extend(c.process_to_proto(p) for p in processes)
        return out

    @grpc_errors
    async def SuspendSessions(
        self,
        request: pipb.SessionsCascadeRequest,
        context: grpc.aio.ServicerContext[
            pipb.SessionsCascadeRequest, pipb.SessionsCascadeResponse
        ],
    ) -> pipb.SessionsCascadeResponse:
        cause = pc.suspend_cause_from_proto(request.suspend_cause)
        moved, failed = await self.cascade.suspend_sessions(
            _session_ids(request.session_ids), cause
        )
        return pipb.SessionsCascadeResponse(processes=moved, failed_session_ids=failed)

    @grpc_errors
    async def CloseSessions(
        self,
        request: pipb.SessionsCascadeRequest,
        context: grpc.aio.ServicerContext[
            pipb.SessionsCascadeRequest, pipb.SessionsCascadeResponse
        ],
    ) -> pipb.SessionsCascadeResponse:
        reason = c.close_reason_from_proto(request.close_reason) or d.CloseReason.STOPPED
        moved, failed = await self.cascade.close_sessions(_session_ids(request.session_ids), reason)
        return pipb.SessionsCascadeResponse(processes=moved, failed_session_ids=failed)

    @grpc_errors
    async def RespawnChat(
        self,
        request: pipb.RespawnChatRequest,
        context: grpc.aio.ServicerContext[pipb.RespawnChatRequest, pb.ThinkProcess],
    ) -> pb.ThinkProcess:
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
        self,
        request: ppb.SubscribeSessionRequest,
        context: grpc.aio.ServicerContext[ppb.SubscribeSessionRequest, pb.SessionEvent],
    ) -> AsyncIterator[pb.SessionEvent]:
        if not request.session_id:
            raise InvalidArgumentError("session_id is required")
        try:
            async for event in self.events.subscribe(request.session_id, request.since_seq):
                yield pc.event_to_proto(event)
        except SubscriberOverflow as exc:
            raise AbortedError(str(exc), reason="subscriber_overflow") from exc

    async def SubscribeSessionBatches(
        self,
        request: ppb.SubscribeSessionRequest,
        context: grpc.aio.ServicerContext[ppb.SubscribeSessionRequest, ppb.SessionEventBatch],
    ) -> AsyncIterator[ppb.SessionEventBatch]:
        if not request.session_id:
            raise InvalidArgumentError("session_id is required")
        if request.replay_only:
            stored = await self.events.read_stored(
                request.session_id, request.since_seq, request.until_seq
            )
            for i in range(0, len(stored), _REPLAY_BATCH):
                yield pc.events_to_batch(stored[i : i + _REPLAY_BATCH])
            return
        try:
            async for batch in self.events.subscribe_batches(request.session_id, request.since_seq):
                yield pc.events_to_batch(batch)
        except SubscriberOverflow as exc:
            raise AbortedError(str(exc), reason="subscriber_overflow") from exc

    # grpc's stubs type a streaming behaviour as an iterator; grpc.aio also runs a coroutine
    # that writes through the context, which this one is.
    async def FollowSessions(  # type: ignore[override]
        self,
        request_iterator: AsyncIterator[pipb.FollowSessionsRequest],
        context: grpc.aio.ServicerContext[pipb.FollowSessionsRequest, pipb.FollowSessionsReply],
    ) -> None:
        """A gateway's sockets' events on one stream (process_service/events/follow.py).
        Written through the context, not yielded: no async generator per message, and the
        call's requests are read by a task of the same TaskGroup as the replays."""

        async def read(stream: FollowStream) -> None:
            async for request in request_iterator:
                for key in request.drop:
                    stream.drop(key)
                for f in request.add:
                    stream.add(f.key, f.session_id, f.since_seq)
            stream.close()

        async with asyncio.TaskGroup() as tasks:
            stream = FollowStream(self.events, tasks)
            reader = tasks.create_task(read(stream))
            try:
                async for reply in stream.replies():
                    await context.write(pc.follow_reply_to_proto(reply.events, reply.ended))
            finally:
                stream.detach_all()
                reader.cancel()

    # Written through the context, as FollowSessions.
    async def SteerStream(  # type: ignore[override]
        self,
        request_iterator: AsyncIterator[pipb.SteerStreamRequest],
        context: grpc.aio.ServicerContext[pipb.SteerStreamRequest, pipb.SteerStreamReply],
    ) -> None:
        """A gateway's steers on one stream (process_service/runtime/steer_stream.py)."""
        if self.steer_calls is None:
            raise NotImplementedError("SteerStream is not served here")
        await self.steer_calls.serve(request_iterator, context)

    async def StreamChatFeed(
        self,
        request: pipb.ChatFeedRequest,
        context: grpc.aio.ServicerContext[pipb.ChatFeedRequest, pipb.ChatFeedPage],
    ) -> AsyncIterator[pipb.ChatFeedPage]:
        async for page in self.chat_feed.follow(request.after):
            yield page_to_proto(page)

    @grpc_errors
    async def AckChatFeed(
        self,
        request: pipb.ChatFeedRequest,
        context: grpc.aio.ServicerContext[pipb.ChatFeedRequest, pipb.AckChatFeedResponse],
    ) -> pipb.AckChatFeedResponse:
        await self.chat_feed.trim(request.after)
        return pipb.AckChatFeedResponse()

    # ---- workers ----

    @grpc_errors
    async def ListWorkers(
        self,
        request: ppb.ListWorkersRequest,
        context: grpc.aio.ServicerContext[ppb.ListWorkersRequest, ppb.ListWorkersResponse],
    ) -> ppb.ListWorkersResponse:
        return pc.workers_to_proto(self.dispatcher.workers.values())

    # Replies as bytes, not the generated stub's DispatchMessage: see `add_worker_service`.
    async def WorkerConnect(  # type: ignore[override]
        self,
        request_iterator: AsyncIterator[wkpb.WorkerMessage],
        context: grpc.aio.ServicerContext[wkpb.WorkerMessage, bytes],
    ) -> AsyncIterator[bytes]:
        """Replies as the encoded DispatchMessages (registered without a serializer,
        `add_worker_service`): a batch is framed around its messages' own encodings."""
        try:
            first = await anext(aiter(request_iterator))
        except StopAsyncIteration:
            return
        try:
            hello = wp.hello_from_proto(first)
        except ValueError as exc:
            raise InvalidArgumentError(str(exc), reason="bad_hello") from exc
        incoming = (wp.from_proto(m) async for m in request_iterator)
        # Encoded inside `serve`, message by message: one that does not encode fails only its
        # own turn (process_service/runtime/worker_stream.py), not the stream.
        async for write in self.streams.serve(hello, incoming, wp.to_wire):
            if hello.reads_batch:
                yield wp.batch_wire(write)
            else:
                # A worker of the older form (docs/operations.md "Upgrading"): one by one.
                for message in write:
                    yield message

    # ---- hub (process_service/lifecycle/observations.py) ----

    @grpc_errors
    async def PublishNotice(
        self,
        request: pipb.PublishNoticeRequest,
        context: grpc.aio.ServicerContext[pipb.PublishNoticeRequest, pipb.PublishNoticeResponse],
    ) -> pipb.PublishNoticeResponse:
        data = {"type": request.notice.type, "data": struct_to_dict(request.notice.data)}
        for session_id in request.session_ids:
            self.events.submit(session_id, NOTICE, data)
            await self.events.flush(session_id)
        return pipb.PublishNoticeResponse()


def _session(request: pipb.SessionCascadeRequest) -> str:
    if not request.session_id:
        raise InvalidArgumentError("session_id is required")
    return request.session_id


# Sessions one batched call may name: a sweep sends one batch of due sessions per round.
MAX_BATCH_SESSIONS = 10_000


def _session_ids(ids: Iterable[str]) -> list[str]:
    out = list(dict.fromkeys(ids))
    if any(not sid for sid in out):
        raise InvalidArgumentError(
            "session_ids must not contain empty ids", reason="bad_session_id"
        )
    if len(out) > MAX_BATCH_SESSIONS:
        raise InvalidArgumentError(
            f"at most {MAX_BATCH_SESSIONS} session ids per call", reason="too_many_sessions"
        )
    return out


def add_worker_service(servicer: ProcessServicer, server: grpc.aio.Server) -> None:
    """`WorkerService`, as worker_pb2_grpc's `add_WorkerServiceServicer_to_server` registers it
    but for WorkerConnect's replies: they go as the bytes the servicer yields (no serializer),
    so a DispatchBatch is framed around its messages' encodings instead of built as a message
    and encoded again. The generated registration gives every other method as it is."""
    generated = _Registration()
    worker_pb2_grpc.add_WorkerServiceServicer_to_server(servicer, generated)  # type: ignore[arg-type]
    handlers = dict(generated.handlers)
    handlers["WorkerConnect"] = grpc.stream_stream_rpc_method_handler(
        servicer.WorkerConnect,
        request_deserializer=handlers["WorkerConnect"].request_deserializer,
        response_serializer=None,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(generated.name, handlers),)
    )
    server.add_registered_method_handlers(generated.name, handlers)


class _Registration:
    """Takes what a generated `add_*_to_server` registers, to be changed before it is served."""

    def __init__(self) -> None:
        self.name = ""
        self.handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}

    def add_generic_rpc_handlers(self, handlers: object) -> None:
        pass  # the same handlers come to `add_registered_method_handlers`

    def add_registered_method_handlers(
        self, name: str, handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]
    ) -> None:
        self.name, self.handlers = name, handlers
