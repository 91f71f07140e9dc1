"""gRPC channels to the other services, created once per process and shared."""

from __future__ import annotations

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
