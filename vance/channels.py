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
    (vance/authclient.py)."""

    def __init__(self, config: Config, *, name: str = "") -> None:
        self._config = config
        self._channels: dict[str, grpc.aio.Channel] = {}
        self.credential = ServiceCredential.from_config(config, name or service_name())

    def get(self, service: str) -> grpc.aio.Channel:
        channel = self._channels.get(service)
        if channel is None:
            channel = grpc.aio.insecure_channel(
                self._config.address(service),
                options=_OPTIONS,
                interceptors=credential_interceptors(self.credential),
            )
            self._channels[service] = channel
        return channel

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
