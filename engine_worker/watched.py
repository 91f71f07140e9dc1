"""What a worker keeps between turns that another service owns (tool pools, engine settings):
used only while a watch stream to the owner stands and dropped at every change it reports.
Each owner reports on that stream its other replicas' changes too (within about a second, from
a counter they share in the store) and a moment it cannot tell, so what is held here is kept
until a change: nothing is asked again per second a chat runs (issue 28). Without the watch
every turn asks the owner, as before the cache existed."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterable, Callable, Hashable
from typing import Generic, TypeVar

import grpc

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

logger = logging.getLogger(__name__)

# Tool pools: tool_service reports a registration through any replica, a client's tools and
# an MCP server's or the MCP settings' changes (tool_service/registry.py, mcp_hub.py), so this
# bound only limits how long a pool lives without any change (a 2 s bound before made every
# chat ask tool_service again every few seconds of its turns).
TTL_S = 600.0
# Every process has its own settings entry, and session_service reports every settings write
# on the watch stream, another replica's within about a second, and drops everything when it
# cannot tell (session_service/settings/settings_docs.py): so an entry is kept until a change, and
# this
# bound only limits how long one lives without any (issue 28: a short bound made each chat ask
# session_service again every few seconds of its turns).
SETTINGS_TTL_S = 600.0
_MAX_ENTRIES = 4_096


class WatchedCache(Generic[K, V]):
    def __init__(self, ttl_s: float = TTL_S) -> None:
        self._ttl_s = ttl_s
        self._entries: dict[K, tuple[float, V]] = {}
        self.watching = False
        # Counts the changes reported: a value read from the owner while one arrived may be
        # older than it, and is not kept (`put`'s `since`).
        self.version = 0
        # One read from the owner at a time while watching: the turns that find an entry
        # missing while it is being read wait for that read instead of each asking again.
        self.reading = asyncio.Lock()

    def get(self, key: K) -> V | None:
        found = self._entries.get(key)
        if not self.watching or found is None or found[0] < time.monotonic():
            return None
        return found[1]

    def put(self, key: K, value: V, since: int | None = None) -> None:
        """Keeps `value`, unless a change was reported after `since` (the `version` when the
        read of it began)."""
        if not self.watching or (since is not None and since != self.version):
            return
        now = time.monotonic()
        if len(self._entries) >= _MAX_ENTRIES:
            self._entries = {k: v for k, v in self._entries.items() if v[0] >= now}
            if len(self._entries) >= _MAX_ENTRIES:
                self._entries.clear()
        self._entries[key] = (now + self._ttl_s, value)

    def drop(self, key: K) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()
        self.version += 1


async def keep_watching(
    what: str,
    cache: WatchedCache[K, V],
    watch: Callable[[], AsyncIterable[object]],
    backoff_s: float,
) -> None:
    """Until cancelled: follows the owner's change stream, clearing the cache at each change;
    while the stream is down the cache is off, and it is asked again after `backoff_s`."""
    while True:
        try:
            async for _ in watch():
                cache.clear()
                cache.watching = True
        except grpc.aio.AioRpcError as exc:
            logger.debug("%s watch lost: %s", what, exc.code().name)
        cache.watching = False
        cache.clear()
        await asyncio.sleep(backoff_s)
