"""gRPC channels to the other services, created once per process and shared."""

from __future__ import annotations

import grpc

from vance.config import Config

_OPTIONS = [
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
]


class Channels:
    """Lazily opened channels, one per service address."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._channels: dict[str, grpc.aio.Channel] = {}

    def get(self, service: str) -> grpc.aio.Channel:
        channel = self._channels.get(service)
        if channel is None:
            channel = grpc.aio.insecure_channel(self._config.address(service), options=_OPTIONS)
            self._channels[service] = channel
        return channel

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
