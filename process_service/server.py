"""process_service server: wiring and lifecycle."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine

import grpc

from process_service import convert as process_convert
from process_service.events.chat_feed import ChatFeed
from process_service.events.log import NOTICE, EventLog
from process_service.hub.activity import ActivityLog
from process_service.hub.names import ProjectNames
from process_service.hub.peers import HubPeers
from process_service.hub.talk import HubTalk
from process_service.hub.tools import HubTools
from process_service.knowledge.memory_store import MemoryStore
from process_service.knowledge.tools import KnowledgeTools
from process_service.knowledge.wiring import (
    KNOWLEDGE_INTERNAL_SERVICE_NAME,
    KNOWLEDGE_SERVICE_NAME,
    knowledge,
    serve_knowledge,
)
from process_service.lifecycle.observations import Observations
from process_service.lifecycle.plan_rpcs import ConnectionProfiles
from process_service.lifecycle.plans import Plans
from process_service.lifecycle.processes import Processes
from process_service.lifecycle.rollup_notify import RollupNotifier
from process_service.lifecycle.session_teardown import SessionCascade
from process_service.runtime.dispatcher import Dispatcher
from process_service.runtime.inbox import Inbox
from process_service.runtime.lane_signals import LaneSignals
from process_service.runtime.lanes import Lanes
from process_service.runtime.outbox import Outbox
from process_service.runtime.steer_stream import SteerCalls
from process_service.runtime.turns import Turns
from process_service.runtime.worker_stream import WorkerStreams
from process_service.service import ProcessServicer, add_worker_service
from process_service.store.process_store import ProcessStore
from process_service.tools.host import ProcessToolHost, register_forever
from process_service.tools.process_tools import ProcessTools
from process_service.user_work.wiring import WORK_SERVICE_NAME, serve_user_work, user_work
from vance.channels import Channels
from vance.clock import Clock, SystemClock
from vance.config import Config, LanesConfig, load_config
from vance.domain import HUB_ONLY_ENGINES
from vance.heap import settle_heap
from vance.internal.v1 import (
    process_internal_pb2,
    process_internal_pb2_grpc,
    recipe_internal_pb2_grpc,
    session_internal_pb2_grpc,
    tool_pb2,
    tool_pb2_grpc,
    worker_pb2,
)
from vance.json_types import JsonObject
from vance.logsetup import setup_logging
from vance.memdebug import interval_from_env, report_growth
from vance.observability.setup import start_observability
from vance.owners import CachedOwners, ProcessLookup, SessionLookup
from vance.server import GrpcHost, run_main, serve_until_signal
from vance.store import connect, hot_commands
from vance.v1 import process_pb2, process_pb2_grpc, recipe_pb2_grpc, session_pb2, session_pb2_grpc

logger = logging.getLogger(__name__)

SERVICE_NAME = process_pb2.DESCRIPTOR.services_by_name["ProcessService"].full_name
INTERNAL_SERVICE_NAME = process_internal_pb2.DESCRIPTOR.services_by_name[
    "ProcessInternalService"
].full_name
WORKER_SERVICE_NAME = worker_pb2.DESCRIPTOR.services_by_name["WorkerService"].full_name
TOOL_HOST_NAME = tool_pb2.DESCRIPTOR.services_by_name["ToolHostService"].full_name


_PUMP_GRACE_S = 5.0
_FAULT_ENV = "VANCE_FAULT_EXIT_BEFORE_OUTBOX"
_CHAT_FAULT_ENV = "VANCE_FAULT_EXIT_BEFORE_CHAT_EVENTS"


class Background:
    """process_service's own work beside its RPCs: dispatching turns, the worker streams'
    tasks, evicting idle event writers and registering as a tool host. One task group, run by
    `serve`; `stop` ends it (the streams' pumps first finish what they hold) and waits."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        streams: WorkerStreams,
        events: EventLog,
        chat_feed: ChatFeed,
        rollup: RollupNotifier,
        channels: Channels,
        outbox: Outbox,
    ) -> None:
        self.dispatcher = dispatcher
        self.streams = streams
        self.events = events
        self.chat_feed = chat_feed
        self.rollup = rollup
        self.channels = channels
        # Further loops of the group, added at wiring (hub_peers.py: trailing peer events).
        self.loops: list[Callable[[], Coroutine[object, object, None]]] = []
        self.outbox = outbox
        self.memdebug_s = interval_from_env()  # VANCE_DEBUG_TRACEMALLOC (vance/memdebug.py)
        self._stop = asyncio.Event()
        self._done = asyncio.Event()
        self._running = False

    async def run(self, tool_host_address: str) -> None:
        self._running = True
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.dispatcher.run())
                streams = tg.create_task(self.streams.run())
                tg.create_task(_evict_loop(self.events))
                # Cancelled with the rest at stop: it writes a last page of what it gathered.
                tg.create_task(self.chat_feed.run())
                tg.create_task(self.rollup.run())
                for loop in self.loops:
                    tg.create_task(loop())
                # At start and at the lane sweep's cadence: what a crash left undelivered.
                tg.create_task(self.outbox.run())
                tg.create_task(
                    register_forever(self.channels.get("tool_service"), tool_host_address)
                )
                if self.memdebug_s:
                    tg.create_task(report_growth(self.memdebug_s))
                await self._stop.wait()
                self.dispatcher.stop()
                self.streams.stop()
                # The streams ended with the server: their pumps store what they still hold.
                await asyncio.wait([streams], timeout=_PUMP_GRACE_S)
                raise _Stopped
        except* _Stopped:
            pass
        finally:
            self._running = False
            self._done.set()

    async def stop(self) -> None:
        self._stop.set()
        if self._running:
            await self._done.wait()


class _Stopped(Exception):
    """Ends the background task group (and so every task in it)."""


async def create_server(
    config: Config, *, port: int | None = None, clock: Clock | None = None
) -> tuple[GrpcHost, int, Background]:
    """The server and its background work; the caller runs `Background.run` while it serves
    and stops both (`serve`)."""
    clock = clock or SystemClock()
    client, db = connect(config)
    hot = hot_commands(config, db)
    store = ProcessStore(db, hot)
    # One replica writes every page itself: its reader waits for them instead of polling.
    chat_feed = ChatFeed(db, clock, poll_s=0.5 if replicated(config) else None, hot=hot)
    events = EventLog(
        store,
        clock,
        chunk_window_s=config.events.chunk_replay_window_s,
        poll_ms=config.events.poll_ms,
        on_durable=chat_feed.note,
        # Another replica's gateway subscriber may have to read a chunk from the store; with
        # one replica no other writes the streams, and chunks claim their seqs in blocks.
        keep_chunk_text=replicated(config),
        sole_writer=sole_event_writer(config),
    )
    channels = Channels(config)
    sessions = session_pb2_grpc.SessionServiceStub(channels.get("session_service"))
    sessions_internal = session_internal_pb2_grpc.SessionInternalServiceStub(
        channels.get("session_service")
    )
    rollup = RollupNotifier(
        sessions_internal,
        recent_sessions=lambda ms: store.recently_changed_sessions(clock.now_ms() - ms),
    )
    # Lanes announces failed closes and status changes; their listeners subscribe
    # (lane_signals.py), which keeps the construction order free of cycles.
    signals = LaneSignals(on_status_change=rollup.note)
    lanes = Lanes(store, events, clock, config.lanes, signals)
    memory = MemoryStore(db, clock)
    dispatcher = Dispatcher(store, lanes, clock, sweep_config(config), memory=memory)
    # A new pending message is session activity too.
    inbox = Inbox(store, clock, dispatcher, on_pending=rollup.note)
    # The hub (Eddie): observations of workers in other projects and the hub tools.
    observations = Observations(db, store, events, inbox, sessions_internal)
    await observations.mark_observed()
    # What a commit owes other processes, written with it (outbox.py). VANCE_FAULT_EXIT_BEFORE_
    # OUTBOX is a test's fault hook there.
    outbox = Outbox(
        store,
        inbox,
        signals,
        observations=observations,
        scan_every_s=config.lanes.scan_interval_ms / 1000,
        exit_before_delivery=os.environ.get(_FAULT_ENV, ""),
    )
    turns = Turns(
        store, events, lanes, outbox, exit_before_chat_events=os.environ.get(_CHAT_FAULT_ENV, "")
    )
    processes = Processes(
        store, lanes, dispatcher.next_turn, dispatcher.cancel_turn, on_stopped=outbox.deliver
    )
    streams = WorkerStreams(
        dispatcher=dispatcher,
        turns=turns,
        lanes=lanes,
        events=events,
        heartbeat_ms=config.lanes.heartbeat_ms,
    )

    async def publish(session_ids: list[str], type_: str, data: JsonObject) -> None:
        for session_id in session_ids:
            events.submit(session_id, NOTICE, {"type": type_, "data": data})
            await events.flush(session_id)

    hub = HubTools(db, processes, inbox, observations, sessions, sessions_internal, publish)
    work = user_work(db, sessions, clock, config)
    plans = Plans(db, inbox, observations, publish)
    # The user's hubs know what each other did (hub_activity.py, hub_peers.py, hub_names.py).
    hub.names = ProjectNames(db, clock)
    peers = HubPeers(db, store, inbox, lanes, dispatcher.next_turn, ActivityLog(db, clock))
    known, embedder = knowledge(db, memory, clock, config, sessions)
    work.on_document = known.document_changed  # the user's documents stay indexed for RAG
    tools = ProcessTools(
        processes,
        inbox,
        recipe_pb2_grpc.RecipeServiceStub(channels.get("recipe_service")),
        recipe_internal_pb2_grpc.RecipeInternalServiceStub(channels.get("recipe_service")),
        lambda: dispatcher.engines() - HUB_ONLY_ENGINES,  # what a process may spawn
        hub=hub,
        work=work,
        talk=HubTalk(db, store, hub),
        plans=plans,
        peers=peers,
        knowledge=KnowledgeTools(known),
    )
    servicer = ProcessServicer(
        events=events,
        inbox=inbox,
        processes=processes,
        dispatcher=dispatcher,
        streams=streams,
        cascade=SessionCascade(
            store, lanes, processes, dispatcher.next_turn, dispatcher.cancel_turn
        ),
        chat_feed=chat_feed,
        store=store,
        memory=memory,
        plans=plans,
        connection_profiles=ConnectionProfiles(store),
    )
    owners = CachedOwners(
        _session_owner(store, session_pb2_grpc.SessionServiceStub(channels.get("session_service"))),
        _process_session(store),
    )
    store.forgetters += [
        inbox.forget,
        dispatcher.forget,
        process_convert.forget,
        lambda gone: owners.forget(sorted({p.session_id for p in gone}), [p.id for p in gone]),
    ]
    host = GrpcHost(
        [
            SERVICE_NAME,
            INTERNAL_SERVICE_NAME,
            WORKER_SERVICE_NAME,
            TOOL_HOST_NAME,
            WORK_SERVICE_NAME,
            KNOWLEDGE_SERVICE_NAME,
            KNOWLEDGE_INTERNAL_SERVICE_NAME,
        ],
        config,
        owners=owners,
    )
    servicer.steer_calls = SteerCalls(host.admission, servicer.steer)
    process_pb2_grpc.add_ProcessServiceServicer_to_server(servicer, host.server)
    process_internal_pb2_grpc.add_ProcessInternalServiceServicer_to_server(servicer, host.server)
    add_worker_service(servicer, host.server)
    tool_pb2_grpc.add_ToolHostServiceServicer_to_server(ProcessToolHost(tools), host.server)
    serve_user_work(work, host.server)
    serve_knowledge(known, store, sessions, host.server)
    bound = host.bind(
        config.grpc_host, config.listen_port("process_service") if port is None else port
    )
    background = Background(dispatcher, streams, events, chat_feed, rollup, channels, outbox)
    background.loops.append(peers.run)

    async def close() -> None:
        # After the server stopped (no stream left): the background work, then its clients.
        await background.stop()
        await work.close()  # the sandboxed jobs still running
        await embedder.close()
        await channels.close()
        await hot.close()
        await client.close()

    host.on_stop(close)
    return host, bound, background


def replicated(config: Config) -> bool:
    return config.replica_count("process_service") > 1


def sole_event_writer(config: Config) -> bool:
    """Whether this replica is the only writer of the session event streams: one replica, and
    no `events.poll_ms` (which is set only to follow streams that other process_service
    instances write, docs/operations.md)."""
    return not replicated(config) and config.events.poll_ms <= 0


def sweep_config(config: Config) -> LanesConfig:
    """With several replicas a replica that dies is not restarted by the others: each scans
    for its orphaned turns at least every half lease, so they go on within 1.5 leases of its
    death (docs/operations.md "Replicas")."""
    lanes = config.lanes
    if not replicated(config):
        return lanes
    interval = min(lanes.scan_interval_ms, max(lanes.heartbeat_ms, lanes.lease_ms // 2))
    return lanes.model_copy(update={"scan_interval_ms": interval})


def _session_owner(
    store: ProcessStore, sessions: session_pb2_grpc.SessionServiceAsyncStub
) -> SessionLookup:
    """session_service keeps the sessions; asked once per session (vance/owners.py caches).
    Its GetSession wants the tenant, which any process of the session names."""

    async def owner(session_id: str) -> tuple[str, str] | None:
        tenant = await store.tenant_of_session(session_id)
        if tenant is None:
            return None
        try:
            session = await sessions.GetSession(
                session_pb2.GetSessionRequest(tenant_id=tenant, session_id=session_id)
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return tenant, str(session.owner_user_id)

    return owner


def _process_session(store: ProcessStore) -> ProcessLookup:
    async def session_of(process_id: str) -> tuple[str, str] | None:
        process = await store.get(process_id)
        return (process.tenant_id, process.session_id) if process else None

    return session_of


async def _evict_loop(events: EventLog) -> None:
    while True:
        await asyncio.sleep(60)
        events.evict_idle()


async def serve() -> None:
    config = load_config()
    setup_logging(config.logging, "process_service")
    start_observability(config, "process_service")
    host, _, background = await create_server(config)
    settle_heap()
    async with asyncio.TaskGroup() as tg:
        # Every replica's address: tool_service's channel fails over between them.
        tg.create_task(background.run(config.grpc_target("process_service")))
        try:
            await serve_until_signal(host, "process_service")
        finally:
            await background.stop()


def main() -> None:
    run_main(serve)
