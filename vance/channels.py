"""gRPC channels to the other services, created once per process and shared."""

from __future__ import annotations

import json

import grpc

from vance.auth import ServiceCredential
from vance.authclient import credential_interceptors
from vance.config import Config
from vance.logsetup import service_name

_OPTIONS = [
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    # A peer that restarts (vance/supervisor.py restarts a crashed service at once) is found
    # again within a second of serving: gRPC's default reconnect backoff grows from 1 s by 1.6x
    # to 120 s, so a channel that failed through a 4 s restart would wait seconds more.
    # Connecting to a peer in the same cluster is cheap, so try often.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1_000),
    # A turn's tool calls wait for a restarting tool_service instead of failing at once: each
    # failure costs the turn an attempt (lanes.max_attempts), and three in the second before
    # tool_service serves again closed the chat process STALE (tests/test_self_healing.py).
    # Waiting only delays the call until the channel is ready; the worker's heartbeats keep the
    # turn's lease meanwhile. Other services fail fast as before (their callers retry).
    (
        "grpc.service_config",
        json.dumps(
            {
                "methodConfig": [
                    {
                        "name": [
                            {"service": "vance.internal.v1.ToolService", "method": m}
                            for m in ("ResolvePool", "InvokeTool", "ListTools")
                        ],
                        "waitForReady": True,
                    }
                ]
            }
        ),
    ),
]


class Channels:
    """Lazily opened channels, one per service address. Every call carries credentials: the
    user's token when made on behalf of one, else this process's service token
    (vance/authclient.py); every unary call a deadline (its own, else `calls.timeout_s`)."""

    def __init__(self, config: Config, *, name: str = "") -> None:
        self._config = config
        self._channels: dict[str, grpc.aio.Channel] = {}
        self.credential = ServiceCredential.from_config(config, name or service_name())

    @property
    def config(self) -> Config:
        return self._config

    def get(self, service: str) -> grpc.aio.Channel:
        """The service's channel: with several replicas, calls are spread over those that
        serve (round_robin; a replica that is down is skipped)."""
        channel = self._channels.get(service)
        if channel is None:
            target = self._config.grpc_target(service)
            options = list(_OPTIONS)
            if target.startswith("ipv4:"):
                options.append(("grpc.lb_policy_name", "round_robin"))
            channel = self._open(target, options)
            self._channels[service] = channel
        return channel

    def replicas(self, service: str) -> list[grpc.aio.Channel]:
        """One channel per replica of the service (the gateway follows a session's events on
        each process_service replica; a worker serves each). One replica: `get`'s channel."""
        addresses = self._config.replica_addresses(service)
        if len(addresses) == 1:
            return [self.get(service)]
        out = []
        for i, address in enumerate(addresses):
            key = f"{service}#{i}"
            channel = self._channels.get(key)
            if channel is None:
                channel = self._channels[key] = self._open(address, list(_OPTIONS))
            out.append(channel)
        return out

    def _open(self, target: str, options: list[tuple[str, object]]) -> grpc.aio.Channel:
        interceptors = credential_interceptors(
            self.credential, timeout_s=self._config.calls.timeout_s
        )
        return grpc.aio.insecure_channel(target, options=options, interceptors=interceptors)

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
