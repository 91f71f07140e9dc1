"""session_service server: wiring and lifecycle."""

from __future__ import annotations

from session_service.access.token_service import TokenRevocationStore, TokenServicer
from session_service.hub.home import Home
from session_service.hub.user_inbox import UserInbox
from session_service.lifecycle.engine_rollup import Rollup
from session_service.lifecycle.hooks import Hooks
from session_service.lifecycle.lifecycle_wiring import (
    build_lifecycle,
    release_lifecycle,
    start_lifecycle_tasks,
)
from session_service.lifecycle.replica_takeover import Ownership, take_over_forever
from session_service.registry.seed import seed_defaults
from session_service.registry.sessions import Sessions
from session_service.search.search_wiring import build_search
from session_service.service import SessionServicer
from session_service.settings.engine_settings import EngineSettings, default_chat_engine
from session_service.settings.settings_docs import SettingsDocs
from session_service.store.session_store import SessionStore
from vance.channels import Channels
from vance.clients.process import ProcessClient
from vance.clients.recipe import RecipeClient
from vance.clock import Clock, SystemClock
from vance.config import Config, load_config
from vance.heap import settle_heap, trim_in
from vance.internal.v1 import (
    session_internal_pb2,
    session_internal_pb2_grpc,
    tokens_internal_pb2,
    tokens_internal_pb2_grpc,
)
from vance.logsetup import setup_logging
from vance.memdebug import interval_from_env, report_growth
from vance.observability.setup import start_observability
from vance.owners import CachedOwners, SessionLookup
from vance.server import GrpcHost, run_main, serve_until_signal
from vance.store import connect
from vance.v1 import session_pb2, session_pb2_grpc, tokens_pb2, tokens_pb2_grpc

SERVICE_NAME = session_pb2.DESCRIPTOR.services_by_name["SessionService"].full_name
TOKEN_SERVICE_NAME = tokens_pb2.DESCRIPTOR.services_by_name["TokenService"].full_name
INTERNAL_SERVICE_NAME = session_internal_pb2.DESCRIPTOR.services_by_name[
    "SessionInternalService"
].full_name
TOKEN_INTERNAL_SERVICE_NAME = tokens_internal_pb2.DESCRIPTOR.services_by_name[
    "TokenInternalService"
].full_name


def _session_owner(store: SessionStore) -> SessionLookup:
    async def owner(session_id: str) -> tuple[str, str] | None:
        session = await store.session(session_id)
        return (session.tenant_id, session.owner_user_id) if session else None

    return owner


async def create_server(
    config: Config,
    *,
    port: int | None = None,
    clock: Clock | None = None,
    hooks: Hooks | None = None,
) -> tuple[GrpcHost, int]:
    client, db = connect(config)
    channels = Channels(config)
    clock = clock or SystemClock()
    store = SessionStore(db)
    processes = ProcessClient(
        channels.get("process_service"), batch_timeout_s=config.calls.batch_timeout_s
    )
    recipes = RecipeClient(channels.get("recipe_service"))
    settings_docs = SettingsDocs(db["settings"], generation=db["settings_generation"])
    engine_settings = EngineSettings(db, settings_docs)
    search = build_search(db, store, clock, processes, config.llm)
    hooks = hooks or Hooks()
    hooks.register(search.hook)
    lifecycle = build_lifecycle(
        db,
        store,
        clock,
        processes,
        recipes,
        config.lifecycle,
        hooks=hooks,
        settings_docs=settings_docs,
    )
    sessions = Sessions(
        store,
        clock,
        processes,
        recipes,
        before_insert=lifecycle.transitions.index_new,
        default_chat_engine=default_chat_engine(engine_settings),
    )
    if config.seed_defaults:
        await seed_defaults(sessions, dev_admin=config.seed_dev_admin)
    home = Home(store, sessions, lifecycle.binding, clock)
    await home.ensure_all()  # at boot: every user's hub (session_service/hub/home.py)
    inbox = UserInbox(db, clock, home, processes.stub, processes.internal)
    # One replica writes every revocation itself: it answers the refreshes from memory.
    revocations = TokenRevocationStore(
        db, clock, sole_writer=config.replica_count("session_service") <= 1
    )
    host = GrpcHost(
        [SERVICE_NAME, INTERNAL_SERVICE_NAME, TOKEN_SERVICE_NAME, TOKEN_INTERNAL_SERVICE_NAME],
        config,
        owners=CachedOwners(_session_owner(store)),
        revocations=revocations.changed_since,  # its own store, not a call to itself
    )
    servicer = SessionServicer(sessions, lifecycle, search, home, inbox)
    servicer.engine_settings = engine_settings
    servicer.rollup = Rollup(lifecycle.transitions, store, clock)
    servicer.ownership = Ownership(
        db,
        lifecycle.transitions,
        lifecycle.sweepers,
        clock,
        config.lifecycle,
        lease_ms=config.lifecycle.replica_lease_ms,
    )
    hooks.register(servicer.ownership)
    session_pb2_grpc.add_SessionServiceServicer_to_server(servicer, host.server)
    session_internal_pb2_grpc.add_SessionInternalServiceServicer_to_server(servicer, host.server)
    tokens = TokenServicer(revocations)
    tokens_pb2_grpc.add_TokenServiceServicer_to_server(tokens, host.server)
    tokens_internal_pb2_grpc.add_TokenInternalServiceServicer_to_server(tokens, host.server)
    bound = host.bind(
        config.grpc_host, config.listen_port("session_service") if port is None else port
    )
    start_lifecycle_tasks(lifecycle, clock, host.background)
    host.background.start("settings-follow", settings_docs.follow_store())
    host.background.start(
        "replica-takeover",
        take_over_forever(servicer.ownership, config.lifecycle.sweep_interval_ms / 1000),
    )
    search.start(host.background)
    trim_in(host.background)  # freed heap back to the OS (vance/heap.py)
    memdebug_s = interval_from_env()  # VANCE_DEBUG_TRACEMALLOC (vance/memdebug.py)
    if memdebug_s:
        host.background.start("memdebug", report_growth(memdebug_s))

    async def close() -> None:
        # The host stopped its background group before its cleanups run.
        await release_lifecycle(lifecycle)
        await channels.close()
        await client.close()

    host.on_stop(close)
    return host, bound


async def serve() -> None:
    config = load_config()
    setup_logging(config.logging, "session_service")
    start_observability(config, "session_service")
    host, _ = await create_server(config)
    settle_heap()
    await serve_until_signal(host, "session_service")


def main() -> None:
    run_main(serve)
