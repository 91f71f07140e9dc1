"""Typed configuration, loaded once: defaults, then an optional YAML file, then the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

# Environment variable -> dotted configuration key. One table, so the README and this code agree.
ENV_KEYS: dict[str, str] = {
    "MONGODB_URI": "store.mongodb_uri",
    "VANCE_DB_NAME": "store.db_name",
    "VANCE_DATA_DIR": "data_dir",
    "VANCE_STORE_PORT": "store.port",
    "VANCE_STORE_WIRE": "store.wire",
    "VANCE_STORE_WIRE_CONNECTIONS": "store.wire_connections",
    "VANCE_GRPC_HOST": "grpc_host",
    "VANCE_GRPC_PORT_BASE": "grpc_port_base",
    "VANCE_SESSION_SERVICE_ADDR": "addresses.session_service",
    "VANCE_PROCESS_SERVICE_ADDR": "addresses.process_service",
    "VANCE_TOOL_SERVICE_ADDR": "addresses.tool_service",
    "VANCE_RECIPE_SERVICE_ADDR": "addresses.recipe_service",
    "VANCE_GATEWAY_HOST": "gateway.host",
    "VANCE_GATEWAY_PORT": "gateway.port",
    "VANCE_JWT_SECRET": "gateway.jwt_secret",
    "VANCE_SERVICE_SECRET": "auth.service_secret",
    "VANCE_METRICS_PORT": "observability.metrics_port",
    "VANCE_OTLP_ENDPOINT": "observability.otlp_endpoint",
    "VANCE_TRACE_DIR": "observability.trace_dir",
    "VANCE_TOKEN_TTL_S": "gateway.token_ttl_s",
    "VANCE_ENGINE_WORKERS": "worker.count",
    "VANCE_WORKER_SLOTS": "worker.slots",
    "VANCE_WORKER_MAX_LOOP_LAG_MS": "worker.max_loop_lag_ms",
    "VANCE_WORKER_MAX_RSS_MB": "worker.max_rss_mb",
    "VANCE_WORKER_ID": "worker.worker_id",
    "VANCE_LEASE_MS": "lanes.lease_ms",
    "VANCE_MAX_TURN_ATTEMPTS": "lanes.max_attempts",
    "VANCE_LLM_MODEL": "llm.model",
    "VANCE_LLM_API_BASE": "llm.api_base",
    "VANCE_LLM_API_KEY": "llm.api_key",
    "VANCE_LLM_CLIENT": "llm.client",
    "VANCE_LOG_LEVEL": "logging.level",
    "VANCE_LOG_JSON": "logging.json_format",
    "VANCE_SEED_DEFAULTS": "seed_defaults",
    "VANCE_EVENT_POLL_MS": "events.poll_ms",
    "VANCE_SWEEP_INTERVAL_MS": "lifecycle.sweep_interval_ms",
    "VANCE_BIND_STALE_AFTER_MS": "lifecycle.bind_stale_after_ms",
    "VANCE_BIND_LEASE_MS": "gateway.bind_lease_ms",
    "VANCE_GATEWAY_TOOL_HOST_PORT": "gateway.tool_host_port",
    "VANCE_GATEWAY_TOOL_HOST_ADDRESS": "gateway.tool_host_address",
    "VANCE_STALE_BIND_INITIAL_DELAY_MS": "lifecycle.stale_bind_initial_delay_ms",
    "VANCE_AUTO_RESTART_FORCED": "lifecycle.auto_restart_forced.enabled",
    "VANCE_ENGINE_CATALOG": "recipes.catalog_path",
    "VANCE_SELECTOR_TIMEOUT_MS": "recipes.selector_timeout_ms",
    "VANCE_MCP_SECRETS_DIR": "mcp.secrets_dir",
    "VANCE_SEED_DEV_ADMIN": "seed_dev_admin",
    "VANCE_WORKER_HEALTH_PORT": "worker.health_port",
    "VANCE_RESTART_BACKOFF_MS": "supervisor.restart_backoff_ms",
    "VANCE_CRASH_LOOP_LIMIT": "supervisor.crash_loop_limit",
    "VANCE_CRASH_LOOP_WINDOW_S": "supervisor.crash_loop_window_s",
    "VANCE_PROCESS_SERVICE_REPLICAS": "replicas.process_service",
    "VANCE_SESSION_SERVICE_REPLICAS": "replicas.session_service",
    "VANCE_GATEWAY_REPLICAS": "replicas.gateway",
    "VANCE_REPLICA_PORT_STRIDE": "replicas.port_stride",
    "VANCE_REPLICA_INDEX": "replicas.index",
    "VANCE_EVENT_GAP_FILL_MS": "events.gap_fill_ms",
    "VANCE_RECONNECT_GRACE_MS": "lifecycle.reconnect_grace_ms",
    "VANCE_REPLICA_LEASE_MS": "lifecycle.replica_lease_ms",
    "VANCE_CALL_TIMEOUT_S": "calls.timeout_s",
    "VANCE_BATCH_CALL_TIMEOUT_S": "calls.batch_timeout_s",
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StoreConfig(_Frozen):
    mongodb_uri: str = ""  # empty: the embedded FerretDB
    db_name: str = "vance"
    port: int = 27017  # the embedded store's port
    # The turn path's commands over the wire directly (vance/store_wire.py); off: PyMongo.
    wire: bool = True
    # At most this many of them at once per process, each on a connection of its own; more
    # wait in the process for one to be free. The embedded store runs one write at a time, so
    # a burst of 60 commands opened 60 connections that only queued in the store and then
    # stayed open, each with its goroutine, buffers and SQLite connection: at real pace the
    # store's part of the memory per turn in flight (issue 28, docs/operations.md "Memory per
    # turn in flight"). A few keep the store busy; MongoDB serves 8 at a time at ~10,000
    # commands a second, far beyond a replica's turn rate.
    wire_connections: int = Field(default=8, ge=1, le=256)


class Addresses(_Frozen):
    """Explicit service addresses; empty means `grpc_host:grpc_port_base+offset`."""

    session_service: str = ""
    process_service: str = ""
    tool_service: str = ""
    recipe_service: str = ""


class GatewayConfig(_Frozen):
    host: str = "127.0.0.1"
    port: int = 8080
    jwt_secret: str = ""  # empty: generated once and kept in the data directory
    token_ttl_s: int = Field(default=12 * 3600, ge=60)
    ping_interval_s: int = 30
    # How long a connection's bind is trusted after a heartbeat before the next frame asks
    # session_service again (gateway/binding.py); 0 asks before every frame. A takeover, close
    # or archive of a session does not wait this out: it answers once the replica's bind round
    # has dropped the trust (gateway/bind_rounds.py), within a fraction of a second. Long, so
    # that a busy session's document is written about once per lease, not once per frame.
    bind_lease_ms: int = Field(default=30_000, ge=0, le=60_000)
    # The gRPC ToolHost through which tool_service reaches the client tools of this replica's
    # sockets (gateway/client_tools.py): its port on `grpc_host` (0: any free port), and the
    # address tool_service should use (empty: `grpc_host:<port>`; set it behind NAT or in
    # containers).
    tool_host_port: int = Field(default=0, ge=0, le=65_535)
    tool_host_address: str = ""


class McpConfig(_Frozen):
    """MCP tool servers (tool_service/mcp_hub.py, docs/clients.md "MCP tool servers")."""

    # Where tool_service reads the secrets that `${secret:NAME}` in a server's headers names:
    # one file per secret, named NAME. Empty: `<data_dir>/secrets`.
    secrets_dir: str = ""


class AuthConfig(_Frozen):
    """gRPC credentials (vance/auth.py, docs/operations.md "gRPC credentials")."""

    service_secret: str = ""  # empty: generated once and kept in the data directory
    service_token_ttl_s: int = 3600  # a process renews its own token at half this
    cache_s: float = 30.0  # how long a verified token is remembered
    # How often each service re-reads revoked login tokens (vance/revocations.py): about how
    # long a revoked token still works on a gRPC service.
    revocation_refresh_s: float = 2.0


class ObservabilityConfig(_Frozen):
    """Metrics, traces (vance/observability/, docs/operations.md "Observability")."""

    # The /metrics port of this process; 0: off. With several processes on one host, each
    # gets its own port: see metrics_port_for().
    metrics_port: int = 0
    otlp_endpoint: str = ""  # e.g. http://collector:4318/v1/traces; empty: no OTLP export
    trace_dir: str = ""  # spans as JSON lines in <dir>/<service>-<pid>.jsonl (tests, debugging)


class WorkerConfig(_Frozen):
    count: int = 2
    # Turns one worker runs at once. A turn mostly waits on its model (a socket, a few KB), so
    # this is high; what bounds a worker is its event loop and memory (engine_worker/admission.py).
    slots: int = 256
    max_loop_lag_ms: float = 100.0  # above it (smoothed) the worker takes no more turns
    max_rss_mb: float = 2048.0  # likewise for memory; 0: not watched
    worker_id: str = ""
    drain_timeout_s: float = 30.0
    reconnect_backoff_s: float = 0.5
    # gRPC health of this worker (engine_worker/health.py) on this port; 0: off (`make run`).
    health_port: int = 0


class LanesConfig(_Frozen):
    lease_ms: int = 15_000
    heartbeat_ms: int = 3_000
    max_attempts: int = 3
    retry_backoff_ms: int = 200
    # The recovery sweep reads every live process: rare, since local losses are seen at once.
    scan_interval_ms: int = 30_000


class EventsConfig(_Frozen):
    chunk_replay_window_s: int = 600
    poll_ms: int = 0  # >0: an idle subscriber also reads the store (not needed with replicas)
    # With several process_service replicas the gateway follows a session on each of them and
    # merges by seq (gateway/session_events.py): a seq missing for this long is read from the
    # store (it is durable by then: a later seq is only taken after every earlier one).
    gap_fill_ms: int = Field(default=100, ge=0, le=10_000)


class ReplicasConfig(_Frozen):
    """How many replicas `vance run` starts of the services that can have several
    (docs/operations.md "Replicas"). Replica i (0-based) of a gRPC service listens on the
    service's port + i * port_stride; gateway replicas on consecutive ports from gateway.port."""

    process_service: int = Field(default=1, ge=1, le=9)
    session_service: int = Field(default=1, ge=1, le=9)
    gateway: int = Field(default=1, ge=1, le=9)
    port_stride: int = Field(default=100, ge=4)
    index: int = Field(default=0, ge=0)  # which replica this process is (set by the supervisor)


class AutoRestartConfig(_Frozen):
    """Seed 002 §10.1: resume FORCED-suspended sessions on boot (off by default)."""

    enabled: bool = False
    max_concurrent: int = 3
    delay_between_ms: int = 500


class LifecycleConfig(_Frozen):
    """Session lifecycle (seed 002 §7-§10). Tenant settings may override the floor and the
    abandoned-detection values; the rest are deployment constants."""

    sweep_interval_ms: int = 60_000
    bind_stale_after_ms: int = 120_000
    # A gateway replica that stops or dies leaves its sessions running: they are suspended
    # FORCED only when no client has bound them again this long after its lease ended
    # (session_service/lifecycle/replica_takeover.py).
    reconnect_grace_ms: int = Field(default=30_000, ge=0)
    # A gateway replica's lease on its sessions, renewed every third of it (gateway/replica.py).
    replica_lease_ms: int = Field(default=30_000, ge=1_000)
    # A replica clears no stale binds during its first this-many ms: clients of a restarted
    # cluster get that long to reconnect and reclaim their binds (docs/architecture.md).
    stale_bind_initial_delay_ms: int = 120_000
    idle_prefilter_ms: int = 30_000  # sessions active this recently are not even looked at
    forced_floor_ms: int = 7 * 24 * 3600 * 1000
    abandoned_detection: bool = True
    abandoned_min_qa_pairs: int = 1
    auto_restart_forced: AutoRestartConfig = AutoRestartConfig()


class ModelLimits(_Frozen):
    """A provider's limits for one model, kept by each worker (vance/llm_limits.py)."""

    concurrency: int = 0  # calls in flight at once; 0: no limit
    tokens_per_minute: int = 0  # prompt + completion tokens (estimated up front); 0: no limit


class LlmConfig(_Frozen):
    model: str = ""  # one model for every tier, e.g. openai/gpt-4o-mini
    api_base: str = ""
    api_key: str = ""
    # "auto": the openai SDK for openai/... models (OpenAI or any compatible api_base), litellm
    # for the rest; "litellm": litellm for every call (vance/llm.py).
    client: Literal["auto", "litellm"] = "auto"
    timeout_s: float = 120.0
    # Connections the direct client keeps to the provider: as many as turns may be waiting on
    # it (a lower bound, as aiohttp's default of 100 was, queues the rest of a worker's turns
    # inside the client: vance/llm_pool.py).
    max_connections: int = 1024
    # A call the provider refuses as overloaded (429, 502, 503, 504) before anything streamed is
    # tried again this often, after its Retry-After or an exponential backoff with jitter.
    retries: int = 4
    retry_base_ms: int = 500
    retry_max_ms: int = 30_000
    # By provider model ("openai/gpt-4o-mini"): a burst above these waits instead of failing.
    limits: dict[str, ModelLimits] = Field(default_factory=dict)
    tiers: dict[str, str] = Field(
        default_factory=lambda: {"default:fast": "", "default:analyze": "", "default:chat": ""}
    )


class RecipesConfig(_Frozen):
    # The engine catalog file the reload endpoint re-reads; empty: the bundled
    # recipe_service/catalog/engines.yaml.
    catalog_path: str = ""
    # The recipe selector's one model call is cut off after this (seed 003: ~5 s for an
    # existing recipe), not after the general `llm.timeout_s`: a NONE then says so.
    selector_timeout_ms: int = Field(default=5_000, ge=100, le=600_000)


class SupervisorConfig(_Frozen):
    """`vance run`'s restart policy (vance/supervisor.py, docs/operations.md)."""

    restart_backoff_ms: int = 100  # the first restart's delay; doubled per recent crash
    restart_backoff_max_ms: int = 10_000
    crash_loop_limit: int = 5  # this many exits within the window: no more restarts
    crash_loop_window_s: float = 60.0


class CallsConfig(_Frozen):
    """Deadlines of the calls between our services (docs/operations.md, "Call deadlines"): a
    peer that does not answer fails the call with DEADLINE_EXCEEDED instead of hanging its
    caller. Streams have none (they last as long as their connection)."""

    # Every unary call that sets no deadline of its own (vance/authclient.py): far above any
    # answer under load, which takes milliseconds to a few seconds.
    timeout_s: float = Field(default=30.0, gt=0, le=3_600)
    # The sweeps' batched cascades (up to 10,000 sessions in one call, vance/clients/process.py).
    batch_timeout_s: float = Field(default=120.0, gt=0, le=3_600)


class LoggingConfig(_Frozen):
    level: str = "INFO"
    json_format: bool = False


class Config(_Frozen):
    data_dir: str = "./.vance"
    grpc_host: str = "127.0.0.1"
    grpc_port_base: int = 50051
    seed_defaults: bool = True
    # The `dev`/`dev` tenant admin (session_service/registry/seed.py), seeded only with seed_defaults.
    seed_dev_admin: bool = True
    store: StoreConfig = StoreConfig()
    addresses: Addresses = Addresses()
    gateway: GatewayConfig = GatewayConfig()
    auth: AuthConfig = AuthConfig()
    observability: ObservabilityConfig = ObservabilityConfig()
    worker: WorkerConfig = WorkerConfig()
    lanes: LanesConfig = LanesConfig()
    events: EventsConfig = EventsConfig()
    lifecycle: LifecycleConfig = LifecycleConfig()
    llm: LlmConfig = LlmConfig()
    recipes: RecipesConfig = RecipesConfig()
    logging: LoggingConfig = LoggingConfig()
    mcp: McpConfig = McpConfig()
    supervisor: SupervisorConfig = SupervisorConfig()
    replicas: ReplicasConfig = ReplicasConfig()
    calls: CallsConfig = CallsConfig()

    def address(self, service: str) -> str:
        """The address of the service's first replica (health probes, tests)."""
        return self.replica_addresses(service)[0]

    def replica_count(self, service: str) -> int:
        return int(getattr(self.replicas, service, 1))

    def replica_addresses(self, service: str) -> list[str]:
        """Every replica's address: the explicit list (comma-separated), else the ports."""
        explicit = str(getattr(self.addresses, service))
        if explicit:
            return [a.strip() for a in explicit.split(",") if a.strip()]
        stride = self.replicas.port_stride
        return [
            f"{self.grpc_host}:{self.port(service) + i * stride}"
            for i in range(self.replica_count(service))
        ]

    def grpc_target(self, service: str) -> str:
        """The channel target for all replicas: one address, or an `ipv4:` list that gRPC's
        round_robin spreads calls over (skipping a replica that is down). Host names are
        resolved by DNS instead (one name for all replicas: compose, Kubernetes)."""
        addresses = self.replica_addresses(service)
        if len(addresses) > 1 and all(_ipv4_host(a) for a in addresses):
            return "ipv4:" + ",".join(addresses)
        return addresses[0]

    def listen_port(self, service: str) -> int:
        """The port this replica of a gRPC service listens on."""
        return self.port(service) + self.replicas.index * self.replicas.port_stride

    def port(self, service: str) -> int:
        return self.grpc_port_base + SERVICE_PORT_OFFSETS[service]

    @property
    def embedded_store(self) -> bool:
        return not self.store.mongodb_uri

    @property
    def mongodb_uri(self) -> str:
        return self.store.mongodb_uri or f"mongodb://127.0.0.1:{self.store.port}/"


SERVICE_PORT_OFFSETS = {
    "session_service": 0,
    "process_service": 1,
    "tool_service": 2,
    "recipe_service": 3,
}


def _ipv4_host(address: str) -> bool:
    parts = address.rsplit(":", 1)[0].split(".")
    return len(parts) == 4 and all(p.isdigit() for p in parts)


class ConfigError(ValueError):
    pass


def _set_dotted(tree: dict[str, Any], key: str, value: Any) -> None:
    node = tree
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def load_config(
    path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Config:
    """Builds the configuration once. A bad key or value fails fast and names the key."""
    env = os.environ if env is None else env
    tree: dict[str, Any] = {}
    path = path or env.get("VANCE_CONFIG")
    if path:
        loaded = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: the top level must be a mapping")
        tree = loaded
    for var, key in ENV_KEYS.items():
        if var in env and env[var] != "":
            _set_dotted(tree, key, env[var])
    try:
        return Config.model_validate(tree)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"bad configuration key '{where}': {first['msg']}") from exc
