"""Whose a session is, for vance/policy.py: looked up once per session and process, then cached
(a session's tenant and owner and a process's session are fixed at creation)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

_MAX = 50_000

# session_id -> (tenant_id, owner), or None when there is no such session
SessionLookup = Callable[[str], Awaitable[tuple[str, str] | None]]
# process_id -> (tenant_id, session_id) or None
ProcessLookup = Callable[[str], Awaitable[tuple[str, str] | None]]


async def _no_processes(process_id: str) -> tuple[str, str] | None:
    return None


class CachedOwners:
    def __init__(self, sessions: SessionLookup, processes: ProcessLookup = _no_processes) -> None:
        self._sessions = sessions
        self._processes = processes
        self._session_cache: dict[str, tuple[str, str]] = {}
        self._process_cache: dict[str, tuple[str, str]] = {}

    async def session_owner(self, session_id: str) -> tuple[str, str] | None:
        found = self._session_cache.get(session_id)
        if found is None:
            found = await self._sessions(session_id) if session_id else None
            if found is None:
                return None  # not cached: it may exist later
            _put(self._session_cache, session_id, found)
        return found

    async def process_session(self, process_id: str) -> tuple[str, str] | None:
        found = self._process_cache.get(process_id)
        if found is None:
            found = await self._processes(process_id) if process_id else None
            if found is None:
                return None
            _put(self._process_cache, process_id, found)
        return found

    def forget(self, session_ids: list[str], process_ids: list[str]) -> None:
        """Sessions that went (suspended, closed, deleted) need not be held: a later call
        looks them up again."""
        for sid in session_ids:
            self._session_cache.pop(sid, None)
        for pid in process_ids:
            self._process_cache.pop(pid, None)


def _put(cache: dict[str, Any], key: str, value: Any) -> None:
    if len(cache) >= _MAX:
        cache.clear()
    cache[key] = value
