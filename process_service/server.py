"""process_service server: wiring and lifecycle."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc

from process_service.cascade import SessionCascade
from process_service.dispatcher import Dispatcher
from process_service.event_feed import ChatFeed
from process_service.events import NOTICE, EventLog
from process_service.hub_talk import HubTalk
from process_service.hub_tools import HubTools
from process_service.inbox import Inbox
from process_service.lanes import Lanes
from process_service.memory import MemoryStore
from process_service.observations import Observations
from process_service.parent_notify import ParentNotify
from process_service.plan_rpcs import ConnectionProfiles
from process_service.plans import Plans
from process_service.processes import Processes
from process_service.rollup_notify import RollupNotifier
from process_service.service import ProcessServicer
from process_service.store import ProcessStore
from process_service.toolhost import ProcessToolHost, register_forever
from process_service.tools import ProcessTools
from process_service.turns import Turns
from process_service.user_work.wiring import WORK_SERVICE_NAME, serve_user_work, user_work
from process_service.worker_stream import WorkerStreams
from vance.channels import Channels
from vance.clock import Clock, SystemClock
from vance.config import Config, load_config
from vance.domain import HUB_ONLY_ENGINES
from vance.internal.v1 import (
    process_internal_pb2,
    process_internal_pb2_grpc,
    recipe_internal_pb2_grpc,
    session_internal_pb2_grpc,
    tool_pb2,
    tool_pb2_grpc,
    worker_pb2,
    worker_pb2_grpc,
)
from vance.logsetup import setup_logging
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
    ) -> None:
        self.dispatcher = dispatcher
        self.streams = streams
        self.events = events
        self.chat_feed = chat_feed
        self.rollup = rollup
        self.channels = channels
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
                tg.create_task(
                    register_forever(self.channels.get("tool_service"), tool_host_address)
                )
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
    chat_feed = ChatFeed(db, clock)
    events = EventLog(
        store,
        clock,
        chunk_window_s=config.events.chunk_replay_window_s,
        poll_ms=config.events.poll_ms,
        on_durable=chat_feed.note,
    )
    lanes = Lanes(store, events, clock, config.lanes)
    memory = MemoryStore(db, clock)
    dispatcher = Dispatcher(store, lanes, clock, config.lanes, memory=memory)
    inbox = Inbox(store, clock, dispatcher)
    processes = Processes(store, lanes, dispatcher.kick, dispatcher.cancel_turn)
    turns = Turns(store, events, lanes, inbox)
    processes.on_stopped = turns.on_stopped
    lanes.on_closed_failed = ParentNotify(turns).closed_failed
    streams = WorkerStreams(
        dispatcher=dispatcher,
        turns=turns,
        lanes=lanes,
        events=events,
        heartbeat_ms=config.lanes.heartbeat_ms,
    )
    servicer = ProcessServicer(
        events=events,
        inbox=inbox,
        processes=processes,
        dispatcher=dispatcher,
        streams=streams,
        cascade=SessionCascade(store, lanes, processes, dispatcher.kick, dispatcher.cancel_turn),
        chat_feed=chat_feed,
        store=store,
        memory=memory,
    )
    channels = Channels(config)
    sessions_internal = session_internal_pb2_grpc.SessionInternalServiceStub(
        channels.get("session_service")
    )
    rollup = RollupNotifier(sessions_internal)
    lanes.on_status_change = rollup.note
    inbox.on_pending = rollup.note  # a new pending message is session activity too
    tools = ProcessTools(
        processes,
        inbox,
        recipe_pb2_grpc.RecipeServiceStub(channels.get("recipe_service")),
        recipe_internal_pb2_grpc.RecipeInternalServiceStub(channels.get("recipe_service")),
        lambda: dispatcher.engines() - HUB_ONLY_ENGINES,  # what a process may spawn
    )
    # The hub (Eddie): observations of workers in other projects and the hub tools.
    sessions = session_pb2_grpc.SessionServiceStub(channels.get("session_service"))
    observations = Observations(db, events, inbox, sessions_internal)
    await observations.mark_observed()
    turns.observations = observations

    async def publish(session_ids: list[str], type_: str, data: dict[str, Any]) -> None:
        for session_id in session_ids:
            events.submit(session_id, NOTICE, {"type": type_, "data": data})
            await events.flush(session_id)

    tools.hub = HubTools(db, processes, inbox, observations, sessions, sessions_internal, publish)
    tools.work = work = user_work(db, sessions, clock, config)
    tools.talk = HubTalk(db, tools.hub)
    tools.plans = servicer.plans = Plans(db, inbox, observations, publish)
    servicer.connection_profiles = ConnectionProfiles(db)
    owners = CachedOwners(
        _session_owner(store, session_pb2_grpc.SessionServiceStub(channels.get("session_service"))),
        _process_session(store),
    )
    host = GrpcHost(
        [
            SERVICE_NAME,
            INTERNAL_SERVICE_NAME,
            WORKER_SERVICE_NAME,
            TOOL_HOST_NAME,
            WORK_SERVICE_NAME,
        ],
        config,
        owners=owners,
    )
    process_pb2_grpc.add_ProcessServiceServicer_to_server(servicer, host.server)
    process_internal_pb2_grpc.add_ProcessInternalServiceServicer_to_server(servicer, host.server)
    worker_pb2_grpc.add_WorkerServiceServicer_to_server(servicer, host.server)
    tool_pb2_grpc.add_ToolHostServiceServicer_to_server(ProcessToolHost(tools), host.server)
    serve_user_work(work, host.server)
    bound = host.bind(config.grpc_host, config.port("process_service") if port is None else port)
    background = Background(dispatcher, streams, events, chat_feed, rollup, channels)

    async def close() -> None:
        # After the server stopped (no stream left): the background work, then its clients.
        await background.stop()
        await work.close()  # the sandboxed jobs still running
        await channels.close()
        await hot.close()
        await client.close()

    host.on_stop(close)
    return host, bound, background


def _session_owner(
    store: ProcessStore, sessions: session_pb2_grpc.SessionServiceAsyncStub
) -> SessionLookup:
    """session_service keeps the sessions; asked once per session (vance/owners.py caches).
    Its GetSession wants the tenant, which any process of the session names."""

    async def owner(session_id: str) -> tuple[str, str] | None:
        doc = await store.processes.find_one({"session_id": session_id}, {"tenant_id": 1})
        if doc is None:
            return None
        tenant = str(doc["tenant_id"])
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
        doc = await store.get(process_id)
        return (str(doc["tenant_id"]), str(doc["session_id"])) if doc else None

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
    async with asyncio.TaskGroup() as tg:
        tg.create_task(background.run(config.address("process_service")))
        try:
            await serve_until_signal(host, "process_service")
        finally:
            await background.stop()


def main() -> None:
    run_main(serve)
