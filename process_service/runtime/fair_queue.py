"""The turns of one engine waiting for a worker slot, served fairly.

A FIFO would let one tenant's burst (a thousand sessions kicked at once, a fan-out of workers)
hold every slot while another tenant's chat waits behind all of it. Here the queue is two
levels of round-robin: tenants take turns, and within a tenant its sessions take turns; a
session's own processes keep their order. Each process is queued at most once (the
dispatcher's `_queued` set), so a session with many waiting processes still gets one slot per
round of its tenant, and a tenant with many sessions one slot per round of all tenants.
Every operation is O(1) (dict order stands in for the rotation)."""

from __future__ import annotations

from collections import deque


class FairQueue:
    def __init__(self) -> None:
        # tenant -> session -> processes; dict order is the order of service (the next tenant
        # first, and within it the next session first).
        self._tenants: dict[str, dict[str, deque[str]]] = {}
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def push(self, process_id: str, tenant: str, session: str) -> None:
        sessions = self._tenants.setdefault(tenant, {})
        sessions.setdefault(session, deque()).append(process_id)
        self._len += 1

    def peek(self) -> str | None:
        """The process served next, without taking it."""
        for sessions in self._tenants.values():
            for queue in sessions.values():
                return queue[0]
        return None

    def pop(self) -> str:
        """Takes the next process; its session and its tenant move to the back."""
        tenant, sessions = next(iter(self._tenants.items()))
        session, queue = next(iter(sessions.items()))
        pid = queue.popleft()
        self._len -= 1
        del sessions[session]
        if queue:
            sessions[session] = queue  # to the back of its tenant's sessions
        del self._tenants[tenant]
        if sessions:
            self._tenants[tenant] = sessions  # to the back of the tenants
        return pid
