"""Revoked login tokens, as every gRPC service sees them: a snapshot of session_service's record
(session_service/access/token_service.py) kept in memory and refreshed in the background.

The per-call check (`RevocationSnapshot.is_revoked`, the Verifier's hook in vance/auth.py) is one
dictionary lookup, so it also runs on a verified-token cache hit. A background task asks
TokenService.ListTokenRevocationsSince every `auth.revocation_refresh_s` for the records written
since its last read (session_service reads its own store instead), so a revoked token is refused
by every service within about that interval. If session_service cannot be reached, the last
snapshot stays in force (a token revoked meanwhile keeps working until it is reached again or the
token expires); docs/operations.md, "gRPC credentials".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import grpc

from vance.internal.v1 import tokens_internal_pb2 as tipb
from vance.internal.v1 import tokens_internal_pb2_grpc

logger = logging.getLogger(__name__)

# The records written since a moment, read from session_service (or its store).
Source = Callable[[int], Awaitable[tipb.ListTokenRevocationsSinceResponse]]

# Each read asks again for writes this much older than the previous read's time: a write that
# took its timestamp just before that read but landed just after is not missed. Records are
# whole per user, so reading one twice is harmless.
OVERLAP_MS = 10_000


class RevocationSnapshot:
    """user -> (tokens issued before this ms are revoked, single revoked token ids)."""

    def __init__(self) -> None:
        self._users: dict[tuple[str, str], tuple[int, frozenset[str]]] = {}

    def is_revoked(self, claims: Mapping[str, Any]) -> bool:
        # Same issue time as the gateway's Principal (gateway/auth.py): `iat_ms`, else `iat`.
        issued = claims.get("iat_ms")
        if not isinstance(issued, int):
            iat = claims.get("iat")
            issued = iat * 1000 if isinstance(iat, int) else 0
        return self.revoked(
            str(claims.get("tenant", "")), str(claims.get("sub", "")), claims.get("jti"), issued
        )

    def revoked(self, tenant: str, username: str, token_id: object, issued_at_ms: int) -> bool:
        """The one rule: the token's id is revoked, or it was issued before the user's cut."""
        entry = self._users.get((tenant, username))
        if entry is None:
            return False
        revoked_before_ms, token_ids = entry
        return token_id in token_ids or issued_at_ms < revoked_before_ms

    def put(self, tenant: str, username: str, revoked_before_ms: int, token_ids: list[str]) -> None:
        """One user's record as a write just returned it (the gateway's own revocations)."""
        if revoked_before_ms or token_ids:
            self._users[(tenant, username)] = (revoked_before_ms, frozenset(token_ids))
        else:
            self._users.pop((tenant, username), None)

    def apply(self, changed: tipb.ListTokenRevocationsSinceResponse) -> None:
        for user in changed.users:
            record = user.revocations
            self.put(
                user.tenant_id, user.username, record.revoked_before_ms, list(record.token_ids)
            )

    def __len__(self) -> int:
        return len(self._users)


def remote_source(channel: grpc.aio.Channel, timeout_s: float = 5.0) -> Source:
    """Reads from session_service over `channel` (which carries this process's service token:
    the method is for services only, vance/policy.py)."""
    stub = tokens_internal_pb2_grpc.TokenInternalServiceStub(channel)

    async def read(since_ms: int) -> tipb.ListTokenRevocationsSinceResponse:
        request = tipb.ListTokenRevocationsSinceRequest(since_ms=since_ms)
        response: tipb.ListTokenRevocationsSinceResponse = await stub.ListTokenRevocationsSince(
            request, timeout=timeout_s
        )
        return response

    return read


class RevocationWatch:
    """Keeps a snapshot fresh: one task, started and stopped with the server (vance/server.py)."""

    def __init__(self, source: Source, snapshot: RevocationSnapshot, interval_s: float) -> None:
        self._source = source
        self.snapshot = snapshot
        self._interval_s = interval_s
        self._since_ms = 0  # 0: the first read takes every record
        self._failing = False
        self._task: asyncio.Task[None] | None = None

    async def refresh(self) -> None:
        """One read; the snapshot is left as it was when session_service cannot answer."""
        try:
            changed = await self._source(self._since_ms)
        except (grpc.aio.AioRpcError, OSError) as exc:
            reason = exc.code().name if isinstance(exc, grpc.aio.AioRpcError) else str(exc)
            if not self._failing:  # once per outage, not every interval
                logger.warning("token revocations unreadable, keeping the last ones: %s", reason)
            self._failing = True
            return
        self.snapshot.apply(changed)
        self._since_ms = max(1, changed.as_of_ms - OVERLAP_MS)
        if self._failing:
            logger.info("token revocations readable again")
        self._failing = False

    async def _run(self) -> None:
        while True:
            try:
                await self.refresh()
            except Exception:
                logger.exception("token revocation refresh failed")
            await asyncio.sleep(self._interval_s)

    def start(self) -> None:
        # Held here and awaited in stop(): the task lives exactly as long as the server.
        self._task = asyncio.get_running_loop().create_task(self._run(), name="revocations")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
